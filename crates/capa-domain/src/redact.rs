//! Redaction of known secret values: the one place where data entering the core from an
//! upstream, and data leaving it, is cleaned.
//!
//! The hub registers every connection secret it loads, and its own token and state key. Tool
//! results (before the sandbox or any client sees them), tool definitions, progress messages,
//! error messages, database texts and log lines pass through [`Redactor`], so an upstream that
//! echoes its environment (or a header) cannot leak a credential to a model, a log or the
//! history. Each secret is matched in the forms it takes on the way: raw, JSON-escaped (once, and
//! twice for JSON inside a JSON string) and URL-encoded.

use std::sync::{Arc, RwLock};

use serde_json::Value;

/// What a secret is replaced with.
pub const REDACTED: &str = "[redacted]";

/// Secrets shorter than this are not redacted: replacing every `a` would destroy all output and
/// protect nothing. Such secrets are refused when set (see `connections`).
pub const MIN_SECRET_LEN: usize = 4;

/// The set of known secret values. Shared (`Arc`) between the hub and the log writer.
#[derive(Debug, Default)]
pub struct Redactor {
    /// Longest first, so that a secret containing another is replaced whole.
    secrets: RwLock<Vec<Secret>>,
}

/// One form of a secret, with its searcher made once: every tool result is searched for every
/// form, and a searcher made per search (`str::contains`) was half the cost of that look.
#[derive(Debug)]
struct Secret {
    text: String,
    finder: memchr::memmem::Finder<'static>,
}

impl Secret {
    fn new(text: String) -> Self {
        let finder = memchr::memmem::Finder::new(text.as_bytes()).into_owned();
        Self { text, finder }
    }

    fn is_in(&self, text: &str) -> bool {
        self.finder.find(text.as_bytes()).is_some()
    }
}

impl Redactor {
    pub fn new() -> Arc<Self> {
        Arc::new(Self::default())
    }

    /// Adds a secret value, in every form it is matched in.
    pub fn add(&self, secret: &str) {
        if secret.len() < MIN_SECRET_LEN {
            return;
        }
        let Ok(mut secrets) = self.secrets.write() else {
            return;
        };
        for form in encodings(secret) {
            if !secrets.iter().any(|known| known.text == form) {
                secrets.push(Secret::new(form));
            }
        }
        secrets.sort_by_key(|s| std::cmp::Reverse(s.text.len()));
    }

    /// Adds a secret held as bytes (a key file): its text (when it is text), hex and base64.
    pub fn add_bytes(&self, secret: &[u8]) {
        if let Ok(text) = std::str::from_utf8(secret) {
            self.add(text.trim());
        }
        self.add(&crate::hex::lower_hex(secret));
        self.add(&base64(secret));
    }

    /// Whether no secret is known (nothing to redact).
    pub fn is_empty(&self) -> bool {
        self.secrets.read().is_ok_and(|s| s.is_empty())
    }

    /// Replaces every known secret in `text`.
    pub fn redact(&self, text: &str) -> String {
        let Ok(secrets) = self.secrets.read() else {
            // A poisoned lock means a panic elsewhere; refuse to pass text through unchecked.
            return REDACTED.to_owned();
        };
        let mut out = text.to_owned();
        for secret in secrets.iter() {
            if secret.is_in(&out) {
                out = out.replace(secret.text.as_str(), REDACTED);
            }
        }
        out
    }

    /// Whether `text` holds a known secret.
    pub fn contains_secret(&self, text: &str) -> bool {
        self.secrets
            .read()
            .map_or(true, |s| s.iter().any(|secret| secret.is_in(text)))
    }

    /// Redacts every string (keys included) of a JSON value in place, at any depth: the walk
    /// keeps its own list of what is left to visit instead of recursing, so a value nested
    /// deeper than the thread's stack allows is still redacted whole, never skipped.
    pub fn redact_json(&self, value: &mut Value) {
        let mut pending = vec![value];
        while let Some(value) = pending.pop() {
            match value {
                Value::String(s) => {
                    if self.contains_secret(s) {
                        *s = self.redact(s);
                    }
                }
                Value::Array(items) => pending.extend(items.iter_mut()),
                Value::Object(map) => {
                    let keys: Vec<String> = map
                        .keys()
                        .filter(|k| self.contains_secret(k))
                        .cloned()
                        .collect();
                    for key in keys {
                        if let Some(v) = map.remove(&key) {
                            map.insert(self.redact(&key), v);
                        }
                    }
                    pending.extend(map.values_mut());
                }
                Value::Null | Value::Bool(_) | Value::Number(_) => {}
            }
        }
    }
}

/// The forms a secret takes in text it may reach us in: itself, JSON-escaped once and twice,
/// and URL-encoded (upper- and lower-case hex, `+` or `%20` for spaces).
fn encodings(secret: &str) -> Vec<String> {
    let mut forms = vec![secret.to_owned()];
    let once = json_escaped(secret);
    let twice = json_escaped(&once);
    let url = url_encoded(secret);
    for form in [
        once,
        twice,
        url.replace("%20", "+"),
        url.to_lowercase_hex(),
        url.to_lowercase_hex().replace("%20", "+"),
        url,
    ] {
        if form.len() >= MIN_SECRET_LEN && !forms.contains(&form) {
            forms.push(form);
        }
    }
    forms
}

/// The text between the quotes of `secret` as a JSON string.
fn json_escaped(secret: &str) -> String {
    let quoted = serde_json::to_string(secret).unwrap_or_default();
    quoted
        .strip_prefix('"')
        .and_then(|q| q.strip_suffix('"'))
        .unwrap_or_default()
        .to_owned()
}

