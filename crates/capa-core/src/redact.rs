//! Redaction of known secret values: the one place where data leaving the core is cleaned.
//!
//! The hub registers every connection secret it loads. Tool results, error messages, database
//! texts and log lines pass through [`Redactor`] before they leave, so an upstream that echoes its
//! environment (or a header) cannot leak a credential to a client, a log or the history.

use std::io::Write;
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
    secrets: RwLock<Vec<String>>,
}

impl Redactor {
    pub fn new() -> Arc<Self> {
        Arc::new(Self::default())
    }

    /// Adds a secret value.
    pub fn add(&self, secret: &str) {
        if secret.len() < MIN_SECRET_LEN {
            return;
        }
        if let Ok(mut secrets) = self.secrets.write()
            && !secrets.iter().any(|s| s == secret)
        {
            secrets.push(secret.to_owned());
            secrets.sort_by_key(|s| std::cmp::Reverse(s.len()));
        }
    }

    /// Whether no secret is known (nothing to redact).
    pub fn is_empty(&self) -> bool {
        self.secrets.read().map(|s| s.is_empty()).unwrap_or(false)
    }

    /// Replaces every known secret in `text`.
    pub fn redact(&self, text: &str) -> String {
        let Ok(secrets) = self.secrets.read() else {
            // A poisoned lock means a panic elsewhere; refuse to pass text through unchecked.
            return REDACTED.to_owned();
        };
        let mut out = text.to_owned();
        for secret in secrets.iter() {
            if out.contains(secret.as_str()) {
                out = out.replace(secret.as_str(), REDACTED);
            }
        }
        out
    }

    /// Whether `text` holds a known secret.
    pub fn contains_secret(&self, text: &str) -> bool {
        self.secrets
            .read()
            .map(|s| s.iter().any(|secret| text.contains(secret.as_str())))
            .unwrap_or(true)
    }

    /// Redacts every string (keys included) of a JSON value in place.
    pub fn redact_json(&self, value: &mut Value) {
        match value {
            Value::String(s) => {
                if self.contains_secret(s) {
                    *s = self.redact(s);
                }
            }
            Value::Array(items) => items.iter_mut().for_each(|v| self.redact_json(v)),
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
                map.values_mut().for_each(|v| self.redact_json(v));
            }
            Value::Null | Value::Bool(_) | Value::Number(_) => {}
        }
    }

    /// A `tracing_subscriber` writer factory that redacts every log line written to `inner`.
    pub fn writer<W>(self: &Arc<Self>, inner: W) -> RedactingMakeWriter<W> {
        RedactingMakeWriter {
            redactor: self.clone(),
            inner,
        }
    }
}

/// Makes [`RedactingWriter`]s over a base writer factory (for example `std::io::stderr`).
#[derive(Debug, Clone)]
pub struct RedactingMakeWriter<W> {
    redactor: Arc<Redactor>,
    inner: W,
}

/// Buffers one log record and writes it redacted when dropped (tracing writes a record, then drops
/// the writer), so a secret split across two `write` calls is still caught.
#[derive(Debug)]
pub struct RedactingWriter<W: Write> {
    redactor: Arc<Redactor>,
    buffer: Vec<u8>,
    inner: W,
}

impl<W: Write> Write for RedactingWriter<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.buffer.extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        let text = String::from_utf8_lossy(&self.buffer);
        let clean = self.redactor.redact(&text);
        self.buffer.clear();
        self.inner.write_all(clean.as_bytes())?;
        self.inner.flush()
    }
}

impl<W: Write> Drop for RedactingWriter<W> {
    fn drop(&mut self) {
        let _ = self.flush();
    }
}

impl<'a, M> tracing_subscriber::fmt::MakeWriter<'a> for RedactingMakeWriter<M>
where
    M: tracing_subscriber::fmt::MakeWriter<'a>,
{
    type Writer = RedactingWriter<M::Writer>;
    fn make_writer(&'a self) -> Self::Writer {
        RedactingWriter {
            redactor: self.redactor.clone(),
            buffer: Vec::with_capacity(256),
            inner: self.inner.make_writer(),
        }
    }
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
    fn log_lines_are_redacted_even_when_split_across_writes() {
        let r = Redactor::new();
        r.add("canary-value");
        let mut out = Vec::new();
        {
            let mut w = RedactingWriter {
                redactor: r.clone(),
                buffer: Vec::new(),
                inner: &mut out,
            };
            w.write_all(b"env canary-").expect("write");
            w.write_all(b"value end\n").expect("write");
        }
        assert_eq!(
            String::from_utf8(out).expect("utf8"),
            "env [redacted] end\n"
        );
    }

    #[test]
    fn very_short_secrets_are_ignored() {
        let r = Redactor::new();
        r.add("ab");
        assert_eq!(r.redact("abc"), "abc");
    }
}
