//! Editing one member of a JSON (or JSONC) file in place, for files capa does not own: Claude
//! Code's `~/.claude.json` (large, rewritten by Claude Code), Claude Desktop's and Cursor's files,
//! and VS Code's `mcp.json`, which may hold comments and trailing commas.
//!
//! Unlike [`crate::json_file`], which re-renders the whole file, this changes only the bytes of
//! the `capa` member (or inserts it before its object's closing brace), so every other byte —
//! key order, number spelling, escapes, comments, indentation, line endings — stays as it was.
//!
//! How: comments and trailing commas are blanked out (replaced by spaces of the same length), so
//! the text is plain JSON with the same offsets; that text is parsed with `serde_json` (to check
//! it and to read values) and scanned for the members' byte ranges; the edit is spliced into
//! the original text.

use serde_json::Value;

/// One member of an object: its key and the byte range of its key and value.
#[derive(Debug, Clone)]
struct Member {
    key: String,
    key_start: usize,
    value_start: usize,
    value_end: usize,
}

/// An object's braces and members.
#[derive(Debug)]
struct Object {
    open: usize,
    close: usize,
    members: Vec<Member>,
}

/// The text with comments and trailing commas replaced by spaces (newlines kept), so it parses
/// as JSON and every offset still points at the same byte of the original.
pub fn blank_comments(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = bytes.to_vec();
    let mut i = 0;
    let mut last_comma: Option<usize> = None;
    while i < bytes.len() {
        match bytes[i] {
            b'"' => {
                last_comma = None;
                i = string_end(bytes, i);
                continue;
            }
            b'/' if bytes.get(i + 1) == Some(&b'/') => {
                while i < bytes.len() && bytes[i] != b'\n' {
                    out[i] = b' ';
                    i += 1;
                }
                continue;
            }
            b'/' if bytes.get(i + 1) == Some(&b'*') => {
                let end = text[i + 2..]
                    .find("*/")
                    .map_or(bytes.len(), |e| i + 2 + e + 2);
                for b in &mut out[i..end] {
                    if *b != b'\n' && *b != b'\r' {
                        *b = b' ';
                    }
                }
                i = end;
                continue;
            }
            b',' => last_comma = Some(i),
            b'}' | b']' => {
                if let Some(comma) = last_comma.take() {
                    out[comma] = b' ';
                }
            }
            b if b.is_ascii_whitespace() => {}
            _ => last_comma = None,
        }
        i += 1;
    }
    // Only ASCII bytes outside strings were replaced by spaces, so the text is still UTF-8.
    String::from_utf8(out).unwrap_or_default()
}

/// The offset just past the string starting at `start` (a `"`).
fn string_end(bytes: &[u8], start: usize) -> usize {
    let mut i = start + 1;
    while i < bytes.len() {
        match bytes[i] {
            b'\\' => i += 2,
            b'"' => return i + 1,
            _ => i += 1,
        }
    }
    bytes.len()
}

fn skip_ws(bytes: &[u8], mut i: usize) -> usize {
    while i < bytes.len() && bytes[i].is_ascii_whitespace() {
        i += 1;
    }
    i
}

/// The offset just past the value starting at `start` (plain JSON, already checked).
fn value_end(bytes: &[u8], start: usize) -> usize {
    match bytes.get(start) {
        Some(b'"') => string_end(bytes, start),
        Some(b'{' | b'[') => {
            let mut depth = 0usize;
            let mut i = start;
            while i < bytes.len() {
                match bytes[i] {
                    b'"' => {
                        i = string_end(bytes, i);
                        continue;
                    }
                    b'{' | b'[' => depth += 1,
                    b'}' | b']' => {
                        depth -= 1;
                        if depth == 0 {
                            return i + 1;
                        }
                    }
                    _ => {}
                }
                i += 1;
            }
            bytes.len()
        }
        _ => {
            let mut i = start;
            while i < bytes.len() && !matches!(bytes[i], b',' | b'}' | b']') {
                if bytes[i].is_ascii_whitespace() {
                    break;
                }
                i += 1;
            }
            i
        }
    }
}