/// Percent-encoding of everything but RFC 3986's unreserved characters.
fn url_encoded(secret: &str) -> String {
    let mut out = String::with_capacity(secret.len() * 3);
    for byte in secret.bytes() {
        if byte.is_ascii_alphanumeric() || matches!(byte, b'-' | b'.' | b'_' | b'~') {
            out.push(byte as char);
        } else {
            out.push_str(&format!("%{byte:02X}"));
        }
    }
    out
}

trait LowercaseHex {
    fn to_lowercase_hex(&self) -> String;
}

impl LowercaseHex for String {
    /// `%2F` → `%2f`, the rest unchanged.
    fn to_lowercase_hex(&self) -> String {
        let mut out = String::with_capacity(self.len());
        let mut chars = self.chars();
        while let Some(c) = chars.next() {
            out.push(c);
            if c == '%' {
                out.extend(chars.by_ref().take(2).map(|h| h.to_ascii_lowercase()));
            }
        }
        out
    }
}

/// Standard base64 with padding.
fn base64(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let b = [
            chunk[0],
            *chunk.get(1).unwrap_or(&0),
            *chunk.get(2).unwrap_or(&0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(ALPHABET[(n >> (18 - 6 * i)) as usize & 63] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn redacts_strings_keys_and_nested_values() {
        let r = Redactor::new();
        r.add("sekrit-123");
        r.add("sekrit-1234567");
        let mut v = serde_json::json!({"a": ["x sekrit-1234567 y"], "sekrit-123": 1, "n": 5});
        r.redact_json(&mut v);
        assert_eq!(
            v,
            serde_json::json!({"a": ["x [redacted] y"], "[redacted]": 1, "n": 5})
        );
    }

    #[test]
    fn values_nested_a_hundred_thousand_levels_are_redacted_whole() {
        let r = Redactor::new();
        r.add("canary-deep-7f3e");
        // Built and dropped on a thread with a large stack (serde_json's own Drop recurses);
        // redacted on one with 64 KiB, which a recursive walk would overflow at once.
        let big_stack = std::thread::Builder::new().stack_size(512 << 20);
        let outcome = big_stack.spawn(move || {
            let mut value = serde_json::json!({"leaf": "x canary-deep-7f3e y"});
            for i in 0..100_000 {
                value = if i % 2 == 0 {
                    Value::Array(vec![value, Value::from("canary-deep-7f3e")])
                } else {
                    let mut map = serde_json::Map::new();
                    map.insert("k canary-deep-7f3e".to_owned(), value);
                    Value::Object(map)
                };
            }
            let small_stack = std::thread::Builder::new().stack_size(64 << 10);
            let walked = small_stack.spawn(move || {
                r.redact_json(&mut value);
                value
            });
            let value = walked.map(std::thread::JoinHandle::join);
            value.map(|v| v.map(|v| count_and_check(&v)))
        });
        let (levels, leaked) = outcome
            .expect("spawn")
            .join()
            .expect("join")
            .expect("spawn")
            .expect("no stack overflow");
        assert_eq!((levels, leaked), (100_001, 0));
    }

    /// Arrays and objects down to the innermost one, and keys or strings still holding the
    /// canary; iterative, like the walk it checks.
    fn count_and_check(value: &Value) -> (usize, usize) {
        let (mut levels, mut leaked) = (0, 0);
        let mut next = Some(value);
        while let Some(value) = next.take() {
            let (texts, children): (Vec<&str>, Vec<&Value>) = match value {
                Value::Array(items) => (
                    items.iter().filter_map(Value::as_str).collect(),
                    items.iter().collect(),
                ),
                Value::Object(map) => (
                    map.keys()
                        .map(String::as_str)
                        .chain(map.values().filter_map(Value::as_str))
                        .collect(),
                    map.values().collect(),
                ),
                _ => continue,
            };
            levels += 1;
            leaked += texts.iter().filter(|t| t.contains("canary")).count();
            next = children.into_iter().find(|c| c.is_array() || c.is_object());
        }
        (levels, leaked)
    }

    #[test]
    fn secrets_are_caught_json_escaped_and_url_encoded() {
        let r = Redactor::new();
        let secret = r#"can"ary\va lue/1"#;
        r.add(secret);
        // What an upstream that prints its environment as JSON returns, and that JSON inside
        // another JSON text (a result serialised for the journal).
        let once = serde_json::to_string(&serde_json::json!({ "KEY": secret })).expect("json");
        let twice = serde_json::to_string(&once).expect("json");
        for text in [
            secret.to_owned(),
            once,
            twice,
            "https://x/?k=can%22ary%5Cva%20lue%2F1".to_owned(),
            "k=can%22ary%5cva+lue%2f1".to_owned(),
        ] {
            let clean = r.redact(&text);
            assert!(clean.contains(REDACTED), "{text} -> {clean}");
            assert!(!clean.contains("ary"), "{text} -> {clean}");
        }
        let mut value = serde_json::json!({"content": [{"text": format!("{{\"KEY\":{}}}", serde_json::to_string(secret).expect("json"))}]});
        r.redact_json(&mut value);
        assert!(!value.to_string().contains("ary"), "{value}");
    }

    #[test]
    fn key_bytes_are_caught_as_hex_and_base64() {
        let r = Redactor::new();
        r.add_bytes(&[0xde, 0xad, 0xbe, 0xef, 0x01]);
        assert_eq!(r.redact("k=deadbeef01"), "k=[redacted]");
        assert_eq!(r.redact("k=3q2+7wE="), "k=[redacted]");
        assert_eq!(base64(b"Man"), "TWFu");
        assert_eq!(base64(b"Ma"), "TWE=");
        assert_eq!(base64(b"M"), "TQ==");
    }

    #[test]
    fn very_short_secrets_are_ignored() {
        let r = Redactor::new();
        r.add("ab");
        assert_eq!(r.redact("abc"), "abc");
    }
}
