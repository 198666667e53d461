//! The argument preview a person sees before approving a call: the arguments with every secret
//! removed and every long part shortened, so that a popup, a page, an elicitation form or the
//! history can show it whole.
//!
//! Removed: known connection secrets (the hub's redactor), values of fields named like secrets
//! (`token`, `password`, `apiKey`, `Authorization`, `cookie`, …), and fields the tool's schema
//! marks `format: password` or `writeOnly`. The tool's schema and names are the upstream's and
//! are not trusted to *reveal* anything: a field is hidden when any of the three says so.

use serde_json::{Map, Value};

use crate::redact::{REDACTED, Redactor};

/// Longest string shown, in characters, before it is cut.
const MAX_STRING_CHARS: usize = 200;
/// Most array items and object members shown.
const MAX_ITEMS: usize = 20;
/// Deepest nesting shown.
const MAX_DEPTH: usize = 6;
/// Largest preview, in bytes of compact JSON. Bigger previews are shown with tighter bounds.
pub const MAX_PREVIEW_BYTES: usize = 4096;

/// Parts of field names that mark a secret (compared lower-case, without `_`, `-` or spaces).
const SECRET_NAME_PARTS: &[&str] = &[
    "token",
    "password",
    "passwd",
    "passphrase",
    "secret",
    "authorization",
    "apikey",
    "cookie",
    "credential",
    "privatekey",
    "sessionid",
    "bearer",
    "accesskey",
    "signature",
];

/// Whether a field name looks like it holds a secret.
pub fn is_secret_name(name: &str) -> bool {
    let folded: String = name
        .chars()
        .filter(|c| c.is_alphanumeric())
        .flat_map(char::to_lowercase)
        .collect();
    SECRET_NAME_PARTS.iter().any(|part| folded.contains(part))
}

struct Bounds {
    string_chars: usize,
    items: usize,
    depth: usize,
}

/// The preview of `arguments` for a tool with input schema `schema`. Arguments of any depth:
/// the walk stops at the depth bound (below the stack's), and the schema is only read, never
/// copied (a copy would recurse through all of it).
pub fn preview(arguments: &Value, schema: &Map<String, Value>, redactor: &Redactor) -> Value {
    let mut bounds = Bounds {
        string_chars: MAX_STRING_CHARS,
        items: MAX_ITEMS,
        depth: MAX_DEPTH,
    };
    loop {
        let shown = shape(arguments, Some(schema), redactor, &bounds, 0);
        let size = crate::json_size::json_len(&shown);
        if size <= MAX_PREVIEW_BYTES || bounds.depth <= 1 {
            return if size <= MAX_PREVIEW_BYTES {
                shown
            } else {
                Value::String(format!("[{size} bytes of arguments, too large to preview]"))
            };
        }
        bounds = Bounds {
            string_chars: (bounds.string_chars / 2).max(16),
            items: (bounds.items / 2).max(3),
            depth: bounds.depth - 1,
        };
    }
}

/// A schema as the preview reads it: an object, or none (`true`, `false` and non-schemas say
/// nothing about a field).
type Schema<'a> = Option<&'a Map<String, Value>>;

fn is_secret_schema(schema: Schema<'_>) -> bool {
    schema.is_some_and(|s| {
        s.get("format").and_then(Value::as_str) == Some("password")
            || s.get("writeOnly").and_then(Value::as_bool) == Some(true)
    })
}

fn property_schema<'a>(schema: Schema<'a>, key: &str) -> Schema<'a> {
    let schema = schema?;
    schema
        .get("properties")
        .and_then(|p| p.get(key))
        .or_else(|| schema.get("additionalProperties").filter(|a| a.is_object()))
        .and_then(Value::as_object)
}

/// Recursive, but never deeper than `bounds.depth` (at most [`MAX_DEPTH`]) levels.
fn shape(
    value: &Value,
    schema: Schema<'_>,
    redactor: &Redactor,
    bounds: &Bounds,
    depth: usize,
) -> Value {
    if is_secret_schema(schema) {
        return Value::String(REDACTED.to_owned());
    }
    match value {
        Value::String(text) => Value::String(cut(&redactor.redact(text), bounds.string_chars)),
        Value::Array(items) => {
            if depth >= bounds.depth {
                return Value::String(format!("[{} items]", items.len()));
            }
            let item_schema = schema
                .and_then(|s| s.get("items"))
                .and_then(Value::as_object);
            let mut shown: Vec<Value> = items
                .iter()
                .take(bounds.items)
                .map(|item| shape(item, item_schema, redactor, bounds, depth + 1))
                .collect();
            if items.len() > bounds.items {
                shown.push(Value::String(format!(
                    "… {} more items",
                    items.len() - bounds.items
                )));
            }
            Value::Array(shown)
        }
        Value::Object(members) => {
            if depth >= bounds.depth {
                return Value::String(format!("[object with {} fields]", members.len()));
            }
            let mut shown = Map::new();
            for (key, member) in members.iter().take(bounds.items) {
                let key_shown = cut(&redactor.redact(key), bounds.string_chars);
                let member_shown = if is_secret_name(key) {
                    Value::String(REDACTED.to_owned())
                } else {
                    shape(
                        member,
                        property_schema(schema, key),
                        redactor,
                        bounds,
                        depth + 1,
                    )
                };
                shown.insert(key_shown, member_shown);
            }
            if members.len() > bounds.items {
                shown.insert(
                    "…".to_owned(),
                    Value::String(format!("{} more fields", members.len() - bounds.items)),
                );
            }
            Value::Object(shown)
        }
        other => other.clone(),
    }
}

