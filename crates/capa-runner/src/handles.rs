//! Large results as handles (docs/code-mode.md, "Large results"): what did not fit inline is
//! kept whole, redacted, in the store; the envelope names it in `handles`, and later runs of
//! the same client read it in pieces with `hub.read(handle, { offset, length })` or
//! `hub.read(handle, { path })`.

use capa_domain::Redactor;
use capa_sandbox::Whole;
use capa_store::{HandleBounds, HandleOf, HandleRecord, JsonType, Store};
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// How long a handle stays readable: a day, well past the hour the model needs to read it in
/// its next turns.
pub const HANDLE_KEEP_MS: i64 = 24 * 3_600_000;
/// The most bytes of kept bodies; past it the oldest handles go first.
pub const HANDLE_STORE_BYTES: u64 = 256 * 1024 * 1024;
/// What one `hub.read` answers when no `length` is given, at most: about the default inline
/// limit, and never over half the run's own (`default_length`), so that returning a piece as it
/// is fits and makes no new handle.
pub const DEFAULT_READ_BYTES: usize = 16 * 1024;
/// The most one `hub.read` answers (a `length`, or the value at a `path`).
pub const MAX_READ_BYTES: usize = 8 * 1024 * 1024;
/// The longest `preview` of a handle.
const PREVIEW_BYTES: usize = 160;

const BOUNDS: HandleBounds = HandleBounds {
    keep_ms: HANDLE_KEEP_MS,
    max_total_bytes: HANDLE_STORE_BYTES,
};

/// A kept result or log as the envelope names it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct HandleRef {
    /// What `hub.read` takes: `h_` and 32 hex digits.
    pub handle: String,
    /// The result or the logs.
    pub of: HandleOf,
    /// Its size: the compact JSON of a result, the UTF-8 of a string result or of the log lines
    /// joined by newlines — what `total` of `hub.read` counts.
    pub bytes: u64,
    #[serde(rename = "type")]
    pub value_type: JsonType,
    /// Its shape in a few words ("array of 5,000 items, each an object with id, title, …").
    pub preview: String,
}

/// Keeps what the run could not return inline; the handles for the envelope and a notice for
/// each part that could not be kept. Redacts before anything is written.
pub fn keep(
    store: &Store,
    redactor: &Redactor,
    run_id: &str,
    client: Option<&str>,
    whole: Whole,
    now_ms: i64,
) -> (Vec<HandleRef>, Vec<String>) {
    let mut handles = Vec::new();
    let mut notices = Vec::new();
    let Some(client) = client else {
        // Only the client that ran the code may read what it kept, so a run of a client that
        // did not name itself keeps nothing: any other unnamed client would read it.
        notices.push(
            "the whole result is not kept for hub.read: this client did not introduce itself by name"
                .to_owned(),
        );
        return (handles, notices);
    };
    let mut parts: Vec<(HandleOf, JsonType, String, String)> = Vec::new();
    if let Some(mut value) = whole.result {
        redactor.redact_json(&mut value);
        let preview = preview_of(&value);
        let value_type = JsonType::of(&value);
        // What `hub.read` slices, kept as it is read: a string result's own text, else the
        // compact JSON.
        let body = match value {
            Value::String(text) => Ok(text),
            other => serde_json::to_string(&other),
        };
        match body {
            Ok(body) => parts.push((HandleOf::Result, value_type, body, preview)),
            Err(e) => notices.push(format!("the whole result could not be kept: {e}")),
        }
    }
    if let Some(lines) = whole.logs {
        let body = lines
            .iter()
            .map(|line| redactor.redact(line))
            .collect::<Vec<_>>()
            .join("\n");
        let preview = format!("{} log lines", thousands(lines.len()));
        parts.push((HandleOf::Logs, JsonType::String, body, preview));
    }
    for (of, value_type, body, preview) in parts {
        let bytes = body.len() as u64;
        let Some(id) = crate::ids::new_handle_id() else {
            notices.push(format!(
                "the whole {} is not kept for hub.read: the system gave no randomness for its handle",
                of.as_str()
            ));
            continue;
        };
        let record = HandleRecord {
            id,
            run_id: run_id.to_owned(),
            client: Some(client.to_owned()),
            of,
            value_type,
            body,
            created_at_ms: now_ms,
        };
        match store.put_handle(&record, BOUNDS) {
            Ok(Some(_)) => handles.push(HandleRef {
                handle: record.id,
                of,
                bytes,
                value_type,
                preview,
            }),
            Ok(None) => notices.push(format!(
                "the whole {} ({}) is too large to keep for hub.read (at most {}); return less",
                of.as_str(),
                capa_sandbox::human_bytes(usize::try_from(bytes).unwrap_or(usize::MAX)),
                capa_sandbox::human_bytes(usize::try_from(HANDLE_STORE_BYTES).unwrap_or(0)),
            )),
            Err(e) => {
                tracing::error!(error = %e, run = %run_id, "could not keep a large result");
                notices.push(format!(
                    "the whole {} could not be kept for hub.read: the hub's database refused it",
                    of.as_str()
                ));
            }
        }
    }
    (handles, notices)
}

