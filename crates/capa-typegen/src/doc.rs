//! JSDoc: what a schema says about a value beyond its type (description, default, format,
//! bounds), and how it is written into a comment that cannot end early.

use serde_json::Value;

use crate::keywords::Keywords;

/// Enums longer than this are typed by their base type, with a few values in the doc.
pub(crate) const MAX_ENUM_LITERALS: usize = 30;

/// Documentation of one value: prose plus `@tag value` pairs.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Doc {
    pub text: Option<String>,
    pub tags: String,
}

/// How much documentation to write; shrinking it is the last step of fitting a budget.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum DocMode {
    Full,
    /// Prose cut to this many characters; tags kept.
    Short(usize),
    /// No field docs at all (tool docs keep their MCP name line).
    None,
}

/// The order bound tags are written in.
const BOUND_ORDER: &[&str] = &[
    "minimum",
    "exclusiveMinimum",
    "maximum",
    "exclusiveMaximum",
    "minLength",
    "maxLength",
    "minItems",
    "maxItems",
    "multipleOf",
];

impl Doc {
    pub(crate) fn from_text(text: &str) -> Doc {
        Doc {
            text: normalize(text),
            tags: String::new(),
        }
    }

    pub(crate) fn from_schema(schema: &Value) -> Doc {
        let Some(map) = schema.as_object() else {
            return Doc::default();
        };
        let keywords = Keywords::of(map);
        let text = keywords
            .description
            .and_then(Value::as_str)
            .and_then(normalize);
        Doc {
            text,
            tags: tags(&keywords),
        }
    }
}

fn tags(keywords: &Keywords<'_>) -> String {
    let mut tags = String::new();
    let mut add = |name: &str, value: &str| {
        if !tags.is_empty() {
            tags.push(' ');
        }
        tags.push('@');
        tags.push_str(name);
        if !value.is_empty() {
            tags.push(' ');
            tags.push_str(value);
        }
    };
    if let Some(values) = keywords.enumeration.and_then(Value::as_array)
        && values.len() > MAX_ENUM_LITERALS
    {
        let shown: Vec<String> = values.iter().take(5).map(|v| short_json(v, 30)).collect();
        add(
            "enum",
            &format!("{}, … ({} values)", shown.join(", "), values.len()),
        );
    }
    if let Some(default) = keywords.default {
        add("default", &short_json(default, 60));
    }
    if let Some(format) = keywords.format.and_then(Value::as_str) {
        add("format", &one_line(format, 40));
    }
    // A fixed order (minimum before maximum) reads better than whatever order was published.
    let mut bounds = keywords.bounds.clone();
    bounds.sort_by_key(|(name, _)| BOUND_ORDER.iter().position(|b| b == name));
    for (name, value) in &bounds {
        match value {
            Value::Number(n) => add(name, &n.to_string()),
            // Draft-04 boolean `exclusiveMinimum` qualifies `minimum`; say so briefly.
            Value::Bool(true) => add(name, ""),
            _ => {}
        }
    }
    if let Some(pattern) = keywords.pattern.and_then(Value::as_str) {
        add("pattern", &one_line(pattern, 80));
    }
    if keywords.deprecated {
        add("deprecated", "");
    }
    tags
}

/// A JSON value on one short line (`"open"`, `30`, `["a","b"]`).
fn short_json(value: &Value, max: usize) -> String {
    one_line(&json_prefix(value, max + 1), max)
}