/// `text` cut to `max` characters, saying how much was left out.
fn cut(text: &str, max: usize) -> String {
    let count = text.chars().count();
    if count <= max {
        return text.to_owned();
    }
    let kept: String = text.chars().take(max).collect();
    format!("{kept}… (+{} chars)", count - max)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn schema(value: Value) -> Map<String, Value> {
        match value {
            Value::Object(map) => map,
            _ => Map::new(),
        }
    }

    #[test]
    fn secret_names_schema_marks_and_known_secrets_are_removed() {
        let redactor = Redactor::new();
        redactor.add("canary-5f2d9c1e");
        let arguments = json!({
            "title": "deploy with canary-5f2d9c1e inside",
            "api_key": "visible-only-by-name",
            "headers": {"Authorization": "Bearer abc", "Accept": "json"},
            "pin": "1234",
            "login": {"user": "ann", "Pass-Word": "hunter2"},
            "note": "fine"
        });
        let tool_schema = schema(json!({
            "type": "object",
            "properties": {
                "pin": {"type": "string", "writeOnly": true},
                "note": {"type": "string"},
                "login": {"type": "object", "properties": {"user": {"type": "string", "format": "password"}}}
            }
        }));
        let shown = preview(&arguments, &tool_schema, &redactor);
        let text = shown.to_string();
        for secret in [
            "canary-5f2d9c1e",
            "visible-only-by-name",
            "Bearer abc",
            "1234",
            "hunter2",
            "\"ann\"",
        ] {
            assert!(!text.contains(secret), "{secret} leaked: {text}");
        }
        assert_eq!(shown["note"], "fine");
        assert_eq!(shown["headers"]["Accept"], "json");
        assert_eq!(shown["title"], "deploy with [redacted] inside");
    }

    #[test]
    fn long_values_and_big_previews_are_bounded() {
        let redactor = Redactor::new();
        let arguments = json!({
            "body": "x".repeat(10_000),
            "items": (0..100).collect::<Vec<_>>(),
            "deep": {"a": {"b": {"c": {"d": {"e": {"f": {"g": 1}}}}}}}
        });
        let shown = preview(&arguments, &Map::new(), &redactor);
        assert!(shown.to_string().len() <= MAX_PREVIEW_BYTES);
        assert!(
            shown["body"]
                .as_str()
                .is_some_and(|b| b.contains("(+9800 chars)"))
        );
        assert_eq!(shown["items"].as_array().map(Vec::len), Some(MAX_ITEMS + 1));
        let huge = json!({"rows": (0..400).map(|i| json!({"id": i, "text": "y".repeat(150)})).collect::<Vec<_>>()});
        assert!(preview(&huge, &Map::new(), &redactor).to_string().len() <= MAX_PREVIEW_BYTES);
    }

    #[test]
    fn arguments_nested_a_hundred_thousand_levels_are_previewed_without_their_secrets() {
        let redactor = Redactor::new();
        redactor.add("canary-5f2d9c1e");
        // Built and dropped on a thread with a large stack (serde_json's own Drop recurses);
        // previewed on one with 64 KiB.
        let big_stack = std::thread::Builder::new().stack_size(512 << 20);
        let outcome = big_stack.spawn(move || {
            let mut arguments = json!({"token": "visible-only-by-name", "t": "canary-5f2d9c1e"});
            for _ in 0..100_000 {
                let mut map = Map::new();
                map.insert("canary-5f2d9c1e".to_owned(), arguments);
                map.insert("apiKey".to_owned(), Value::from("by-name"));
                arguments = Value::Array(vec![Value::Object(map)]);
            }
            let schema = schema(json!({"type": "array", "items": {"type": "object"}}));
            let small_stack = std::thread::Builder::new().stack_size(64 << 10);
            let shown = small_stack.spawn(move || {
                let shown = preview(&arguments, &schema, &redactor).to_string();
                (shown, arguments)
            });
            shown.map(|t| t.join().map(|(shown, _arguments)| shown))
        });
        let shown = outcome
            .expect("spawn")
            .join()
            .expect("join")
            .expect("spawn")
            .expect("no stack overflow");
        assert!(
            shown.contains(r#"{"[redacted]":"[1 items]","apiKey":"[redacted]"}"#),
            "{shown}"
        );
        for secret in ["canary-5f2d9c1e", "visible-only-by-name", "by-name"] {
            assert!(!shown.contains(secret), "{secret} leaked: {shown}");
        }
    }

    #[test]
    fn secret_like_names() {
        for name in [
            "token",
            "accessToken",
            "X-Api-Key",
            "client_secret",
            "Cookie",
            "PASSWORD",
        ] {
            assert!(is_secret_name(name), "{name}");
        }
        for name in ["title", "owner", "body", "repo"] {
            assert!(!is_secret_name(name), "{name}");
        }
    }
}
