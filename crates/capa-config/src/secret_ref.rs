//! `${secret:NAME}` placeholders in a server's `env` and `headers` values.
//!
//! The file only ever names a secret; the value comes from the OS keychain when the hub starts the
//! server, so no secret is written into configuration.

use std::collections::BTreeSet;

const OPEN: &str = "${secret:";

/// A piece of a value: literal text or a reference to a secret.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Segment<'a> {
    Text(&'a str),
    Secret(&'a str),
}

/// Why a placeholder is malformed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct PlaceholderError(pub String);

/// Splits a value into text and secret references.
pub fn segments(value: &str) -> Result<Vec<Segment<'_>>, PlaceholderError> {
    let mut out = Vec::new();
    let mut rest = value;
    while let Some(start) = rest.find(OPEN) {
        if start > 0 {
            out.push(Segment::Text(&rest[..start]));
        }
        let after = &rest[start + OPEN.len()..];
        let end = after
            .find('}')
            .ok_or_else(|| PlaceholderError(format!("unclosed `{OPEN}` in {value:?}")))?;
        let name = &after[..end];
        if !is_secret_name(name) {
            return Err(PlaceholderError(format!(
                "secret name {name:?} must be letters, digits, `-` or `_`"
            )));
        }
        out.push(Segment::Secret(name));
        rest = &after[end + 1..];
    }
    if !rest.is_empty() {
        out.push(Segment::Text(rest));
    }
    Ok(out)
}

/// Every secret name referenced by the values.
pub fn referenced<'a>(values: impl IntoIterator<Item = &'a String>) -> BTreeSet<String> {
    values
        .into_iter()
        .filter_map(|v| segments(v).ok())
        .flatten()
        .filter_map(|s| match s {
            Segment::Secret(name) => Some(name.to_owned()),
            Segment::Text(_) => None,
        })
        .collect()
}

/// Replaces every placeholder with the secret `lookup` returns; `None` names the first missing one.
pub fn substitute(
    value: &str,
    mut lookup: impl FnMut(&str) -> Option<String>,
) -> Result<String, String> {
    let mut out = String::with_capacity(value.len());
    for segment in segments(value).map_err(|e| e.0)? {
        match segment {
            Segment::Text(text) => out.push_str(text),
            Segment::Secret(name) => out.push_str(&lookup(name).ok_or_else(|| name.to_owned())?),
        }
    }
    Ok(out)
}

/// Secret names: letters, digits, `-`, `_`; 1 to 64 characters.
pub fn is_secret_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 64
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_text_and_secrets() {
        let parts = segments("Bearer ${secret:token}!").expect("valid");
        assert_eq!(
            parts,
            vec![
                Segment::Text("Bearer "),
                Segment::Secret("token"),
                Segment::Text("!")
            ]
        );
    }

    #[test]
    fn substitutes_and_reports_missing() {
        let got = substitute("a${secret:x}b", |n| (n == "x").then(|| "S".into()));
        assert_eq!(got, Ok("aSb".into()));
        assert_eq!(substitute("${secret:y}", |_| None), Err("y".into()));
    }

    #[test]
    fn rejects_unclosed_and_bad_names() {
        assert!(segments("${secret:abc").is_err());
        assert!(segments("${secret:a b}").is_err());
    }
}