/// An array or object being written by [`json_prefix`].
enum Open<'v> {
    Array(std::slice::Iter<'v, Value>),
    Object(serde_json::map::Iter<'v>),
}

/// The compact JSON text of `value` as `serde_json` writes it, or a prefix of it at least
/// `at_least` characters long. Iterative and stopping early: a `default` may be megabytes long
/// or nested far deeper than `serde_json`'s serializer (which recurses) can take, and only a few
/// dozen characters of it are shown.
fn json_prefix(value: &Value, at_least: usize) -> String {
    let mut out = String::new();
    let mut chars = 0;
    let mut write = |out: &mut String, text: &str| {
        out.push_str(text);
        chars += text.chars().count();
        chars >= at_least
    };
    let mut open: Vec<(Open, bool)> = Vec::new();
    let mut next = Some(value);
    loop {
        if let Some(value) = next.take() {
            let full = match value {
                Value::Array(items) => {
                    open.push((Open::Array(items.iter()), true));
                    write(&mut out, "[")
                }
                Value::Object(members) => {
                    open.push((Open::Object(members.iter()), true));
                    write(&mut out, "{")
                }
                Value::String(text) => write(&mut out, &quoted_prefix(text, at_least)),
                scalar => write(&mut out, &scalar.to_string()),
            };
            if full {
                break;
            }
            continue;
        }
        let Some((container, first)) = open.last_mut() else {
            break;
        };
        let comma = if std::mem::take(first) { "" } else { "," };
        let full = match container {
            Open::Array(items) => {
                if let Some(item) = items.next() {
                    next = Some(item);
                    write(&mut out, comma)
                } else {
                    open.pop();
                    write(&mut out, "]")
                }
            }
            Open::Object(members) => {
                if let Some((key, member)) = members.next() {
                    next = Some(member);
                    let key = quoted_prefix(key, at_least);
                    write(&mut out, comma) || write(&mut out, &key) || write(&mut out, ":")
                } else {
                    open.pop();
                    write(&mut out, "}")
                }
            }
        };
        if full {
            break;
        }
    }
    out
}

/// `text` as a JSON string literal, or the start of one when `text` is longer than `max`
/// characters (then the literal is longer than `max` too).
fn quoted_prefix(text: &str, max: usize) -> String {
    let quote = |text: &str| serde_json::to_string(text).unwrap_or_default();
    match text.char_indices().nth(max) {
        Some((end, _)) => {
            let mut start = quote(&text[..end]);
            start.pop();
            start
        }
        None => quote(text),
    }
}

fn one_line(text: &str, max: usize) -> String {
    let flat: String = text
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    cut(&flat, max)
}

/// At most `max` characters, cut at a word boundary where there is one, marked with `…`.
pub(crate) fn cut(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_owned();
    }
    let prefix: String = text.chars().take(max.saturating_sub(1)).collect();
    let kept = match prefix.rfind(char::is_whitespace) {
        Some(at) if at > prefix.len() / 2 => prefix[..at].trim_end(),
        _ => prefix.as_str(),
    };
    format!("{kept}…")
}

/// Trimmed lines, at most one blank line in a row; `None` when nothing is left.
fn normalize(text: &str) -> Option<String> {
    let mut out = String::with_capacity(text.len());
    let mut blank = false;
    for line in text.lines() {
        let line = line.trim_end();
        if line.trim().is_empty() {
            blank = !out.is_empty();
            continue;
        }
        if !out.is_empty() {
            out.push('\n');
            if blank {
                out.push('\n');
            }
        }
        blank = false;
        out.push_str(line);
    }
    (!out.is_empty()).then_some(out)
}

/// Text safe inside `/* … */`: a `*/` would end the comment early.
pub(crate) fn escape_comment(text: &str) -> String {
    text.replace("*/", "*\\/")
}