mod read;

pub use read::{Reader, kept_since, read};

/// The shape of a value in a few words, at most [`PREVIEW_BYTES`].
fn preview_of(value: &Value) -> String {
    let text = match value {
        Value::Array(items) => {
            let each = match items.first() {
                Some(Value::Object(map)) => format!(", the first an object with {}", keys(map)),
                Some(first) => format!(", the first a {}", JsonType::of(first).as_str()),
                None => String::new(),
            };
            format!("array of {} items{each}", thousands(items.len()))
        }
        Value::Object(map) => format!("object with {} keys: {}", thousands(map.len()), keys(map)),
        Value::String(s) => format!("string of {} characters", thousands(s.chars().count())),
        other => JsonType::of(other).as_str().to_owned(),
    };
    if text.len() <= PREVIEW_BYTES {
        return text;
    }
    let mut end = PREVIEW_BYTES - '…'.len_utf8();
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &text[..end])
}

fn keys(map: &serde_json::Map<String, Value>) -> String {
    let names: Vec<&str> = map.keys().take(8).map(String::as_str).collect();
    let more = if map.len() > names.len() { ", …" } else { "" };
    format!("{}{more}", names.join(", "))
}

/// `5000` as `5,000`.
fn thousands(n: usize) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// Keeps `whole` for the client "cli" now; the handles made.
    pub(super) fn kept(store: &Store, whole: Whole) -> Vec<HandleRef> {
        let redactor = Redactor::new();
        let now = capa_domain::clock::now_ms();
        let (handles, notices) = keep(store, &redactor, "run_1", Some("cli"), whole, now);
        assert!(notices.is_empty(), "{notices:?}");
        handles
    }

    #[test]
    fn what_is_kept_is_redacted() {
        let store = Store::in_memory().expect("store");
        let redactor = Redactor::new();
        redactor.add("s3cr\"et\\");
        let whole = Whole {
            result: Some(json!({"token": "s3cr\"et\\"})),
            logs: Some(vec!["token s3cr\"et\\".into()]),
        };
        let (handles, _) = keep(&store, &redactor, "run_1", Some("cli"), whole, 0);
        assert_eq!(handles.len(), 2);
        for h in handles {
            let record = store.handle(&h.handle, 0).expect("read").expect("kept");
            assert!(!record.body.contains("s3cr"), "{}", record.body);
        }
    }

    #[test]
    fn a_client_without_a_name_keeps_nothing_and_reads_nothing() {
        let store = Store::in_memory().expect("store");
        let whole = || Whole {
            result: Some(json!("x".repeat(100))),
            logs: None,
        };
        let (handles, notices) = keep(&store, &Redactor::new(), "run_1", None, whole(), 0);
        assert!(handles.is_empty());
        assert!(
            notices[0].contains("did not introduce itself"),
            "{notices:?}"
        );
        // Nor does an unnamed client read what a named one kept.
        let h = &kept(&store, whole())[0];
        let err = read(
            &store,
            Reader::Client(None),
            &h.handle,
            "{}",
            DEFAULT_READ_BYTES,
        )
        .expect_err("unnamed");
        assert_eq!(err.code, "handle_not_found");
        assert!(read(&store, Reader::Person, &h.handle, "{}", DEFAULT_READ_BYTES).is_ok());
    }

    #[test]
    fn previews_are_short() {
        assert_eq!(thousands(5_000_000), "5,000,000");
        let wide: serde_json::Map<String, Value> = (0..50)
            .map(|i| (format!("key_number_{i}"), json!(i)))
            .collect();
        let p = preview_of(&json!([Value::Object(wide)]));
        assert!(
            p.len() <= PREVIEW_BYTES
                && p.starts_with("array of 1 items, the first an object with key_number_0"),
            "{p}"
        );
    }
}