/// The object whose `{` is at `open` in the blanked text.
fn object(plain: &str, open: usize) -> Object {
    let bytes = plain.as_bytes();
    let mut members = Vec::new();
    let mut i = skip_ws(bytes, open + 1);
    while i < bytes.len() && bytes[i] == b'"' {
        let key_end = string_end(bytes, i);
        let key = serde_json::from_str::<String>(&plain[i..key_end]).unwrap_or_default();
        let colon = skip_ws(bytes, key_end);
        let value_start = skip_ws(bytes, colon + 1);
        let end = value_end(bytes, value_start);
        members.push(Member {
            key,
            key_start: i,
            value_start,
            value_end: end,
        });
        i = skip_ws(bytes, end);
        if bytes.get(i) == Some(&b',') {
            i = skip_ws(bytes, i + 1);
        }
    }
    Object {
        open,
        close: i,
        members,
    }
}

/// The whitespace from the start of `at`'s line to `at`, when only whitespace precedes it there.
fn line_indent(text: &str, at: usize) -> Option<&str> {
    let line_start = text[..at].rfind('\n').map_or(0, |n| n + 1);
    let indent = &text[line_start..at];
    indent
        .chars()
        .all(|c| c == ' ' || c == '\t')
        .then_some(indent)
}

/// The whitespace that starts `at`'s line.
fn leading_ws(text: &str, at: usize) -> &str {
    let line_start = text[..at].rfind('\n').map_or(0, |n| n + 1);
    let line = &text[line_start..at];
    let end = line.find(|c| c != ' ' && c != '\t').unwrap_or(line.len());
    &line[..end]
}

/// How the file indents one level: the first indented line's indentation, else two spaces.
fn indent_unit(text: &str) -> String {
    text.lines()
        .skip(1)
        .map(|line| {
            line.chars()
                .take_while(|c| *c == ' ' || *c == '\t')
                .collect::<String>()
        })
        .find(|indent| !indent.is_empty())
        .unwrap_or_else(|| "  ".to_owned())
}

/// `value` rendered as the file would: indented with `unit`, its later lines starting at
/// `base`, or on one line when `compact`.
fn render(value: &Value, unit: &str, base: &str, newline: &str, compact: bool) -> String {
    if compact {
        return value.to_string();
    }
    let mut out = Vec::new();
    let formatter = serde_json::ser::PrettyFormatter::with_indent(unit.as_bytes());
    let mut ser = serde_json::Serializer::with_formatter(&mut out, formatter);
    if serde::Serialize::serialize(value, &mut ser).is_err() {
        return value.to_string();
    }
    String::from_utf8_lossy(&out).replace('\n', &format!("{newline}{base}"))
}

/// A JSON document being edited: the original text and its blanked twin.
#[derive(Debug)]
pub struct Doc {
    text: String,
    plain: String,
}

/// Why a document cannot be edited.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DocError {
    /// Not JSON (even with comments blanked): the parser's message.
    Syntax(String),
    /// Not an object at the top.
    NotAnObject,
}

impl Doc {
    /// Checks `text` (empty counts as `{}`).
    pub fn parse(text: &str) -> Result<(Self, Value), DocError> {
        let text = if text.trim().is_empty() { "{}\n" } else { text };
        let plain = blank_comments(text);
        let value: Value =
            serde_json::from_str(&plain).map_err(|e| DocError::Syntax(e.to_string()))?;
        if !value.is_object() {
            return Err(DocError::NotAnObject);
        }
        Ok((
            Self {
                text: text.to_owned(),
                plain,
            },
            value,
        ))
    }

    /// The current text.
    pub fn text(&self) -> &str {
        &self.text
    }

    fn root(&self) -> Object {
        object(&self.plain, skip_ws(self.plain.as_bytes(), 0))
    }

    fn splice(&mut self, start: usize, end: usize, with: &str) {
        self.text.replace_range(start..end, with);
        self.plain = blank_comments(&self.text);
    }

