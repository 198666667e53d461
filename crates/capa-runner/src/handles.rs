//! Large results as handles (docs/code-mode.md, "Large results"): what did not fit inline is
//! kept whole, redacted, in the store; the envelope names it in `handles`, and later runs of
//! the same client read it in pieces with `hub.read(handle, { offset, length })` or
//! `hub.read(handle, { path })`.

use capa_domain::Redactor;
use capa_sandbox::{ToolFailure, Whole};
use capa_store::{HandleBounds, HandleOf, HandleRecord, JsonType, Store};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::handle_path;

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
pub(crate) fn keep(
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

/// `hub.read`'s options, as the guest sent them.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct ReadOptions {
    offset: Option<Value>,
    length: Option<Value>,
    path: Option<Value>,
}

fn invalid(message: impl Into<String>) -> ToolFailure {
    let mut f = ToolFailure::new("invalid_arguments", message);
    f.hint = Some(
        "hub.read(handle) reads the first 16 KB; hub.read(handle, { offset, length }) a piece (UTF-8 bytes); hub.read(handle, { path: \"items[3].body\" }) one value."
            .to_owned(),
    );
    f
}

fn count(name: &str, value: Option<&Value>, min: u64) -> Result<Option<usize>, ToolFailure> {
    match value {
        None | Some(Value::Null) => Ok(None),
        Some(v) => v
            .as_u64()
            .filter(|n| *n >= min)
            .map(|n| Some(usize::try_from(n).unwrap_or(usize::MAX)))
            .ok_or_else(|| {
                invalid(format!(
                    "`{name}` is a whole number of at least {min}, not {v}"
                ))
            }),
    }
}

/// Who reads a handle.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reader<'a> {
    /// A run of this client (its name as it introduced itself): only its own handles. A client
    /// without a name reads none.
    Client(Option<&'a str>),
    /// A person in the app's run history: every handle.
    Person,
}

impl Reader<'_> {
    fn may_read(self, owner: Option<&str>) -> bool {
        match self {
            Self::Client(Some(client)) => owner == Some(client),
            Self::Client(None) => false,
            Self::Person => true,
        }
    }
}

/// The oldest creation time of a handle still kept at `now_ms`.
pub fn kept_since(now_ms: i64) -> i64 {
    now_ms.saturating_sub(HANDLE_KEEP_MS)
}

/// `hub.read(handle, options)`: `{ data, offset, total, next }`. A handle of another client
/// reads as unknown, like one that was never made. `default_length` is the piece read when
/// no `length` is given (at most [`DEFAULT_READ_BYTES`]). Blocking: SQLite, and for a `path`
/// the whole kept JSON parsed; a piece reads only its own bytes.
pub fn read(
    store: &Store,
    reader: Reader<'_>,
    handle: &str,
    options: &str,
    default_length: usize,
) -> Result<Value, ToolFailure> {
    let options: ReadOptions =
        serde_json::from_str(options).map_err(|e| invalid(format!("hub.read options: {e}")))?;
    let offset = count("offset", options.offset.as_ref(), 0)?;
    let length = count("length", options.length.as_ref(), 1)?;
    let path = match &options.path {
        None | Some(Value::Null) => None,
        Some(Value::String(p)) => Some(handle_path::parse(p).map_err(invalid)?),
        Some(other) => {
            return Err(invalid(format!(
                "`path` is a string like \"items[3].body\", not {other}"
            )));
        }
    };
    if length.is_some_and(|n| n > MAX_READ_BYTES) {
        return Err(invalid(format!(
            "`length` is at most {MAX_READ_BYTES} bytes; read in several pieces"
        )));
    }
    let since = kept_since(capa_domain::clock::now_ms());
    let default_length = default_length.clamp(1, DEFAULT_READ_BYTES);
    if let Some(steps) = path {
        let record = store
            .handle(handle, since)
            .map_err(|e| database(&e))?
            .filter(|r| reader.may_read(r.client.as_deref()))
            .ok_or_else(|| unknown(handle))?;
        return read_path(record, &steps, offset, length, default_length);
    }
    let info = store
        .handle_info(handle, since)
        .map_err(|e| database(&e))?
        .filter(|i| reader.may_read(i.client.as_deref()))
        .ok_or_else(|| unknown(handle))?;
    let total = usize::try_from(info.summary.bytes).unwrap_or(usize::MAX);
    read_piece(
        store,
        handle,
        total,
        offset.unwrap_or(0),
        length.unwrap_or(default_length),
    )
}

fn database(e: &capa_store::StoreError) -> ToolFailure {
    ToolFailure::new("internal", format!("the hub's database: {e}"))
}

