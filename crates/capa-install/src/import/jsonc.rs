//! Reading a client's file as JSON with comments (JSONC), which VS Code writes and accepts: `//`
//! and `/* */` comments and trailing commas are blanked out (outside strings), then the text is
//! read by `serde_json`. Plain JSON (Claude's and Cursor's files) is JSONC without comments, so
//! every client file goes through this one reader.
//!
//! Blanking keeps every other byte where it was, so `serde_json`'s "line L column C" still points
//! into the person's file. Its errors name a place and never quote the text, so nothing of the
//! file (a secret in it) reaches a message. Its nesting limit (128) bounds a hostile file's depth.

use serde_json::Value;

/// Why the text is not JSONC; one sentence with the place.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct JsoncError(pub(crate) String);

#[derive(Clone, Copy, PartialEq, Eq)]
enum State {
    Code,
    Text { escaped: bool },
    LineComment,
    BlockComment,
}

/// `text` with comments and trailing commas replaced by spaces (newlines kept).
pub(crate) fn blank_comments(text: &str) -> Result<String, JsoncError> {
    let bytes = text.as_bytes();
    let mut out = bytes.to_vec();
    let mut state = State::Code;
    // A comma seen since the last value: blanked if a `}` or `]` comes next.
    let mut pending_comma: Option<usize> = None;
    let mut block_start = 0;
    let mut i = 0;
    while i < bytes.len() {
        let byte = bytes[i];
        let next = bytes.get(i + 1).copied();
        match state {
            State::Text { escaped } => {
                state = match (escaped, byte) {
                    (false, b'\\') => State::Text { escaped: true },
                    (false, b'"') => State::Code,
                    _ => State::Text { escaped: false },
                };
            }
            State::LineComment => {
                if byte == b'\n' {
                    state = State::Code;
                } else {
                    out[i] = b' ';
                }
            }
            State::BlockComment => {
                if byte == b'*' && next == Some(b'/') {
                    out[i] = b' ';
                    out[i + 1] = b' ';
                    i += 1;
                    state = State::Code;
                } else if byte != b'\n' {
                    out[i] = b' ';
                }
            }
            State::Code => match (byte, next) {
                (b'/', Some(b'/')) => {
                    out[i] = b' ';
                    state = State::LineComment;
                }
                (b'/', Some(b'*')) => {
                    out[i] = b' ';
                    out[i + 1] = b' ';
                    block_start = i;
                    i += 1;
                    state = State::BlockComment;
                }
                (b',', _) => pending_comma = Some(i),
                (b'}' | b']', _) => {
                    if let Some(at) = pending_comma.take() {
                        out[at] = b' ';
                    }
                }
                (b' ' | b'\t' | b'\r' | b'\n', _) => {}
                (b'"', _) => {
                    pending_comma = None;
                    state = State::Text { escaped: false };
                }
                _ => pending_comma = None,
            },
        }
        i += 1;
    }
    if state == State::BlockComment {
        let line = text[..block_start].matches('\n').count() + 1;
        return Err(JsoncError(format!(
            "a `/*` comment that starts on line {line} is never closed"
        )));
    }
    // Only ASCII bytes were replaced, by ASCII spaces: the text is still UTF-8.
    String::from_utf8(out).map_err(|_| JsoncError("the file is not UTF-8 text".to_owned()))
}

/// Parses JSONC text (a leading byte-order mark is allowed).
pub(crate) fn parse(text: &str) -> Result<Value, JsoncError> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let plain = blank_comments(text)?;
    serde_json::from_str(&plain).map_err(|e| JsoncError(describe(&e)))
}

/// `serde_json`'s error in words a person reads (it names the place, never the text).
fn describe(error: &serde_json::Error) -> String {
    let detail = error.to_string();
    if detail.starts_with("recursion limit exceeded") {
        return format!("it nests deeper than 128 levels ({detail}), which no client's file does");
    }
    format!("it is not JSON ({detail})")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn comments_and_trailing_commas_are_read() {
        let text = "// top\n{\n  /* block\n  over lines */ \"servers\": {\n    \"a\": {\"command\": \"x\", \"args\": [\"1\", \"2\",],}, // after\n  },\n}\n";
        let value = parse(text).expect("jsonc");
        assert_eq!(value["servers"]["a"]["args"][1], "2");
    }

    #[test]
    fn comment_marks_and_commas_inside_strings_stay() {
        let text = r#"{"url": "https://x/y//z", "c": "/* not */", "e": "a\"//b", "t": ",}"}"#;
        let value = parse(text).expect("json");
        assert_eq!(value["url"], "https://x/y//z");
        assert_eq!(value["c"], "/* not */");
        assert_eq!(value["e"], "a\"//b");
        assert_eq!(value["t"], ",}");
    }

    #[test]
    fn errors_keep_the_files_line_and_never_quote_it() {
        let text = "{\n  // a comment\n  \"servers\": {\"x\": secret-value-123}\n}";
        let error = parse(text).expect_err("invalid");
        assert!(error.0.contains("line 3"), "{}", error.0);
        assert!(!error.0.contains("secret-value-123"), "{}", error.0);
        assert!(
            parse("{ /* open")
                .expect_err("unclosed")
                .0
                .contains("never closed")
        );
        assert!(parse("\u{feff}{\"a\": 1}").is_ok(), "a BOM is allowed");
        assert!(
            parse("{\"é\": \"ü\" /* ß */}").is_ok(),
            "non-ASCII text and comments"
        );
    }

    #[test]
    fn deep_nesting_is_a_clear_error() {
        let text = format!("{}{}", "[".repeat(10_000), "]".repeat(10_000));
        let error = parse(&text).expect_err("too deep");
        assert!(error.0.contains("deeper than 128"), "{}", error.0);
        let objects = format!("{}1{}", "{\"a\":".repeat(10_000), "}".repeat(10_000));
        assert!(parse(&objects).expect_err("too deep").0.contains("deeper"));
    }
}
