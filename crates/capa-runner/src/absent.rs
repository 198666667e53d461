//! Sources that new code names but that have no tools yet: one starting, restarting after a
//! crash or down. The run waits a bounded time for them before it starts; if one is still
//! missing and the code fails on its global, the error says which source and why, instead of
//! the sandbox's bare `ReferenceError: github is not defined`.

use std::collections::BTreeSet;

use capa_domain::SharedCatalog;
use capa_sandbox::RunError;

use crate::gateway::Unready;

/// The sources among `source_ids` that the catalog has no tools of and whose global `code`
/// reads. A match inside a string or a comment only costs a bounded wait for a source that
/// is on its way anyway; the run is never refused on it.
pub(crate) fn named_sources_without_tools(
    code: &str,
    source_ids: &[String],
    catalog: &SharedCatalog,
) -> BTreeSet<String> {
    let missing: Vec<(&String, String)> = source_ids
        .iter()
        .filter(|id| !catalog.tools().iter().any(|t| &t.address.namespace == *id))
        .map(|id| (id, capa_typegen::js_identifier(id)))
        .collect();
    if missing.is_empty() {
        return BTreeSet::new();
    }
    let read = globals_read(code);
    missing
        .into_iter()
        .filter(|(_, global)| read.contains(global.as_str()))
        .map(|(id, _)| id.clone())
        .collect()
}

/// Identifiers in `code` that are not a property (`x.github`): what could be a global.
fn globals_read(code: &str) -> BTreeSet<&str> {
    let is_part = |c: char| c.is_alphanumeric() || c == '_' || c == '$';
    let mut found = BTreeSet::new();
    let mut start: Option<usize> = None;
    let mut before = ' ';
    for (i, c) in code
        .char_indices()
        .chain(std::iter::once((code.len(), ' ')))
    {
        match (start, is_part(c)) {
            (None, true) => start = Some(i),
            (Some(from), false) => {
                let word = &code[from..i];
                let first_is_digit = word.starts_with(|c: char| c.is_ascii_digit());
                if before != '.' && !first_is_digit {
                    found.insert(word);
                }
                start = None;
                before = c;
            }
            (None, false) if !c.is_whitespace() => before = c,
            _ => {}
        }
    }
    found
}

/// `error` said again for a global of a source that was still missing when the run started;
/// any other error as it was.
pub(crate) fn explain(error: &RunError, unready: &[Unready]) -> Option<RunError> {
    if error.code != "runtime_error" {
        return None;
    }
    let global = error
        .message
        .strip_prefix("ReferenceError: ")?
        .strip_suffix(" is not defined")?;
    let source = unready
        .iter()
        .find(|u| capa_typegen::js_identifier(&u.source) == global)?;
    Some(RunError {
        code: "source_not_ready".to_owned(),
        message: format!(
            "`{global}` is not defined because the source {} {}",
            source.source, source.why
        ),
        hint: Some(
            "Run the code again in a moment; if the source stays unavailable, the person can check it in Capabilities.".to_owned(),
        ),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_globals_but_not_properties_or_numbers() {
        let code = "const r = await github.get_me({});\nreturn r.slack + x.$y + 2e5 + my_tool?.x;";
        let read = globals_read(code);
        assert!(read.contains("github"));
        assert!(read.contains("my_tool"));
        assert!(read.contains("r"));
        assert!(
            !read.contains("slack"),
            "a property is not a global: {read:?}"
        );
        assert!(!read.contains("$y"));
        assert!(!read.contains("get_me"));
        assert!(!read.contains("2e5"));
    }

    #[test]
    fn a_property_across_whitespace_is_still_a_property() {
        let read = globals_read("x.\n  github.call()");
        assert!(!read.contains("github"));
        assert!(globals_read("x;\ngithub.call()").contains("github"));
    }

    #[test]
    fn explains_only_the_reference_error_of_an_unready_source() {
        let unready = [Unready {
            source: "git-hub".to_owned(),
            why: "is still starting".to_owned(),
            needs_connection: false,
        }];
        let error = |message: &str| RunError {
            code: "runtime_error".to_owned(),
            message: message.to_owned(),
            hint: None,
        };
        let explained = explain(&error("ReferenceError: git_hub is not defined"), &unready)
            .expect("the source's global is explained");
        assert_eq!(explained.code, "source_not_ready");
        assert!(
            explained.message.contains("git-hub is still starting"),
            "{}",
            explained.message
        );
        assert!(explain(&error("ReferenceError: other is not defined"), &unready).is_none());
        assert!(explain(&error("TypeError: git_hub is not defined"), &unready).is_none());
    }
}