/// The value at `steps` of a kept result, or a piece of its text with `offset`/`length`
/// (`default_length` when only `offset` is given).
fn read_path(
    record: HandleRecord,
    steps: &[handle_path::Step],
    offset: Option<usize>,
    length: Option<usize>,
    default_length: usize,
) -> Result<Value, ToolFailure> {
    if record.of == HandleOf::Logs {
        return Err(invalid(
            "a logs handle is text: read it with { offset, length }, not a path",
        ));
    }
    let value: Value = if record.value_type == JsonType::String {
        Value::String(record.body)
    } else {
        serde_json::from_str(&record.body)
            .map_err(|e| ToolFailure::new("internal", format!("a kept result is damaged: {e}")))?
    };
    let found = handle_path::select(&value, steps).map_err(|why| {
        let mut f = ToolFailure::new("not_found", why);
        f.hint = Some("Read a shorter path first to see what is there.".to_owned());
        f
    })?;
    if offset.is_some() || length.is_some() {
        let text = match found {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        };
        return Ok(slice(
            &text,
            offset.unwrap_or(0),
            length.unwrap_or(default_length),
        ));
    }
    let total = serde_json::to_string(found).map_or(0, |s| s.len());
    if total > MAX_READ_BYTES {
        return Err(invalid(format!(
            "the value at that path is {total} bytes, over the {MAX_READ_BYTES} one read answers; read a deeper path, or pieces with {{ offset, length }}"
        )));
    }
    Ok(serde_json::json!({ "data": found, "offset": 0, "total": total, "next": null }))
}

/// `length` bytes of a kept body of `total` bytes from `offset`, read from the store alone
/// (never the whole body), both ends moved back to character boundaries as [`slice`] does.
fn read_piece(
    store: &Store,
    handle: &str,
    total: usize,
    offset: usize,
    length: usize,
) -> Result<Value, ToolFailure> {
    let start = offset.min(total);
    let end = start.saturating_add(length).min(total);
    // A UTF-8 character is at most 4 bytes: 3 bytes before `start` and 4 after `end` hold the
    // starts of the characters either end is inside (the piece ends at or before `end`).
    let from = start.saturating_sub(3);
    let to = end.saturating_add(4).min(total);
    let window = store
        .handle_bytes(handle, from as u64, to - from)
        .map_err(|e| database(&e))?
        .ok_or_else(|| unknown(handle))?;
    let damaged = || ToolFailure::new("internal", "a kept result is damaged");
    if window.len() != to - from {
        return Err(damaged());
    }
    // The window may begin inside a character: boundaries are found on its bytes.
    let boundary =
        |at: usize| at == total || window.get(at - from).is_some_and(|b| b & 0xC0 != 0x80);
    let mut s = start;
    while s > from && !boundary(s) {
        s -= 1;
    }
    // Like `slice`: the piece is `length` bytes from where it really starts.
    let mut e = s.saturating_add(length).min(total);
    while e > s && !boundary(e) {
        e -= 1;
    }
    if e == s && s < total {
        e = s + 1;
        while e < to && !boundary(e) {
            e += 1;
        }
    }
    let data = window
        .get(s - from..e - from)
        .and_then(|bytes| std::str::from_utf8(bytes).ok())
        .ok_or_else(damaged)?;
    let next = (e < total).then_some(e);
    Ok(serde_json::json!({ "data": data, "offset": s, "total": total, "next": next }))
}

fn unknown(handle: &str) -> ToolFailure {
    let mut f = ToolFailure::new(
        "handle_not_found",
        format!("no kept result `{handle}` for this client"),
    );
    f.hint = Some(format!(
        "Handles come from the `handles` of an earlier execute of the same client and are kept for {} hours, the oldest dropped first past {} MB; run the code again to get a new one.",
        HANDLE_KEEP_MS / 3_600_000,
        HANDLE_STORE_BYTES / (1024 * 1024)
    ));
    f
}