    fn newline(&self) -> &'static str {
        if self.text.contains("\r\n") {
            "\r\n"
        } else {
            "\n"
        }
    }

    /// Sets `outer.inner` to `value`, creating `outer` (an object) when missing. Returns
    /// `false` when `outer` exists but is not an object.
    pub fn set(&mut self, outer: &str, inner: &str, value: &Value) -> bool {
        let root = self.root();
        match root.members.iter().find(|m| m.key == outer) {
            None => {
                let wrapped =
                    Value::Object(std::iter::once((inner.to_owned(), value.clone())).collect());
                self.insert(&root, outer, &wrapped);
                true
            }
            Some(member) if self.plain.as_bytes()[member.value_start] == b'{' => {
                let servers = object(&self.plain, member.value_start);
                match servers.members.iter().find(|m| m.key == inner) {
                    Some(existing) => {
                        let base = line_indent(&self.text, existing.key_start).unwrap_or("");
                        let compact = !self.text[servers.open..servers.close].contains('\n');
                        let rendered = render(
                            value,
                            &indent_unit(&self.text),
                            base,
                            self.newline(),
                            compact,
                        );
                        self.splice(existing.value_start, existing.value_end, &rendered);
                    }
                    None => self.insert(&servers, inner, value),
                }
                true
            }
            Some(_) => false,
        }
    }

    /// Inserts `"key": value` as `object`'s last member.
    fn insert(&mut self, object: &Object, key: &str, value: &Value) {
        let unit = indent_unit(&self.text);
        let newline = self.newline();
        let key_text = Value::String(key.to_owned()).to_string();
        if let Some(last) = object.members.last() {
            let compact = !self.text[object.open..object.close].contains('\n');
            let (sep, base) = if compact {
                (" ".to_owned(), String::new())
            } else {
                let base = line_indent(&self.text, last.key_start)
                    .unwrap_or(&unit)
                    .to_owned();
                (format!("{newline}{base}"), base)
            };
            let rendered = render(value, &unit, &base, newline, compact);
            self.splice(
                last.value_end,
                last.value_end,
                &format!(",{sep}{key_text}: {rendered}"),
            );
        } else {
            let outer = leading_ws(&self.text, object.open).to_owned();
            let base = format!("{outer}{unit}");
            let rendered = render(value, &unit, &base, newline, false);
            self.splice(
                object.open + 1,
                object.close,
                &format!("{newline}{base}{key_text}: {rendered}{newline}{outer}"),
            );
        }
    }

    /// Takes out `outer.inner`; returns whether it was there.
    pub fn remove(&mut self, outer: &str, inner: &str) -> bool {
        let root = self.root();
        let Some(member) = root.members.iter().find(|m| m.key == outer) else {
            return false;
        };
        if self.plain.as_bytes()[member.value_start] != b'{' {
            return false;
        }
        let servers = object(&self.plain, member.value_start);
        let Some(index) = servers.members.iter().position(|m| m.key == inner) else {
            return false;
        };
        let this = &servers.members[index];
        let (start, end) = if index > 0 {
            (servers.members[index - 1].value_end, this.value_end)
        } else if let Some(next) = servers.members.get(1) {
            (this.key_start, next.key_start)
        } else {
            (servers.open + 1, servers.close)
        };
        self.splice(start, end, "");
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn set(text: &str, value: &Value) -> String {
        let (mut doc, _) = Doc::parse(text).expect("parse");
        assert!(doc.set("mcpServers", "capa", value));
        let out = doc.text().to_owned();
        let plain = blank_comments(&out);
        let parsed: Value = serde_json::from_str(&plain).expect("still JSON");
        assert_eq!(&parsed["mcpServers"]["capa"], value);
        out
    }

    #[test]
    fn other_bytes_stay_when_the_entry_is_added_and_removed() {
        let old = "{\n    \"numStartups\": 1.50e3,\n    \"name\": \"\\u00e9\",\n    \"mcpServers\": {\n        \"other\": {\"command\": \"x\"}\n    },\n    \"z\": []\n}";
        let entry = json!({"command": "/bin/capa", "args": ["mcp"]});
        let new = set(old, &entry);
        assert_eq!(
            new,
            "{\n    \"numStartups\": 1.50e3,\n    \"name\": \"\\u00e9\",\n    \"mcpServers\": {\n        \"other\": {\"command\": \"x\"},\n        \"capa\": {\n            \"command\": \"/bin/capa\",\n            \"args\": [\n                \"mcp\"\n            ]\n        }\n    },\n    \"z\": []\n}"
        );
        let (mut doc, _) = Doc::parse(&new).expect("parse");
        assert!(doc.remove("mcpServers", "capa"));
        assert_eq!(doc.text(), old);
    }

    #[test]
    fn a_missing_servers_key_is_added_and_an_empty_object_filled() {
        let entry = json!({"command": "c"});
        assert_eq!(
            set("{\"a\": 1}\n", &entry),
            "{\"a\": 1, \"mcpServers\": {\"capa\":{\"command\":\"c\"}}}\n"
        );
        assert_eq!(
            set("{\n  \"a\": 1\n}\n", &entry),
            "{\n  \"a\": 1,\n  \"mcpServers\": {\n    \"capa\": {\n      \"command\": \"c\"\n    }\n  }\n}\n"
        );
        assert_eq!(
            set("{\n  \"mcpServers\": {}\n}\n", &entry),
            "{\n  \"mcpServers\": {\n    \"capa\": {\n      \"command\": \"c\"\n    }\n  }\n}\n"
        );
        assert_eq!(
            set("", &entry),
            "{\n  \"mcpServers\": {\n    \"capa\": {\n      \"command\": \"c\"\n    }\n  }\n}\n"
        );
    }

    #[test]
    fn an_existing_entry_is_replaced_in_place() {
        let old = "{\n  \"mcpServers\": {\n    \"capa\": {\"command\": \"old\"},\n    \"b\": {}\n  }\n}\n";
        let new = set(old, &json!({"command": "new"}));
        assert_eq!(
            new,
            "{\n  \"mcpServers\": {\n    \"capa\": {\n      \"command\": \"new\"\n    },\n    \"b\": {}\n  }\n}\n"
        );
        let (mut doc, _) = Doc::parse(&new).expect("parse");
        assert!(doc.remove("mcpServers", "capa"));
        assert_eq!(
            doc.text(),
            "{\n  \"mcpServers\": {\n    \"b\": {}\n  }\n}\n"
        );
    }

    #[test]
    fn comments_and_trailing_commas_survive() {
        let old = "// VS Code settings\n{\n  /* mine */\n  \"servers\": {\n    \"a\": {\"url\": \"http://x/*y*/\"}, // keep\n  },\n}\n";
        let (mut doc, _) = Doc::parse(old).expect("jsonc parses");
        assert!(doc.set("servers", "capa", &json!({"type": "stdio"})));
        assert_eq!(
            doc.text(),
            "// VS Code settings\n{\n  /* mine */\n  \"servers\": {\n    \"a\": {\"url\": \"http://x/*y*/\"},\n    \"capa\": {\n      \"type\": \"stdio\"\n    }, // keep\n  },\n}\n"
        );
        assert!(doc.remove("servers", "capa"));
        assert_eq!(
            doc.text(),
            "// VS Code settings\n{\n  /* mine */\n  \"servers\": {\n    \"a\": {\"url\": \"http://x/*y*/\"}, // keep\n  },\n}\n"
        );
    }

    #[test]
    fn broken_and_non_object_files_are_refused() {
        assert!(matches!(Doc::parse("{\"a\": "), Err(DocError::Syntax(_))));
        assert_eq!(Doc::parse("[1]").err(), Some(DocError::NotAnObject));
        let (mut doc, _) = Doc::parse("{\"mcpServers\": []}").expect("parse");
        assert!(!doc.set("mcpServers", "capa", &json!({})));
        assert!(!doc.remove("mcpServers", "capa"));
    }
}