/// Writes `doc` (plus `extra` lines such as `MCP name: get-sum`) as JSDoc at `indent`.
pub(crate) fn write_jsdoc(
    out: &mut String,
    indent: &str,
    doc: &Doc,
    extra: &[String],
    mode: DocMode,
) {
    let mut lines: Vec<String> = Vec::new();
    let mut tags = doc.tags.clone();
    match mode {
        DocMode::Full => {
            if let Some(text) = &doc.text {
                lines.extend(text.lines().map(str::to_owned));
            }
        }
        DocMode::Short(max) => {
            if let Some(text) = &doc.text {
                let first = text.lines().next().unwrap_or_default();
                let short = cut(first, max);
                let more = text.contains('\n') && !short.ends_with('…');
                lines.push(if more { format!("{short} …") } else { short });
            }
        }
        DocMode::None => tags.clear(),
    }
    lines.extend(extra.iter().cloned());
    if !tags.is_empty() {
        match lines.last_mut() {
            Some(last) => {
                last.push(' ');
                last.push_str(&tags);
            }
            None => lines.push(tags),
        }
    }
    match lines.as_slice() {
        [] => {}
        [line] => {
            out.push_str(indent);
            out.push_str("/** ");
            out.push_str(&escape_comment(line));
            out.push_str(" */\n");
        }
        _ => {
            out.push_str(indent);
            out.push_str("/**\n");
            for line in &lines {
                out.push_str(indent);
                if line.is_empty() {
                    out.push_str(" *\n");
                } else {
                    out.push_str(" * ");
                    out.push_str(&escape_comment(line));
                    out.push('\n');
                }
            }
            out.push_str(indent);
            out.push_str(" */\n");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn tags_follow_the_description() {
        let doc = Doc::from_schema(&json!({
            "description": "Page size.", "default": 30, "minimum": 1, "maximum": 100
        }));
        let mut out = String::new();
        write_jsdoc(&mut out, "\t", &doc, &[], DocMode::Full);
        assert_eq!(
            out,
            "\t/** Page size. @default 30 @minimum 1 @maximum 100 */\n"
        );
    }

    #[test]
    fn comment_end_is_escaped_and_lines_kept() {
        let doc = Doc::from_text("Matches a/*/b */ paths.\n\n\n  Second paragraph.  \n");
        let mut out = String::new();
        write_jsdoc(
            &mut out,
            "",
            &doc,
            &["MCP name: x-y".to_owned()],
            DocMode::Full,
        );
        assert_eq!(
            out,
            "/**\n * Matches a/*\\/b *\\/ paths.\n *\n *   Second paragraph.\n * MCP name: x-y\n */\n"
        );
    }

    #[test]
    fn json_prefixes_match_serde_json() {
        let value = json!({"a": [1, 2.5, null, true], "b\"\n": {"c": "x\u{1}y", "d": []}, "e": {}});
        let text = value.to_string();
        assert_eq!(json_prefix(&value, 1_000), text);
        for n in 1..text.len() {
            let prefix = json_prefix(&value, n);
            assert!(text.starts_with(&prefix), "{n}: {prefix}");
            assert!(prefix.chars().count() >= n, "{n}: {prefix}");
        }
        assert_eq!(short_json(&json!("x".repeat(100_000)), 10), "\"xxxxxxxx…");
    }

    #[test]
    fn a_default_nested_a_hundred_thousand_levels_is_shown_short() {
        // Built and dropped on a thread with a large stack: serde_json's own `Drop` of such a
        // value recurses. `json_prefix` itself does not, which the small stack below proves.
        let doc = std::thread::Builder::new()
            .stack_size(256 << 20)
            .spawn(|| {
                let mut deep = json!(1);
                for _ in 0..100_000 {
                    deep = Value::Array(vec![deep]);
                }
                let schema = json!({"default": deep});
                let doc = std::thread::Builder::new()
                    .stack_size(64 << 10)
                    .spawn(move || (Doc::from_schema(&schema), schema))
                    .expect("spawn")
                    .join()
                    .expect("no overflow");
                doc.0
            })
            .expect("spawn")
            .join()
            .expect("join");
        assert_eq!(doc.tags, format!("@default {}…", "[".repeat(59)));
    }

    #[test]
    fn cut_at_words() {
        assert_eq!(cut("one two three four", 12), "one two…");
        assert_eq!(cut("short", 12), "short");
    }
}
