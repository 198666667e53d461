//! A tool call's arguments as an HTTP request: the path filled in, the query, headers, cookies
//! and body, each written as the document's parameter says.

use percent_encoding::{AsciiSet, NON_ALPHANUMERIC, utf8_percent_encode};
use serde_json::{Map, Value};

use crate::operation::{Body, Location, Media, Operation, Param, Style};

/// Characters escaped in a path segment: all but RFC 3986's unreserved ones, so a value can
/// never add a segment, a query or a fragment.
const SEGMENT: &AsciiSet = &NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'.')
    .remove(b'_')
    .remove(b'~');

/// The parts of a request, before credentials and the base URL.
#[derive(Debug, Default)]
pub(crate) struct Parts {
    /// The path with its parameters filled in and escaped.
    pub path: String,
    pub query: Vec<(String, String)>,
    pub headers: Vec<(String, String)>,
    pub cookies: Vec<(String, String)>,
    /// The body and its content type.
    pub body: Option<(String, Vec<u8>)>,
}

/// Why arguments could not become a request: the model's mistake, told as such.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub(crate) struct BadArguments(pub String);

pub(crate) fn parts(op: &Operation, mut args: Map<String, Value>) -> Result<Parts, BadArguments> {
    let known: Vec<&str> = op
        .params
        .iter()
        .map(|p| p.arg.as_str())
        .chain(op.body.as_ref().map(|b| b.arg.as_str()))
        .collect();
    if let Some(unknown) = args.keys().find(|k| !known.contains(&k.as_str())) {
        return Err(BadArguments(format!(
            "`{}` takes no argument `{unknown}`; it takes {}",
            op.name,
            if known.is_empty() {
                "none".to_owned()
            } else {
                known
                    .iter()
                    .map(|k| format!("`{k}`"))
                    .collect::<Vec<_>>()
                    .join(", ")
            }
        )));
    }
    let mut parts = Parts::default();
    let mut path_values = Vec::new();
    for param in &op.params {
        let value = match args.remove(&param.arg) {
            None | Some(Value::Null) if param.required => {
                return Err(BadArguments(format!(
                    "`{}` needs the {} parameter `{}`",
                    op.name,
                    param.location.word(),
                    param.arg
                )));
            }
            None | Some(Value::Null) => continue,
            Some(value) => value,
        };
        match param.location {
            Location::Path => path_values.push((param, path_value(param, &value)?)),
            Location::Query => parts.query.extend(pairs(param, &value)),
            Location::Header => parts
                .headers
                .push((param.name.clone(), joined(param, &value))),
            Location::Cookie => parts.cookies.extend(pairs(param, &value)),
        }
    }
    parts.path = fill_path(&op.path, &path_values);
    if let Some(body) = &op.body {
        match args.remove(&body.arg) {
            None | Some(Value::Null) if body.required => {
                return Err(BadArguments(format!(
                    "`{}` needs `{}` (the request body)",
                    op.name, body.arg
                )));
            }
            None | Some(Value::Null) => {}
            Some(value) => parts.body = Some(encode_body(body, &value)?),
        }
    }
    Ok(parts)
}

/// A path parameter's value, escaped as one segment.
fn path_value(param: &Param, value: &Value) -> Result<String, BadArguments> {
    let text = joined(param, value);
    if text.is_empty() || text == "." || text == ".." {
        return Err(BadArguments(format!(
            "the path parameter `{}` cannot be {:?}",
            param.arg, text
        )));
    }
    Ok(utf8_percent_encode(&text, SEGMENT).to_string())
}

fn fill_path(template: &str, values: &[(&Param, String)]) -> String {
    let mut path = template.to_owned();
    for (param, value) in values {
        path = path.replace(&format!("{{{}}}", param.name), value);
    }
    path
}

/// A scalar as text: strings as they are, numbers and booleans as JSON writes them.
fn scalar(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        Value::Null => String::new(),
        other => other.to_string(),
    }
}

/// One value written as a single string (`simple` style, or a non-exploded `form`).
fn joined(param: &Param, value: &Value) -> String {
    let separator = match param.style {
        Style::Delimited(c) => c.to_string(),
        _ => ",".to_owned(),
    };
    match value {
        Value::Array(items) => items
            .iter()
            .map(scalar)
            .collect::<Vec<_>>()
            .join(&separator),
        Value::Object(map) if param.explode => map
            .iter()
            .map(|(k, v)| format!("{k}={}", scalar(v)))
            .collect::<Vec<_>>()
            .join(","),
        Value::Object(map) => map
            .iter()
            .flat_map(|(k, v)| [k.clone(), scalar(v)])
            .collect::<Vec<_>>()
            .join(","),
        other => scalar(other),
    }
}