/// `{ data, offset, total, next }` for `length` bytes of `text` from `offset`, both moved back
/// to character boundaries (a piece is never empty before the end); `next` is where the
/// `{ data, offset, total, next }` for `length` bytes of `text` from `offset`, both moved back
/// to character boundaries (a piece is never empty before the end); `next` is where the
/// following piece starts, `null` at the end.
fn slice(text: &str, offset: usize, length: usize) -> Value {
    let total = text.len();
    let mut start = offset.min(total);
    while !text.is_char_boundary(start) {
        start -= 1;
    }
    let mut end = start.saturating_add(length).min(total);
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    if end == start && start < total {
        end = start + text[start..].chars().next().map_or(1, char::len_utf8);
    }
    let next = (end < total).then_some(end);
    serde_json::json!({ "data": &text[start..end], "offset": start, "total": total, "next": next })
}

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

    const CLI: Reader<'static> = Reader::Client(Some("cli"));

    fn kept(store: &Store, whole: Whole) -> Vec<HandleRef> {
        let redactor = Redactor::new();
        let now = capa_domain::clock::now_ms();
        let (handles, notices) = keep(store, &redactor, "run_1", Some("cli"), whole, now);
        assert!(notices.is_empty(), "{notices:?}");
        handles
    }

    #[test]
    fn a_result_reads_back_in_pieces_and_by_path() {
        let store = Store::in_memory().expect("store");
        let value = json!({"items": (0..2000).map(|i| json!({"id": i, "body": format!("é{i}")})).collect::<Vec<_>>()});
        let handles = kept(
            &store,
            Whole {
                result: Some(value.clone()),
                logs: None,
            },
        );
        let h = &handles[0];
        assert_eq!((h.of, h.value_type), (HandleOf::Result, JsonType::Object));
        assert_eq!(h.preview, "object with 1 keys: items");
        let text = value.to_string();
        assert_eq!(h.bytes, text.len() as u64);
        // Pieces put back together are the whole JSON, whatever the length.
        let mut got = String::new();
        let mut offset: Option<u64> = Some(0);
        while let Some(at) = offset {
            let piece = read(
                &store,
                CLI,
                &h.handle,
                &format!("{{\"offset\":{at},\"length\":7001}}"),
                DEFAULT_READ_BYTES,
            )
            .expect("piece");
            got.push_str(piece["data"].as_str().expect("text"));
            offset = piece["next"].as_u64();
        }
        assert_eq!(got, text);
        let one = read(
            &store,
            CLI,
            &h.handle,
            r#"{"path":"items[1999].body"}"#,
            DEFAULT_READ_BYTES,
        )
        .expect("path");
        assert_eq!(one["data"], json!("é1999"));
        // Another client, or a made-up handle, finds nothing.
        for (client, handle) in [(Some("other"), h.handle.as_str()), (Some("cli"), "h_0")] {
            let err = read(
                &store,
                Reader::Client(client),
                handle,
                "{}",
                DEFAULT_READ_BYTES,
            )
            .expect_err("unknown");
            assert_eq!(err.code, "handle_not_found");
        }
        for bad in [
            r#"{"offset":-1}"#,
            r#"{"length":0}"#,
            r#"{"path":3}"#,
            r#"{"paths":"x"}"#,
            "[]",
        ] {
            let err = read(&store, CLI, &h.handle, bad, DEFAULT_READ_BYTES).expect_err(bad);
            assert_eq!(err.code, "invalid_arguments", "{bad}");
        }
    }

    #[test]
    fn a_string_result_and_logs_are_read_as_text_at_character_boundaries() {
        let store = Store::in_memory().expect("store");
        let handles = kept(
            &store,
            Whole {
                result: Some(json!("ééé\"x")),
                logs: Some(vec!["a".into(), "b".into()]),
            },
        );
        let s = read(
            &store,
            CLI,
            &handles[0].handle,
            r#"{"offset":1,"length":1}"#,
            DEFAULT_READ_BYTES,
        )
        .expect("read");
        assert_eq!(s, json!({"data": "é", "offset": 0, "total": 8, "next": 2}));
        assert_eq!(handles[0].bytes, 8);
        let logs = read(&store, CLI, &handles[1].handle, "{}", DEFAULT_READ_BYTES).expect("logs");
        assert_eq!(
            logs,
            json!({"data": "a\nb", "offset": 0, "total": 3, "next": null})
        );
        assert_eq!(handles[1].preview, "2 log lines");
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
    fn a_handle_past_its_day_is_not_found() {
        let store = Store::in_memory().expect("store");
        let whole = Whole {
            result: Some(json!([1, 2, 3])),
            logs: None,
        };
        let day_ago = capa_domain::clock::now_ms() - HANDLE_KEEP_MS - 1_000;
        let (handles, _) = keep(
            &store,
            &Redactor::new(),
            "run_1",
            Some("cli"),
            whole,
            day_ago,
        );
        let err =
            read(&store, CLI, &handles[0].handle, "{}", DEFAULT_READ_BYTES).expect_err("expired");
        assert_eq!(err.code, "handle_not_found");
    }

    /// Pieces read from the store's bytes are the same as slicing the text in memory, for
    /// every offset and several lengths over text of 1- to 4-byte characters.
    #[test]
    fn pieces_from_the_store_match_slices_of_the_text() {
        let store = Store::in_memory().expect("store");
        let text = "aé€😀".repeat(20);
        let h = &kept(
            &store,
            Whole {
                result: Some(json!(text)),
                logs: None,
            },
        )[0];
        assert_eq!(h.bytes, text.len() as u64);
        for offset in 0..=text.len() + 2 {
            for length in [1, 2, 3, 5, 9, 64] {
                let options = format!(r#"{{"offset":{offset},"length":{length}}}"#);
                let piece =
                    read(&store, CLI, &h.handle, &options, DEFAULT_READ_BYTES).expect("piece");
                assert_eq!(piece, slice(&text, offset, length), "{options}");
            }
        }
        // Without a length, the piece is the caller's default.
        let piece = read(&store, CLI, &h.handle, "{}", 10).expect("piece");
        assert_eq!(piece, slice(&text, 0, 10));
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