/// The name–value pairs of a query or cookie parameter.
fn pairs(param: &Param, value: &Value) -> Vec<(String, String)> {
    match (value, param.style, param.explode) {
        (Value::Object(map), Style::DeepObject, _) => map
            .iter()
            .map(|(k, v)| (format!("{}[{k}]", param.name), scalar(v)))
            .collect(),
        (Value::Object(map), Style::Plain, true) => {
            map.iter().map(|(k, v)| (k.clone(), scalar(v))).collect()
        }
        (Value::Array(items), Style::Plain, true) => items
            .iter()
            .map(|v| (param.name.clone(), scalar(v)))
            .collect(),
        _ => vec![(param.name.clone(), joined(param, value))],
    }
}

fn encode_body(body: &Body, value: &Value) -> Result<(String, Vec<u8>), BadArguments> {
    let bytes = match body.media {
        Media::Json => serde_json::to_vec(value)
            .map_err(|e| BadArguments(format!("the body cannot be written as JSON: {e}")))?,
        Media::Form => {
            let Value::Object(map) = value else {
                return Err(BadArguments(format!(
                    "`{}` is a form: pass an object of its fields",
                    body.arg
                )));
            };
            let fields: Vec<(String, String)> =
                map.iter().map(|(k, v)| (k.clone(), scalar(v))).collect();
            form_encode(&fields).into_bytes()
        }
        Media::Text => match value {
            Value::String(text) => text.clone().into_bytes(),
            other => other.to_string().into_bytes(),
        },
    };
    Ok((body.content_type.clone(), bytes))
}

/// `text` with everything but unreserved characters percent-escaped.
pub(crate) fn escape(text: &str) -> String {
    utf8_percent_encode(text, SEGMENT).to_string()
}

/// `application/x-www-form-urlencoded` of `fields`.
pub(crate) fn form_encode(fields: &[(String, String)]) -> String {
    fields
        .iter()
        .map(|(k, v)| {
            format!(
                "{}={}",
                utf8_percent_encode(k, SEGMENT),
                utf8_percent_encode(v, SEGMENT)
            )
        })
        .collect::<Vec<_>>()
        .join("&")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn param(name: &str, location: Location, style: Style, explode: bool) -> Param {
        Param {
            arg: name.to_owned(),
            name: name.to_owned(),
            location,
            required: location == Location::Path,
            style,
            explode,
        }
    }

    fn op(params: Vec<Param>) -> Operation {
        Operation {
            name: "getThing".into(),
            method: http::Method::GET,
            path: "/things/{id}".into(),
            params,
            body: None,
            security: Vec::new(),
            server: None,
        }
    }

    #[test]
    fn path_values_stay_one_segment_and_dot_segments_are_refused() {
        let op = op(vec![param("id", Location::Path, Style::Plain, false)]);
        let parts = parts(
            &op,
            json!({"id": "a/b?c#d"})
                .as_object()
                .cloned()
                .unwrap_or_default(),
        );
        assert_eq!(
            parts.map(|p| p.path).ok().as_deref(),
            Some("/things/a%2Fb%3Fc%23d")
        );
        for bad in ["..", ".", ""] {
            let args = json!({ "id": bad })
                .as_object()
                .cloned()
                .unwrap_or_default();
            assert!(super::parts(&op, args).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn query_styles_and_unknown_or_missing_arguments() {
        let op = op(vec![
            param("id", Location::Path, Style::Plain, false),
            param("tag", Location::Query, Style::Plain, true),
            param("filter", Location::Query, Style::DeepObject, true),
            param("ids", Location::Query, Style::Delimited('|'), false),
        ]);
        let args = json!({"id": 7, "tag": ["a", "b"], "filter": {"state": "open"}, "ids": [1, 2]});
        let parts =
            super::parts(&op, args.as_object().cloned().unwrap_or_default()).map_err(|e| e.0);
        let query = parts.map(|p| p.query);
        assert_eq!(
            query,
            Ok(vec![
                ("tag".into(), "a".into()),
                ("tag".into(), "b".into()),
                ("filter[state]".into(), "open".into()),
                ("ids".into(), "1|2".into()),
            ])
        );
        let unknown = super::parts(
            &op,
            json!({"id": 1, "nope": 2})
                .as_object()
                .cloned()
                .unwrap_or_default(),
        );
        assert!(unknown.is_err_and(|e| e.0.contains("no argument `nope`")));
        let missing = super::parts(&op, Map::new());
        assert!(missing.is_err_and(|e| e.0.contains("path parameter `id`")));
    }
}
