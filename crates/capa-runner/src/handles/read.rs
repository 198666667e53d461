//! `hub.read(handle, options)`: a piece of a kept result's text, or the value at a path, for
//! the client that kept it (or a person in run history).

use capa_sandbox::ToolFailure;
use capa_store::{HandleOf, HandleRecord, JsonType, Store};
use serde::Deserialize;
use serde_json::Value;

use super::{DEFAULT_READ_BYTES, HANDLE_KEEP_MS, HANDLE_STORE_BYTES, MAX_READ_BYTES};
use crate::handle_path;

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
        "hub.read(handle) reads the first piece; hub.read(handle, { offset, length }) any piece (UTF-8 bytes); hub.read(handle, { path: \"items[3].body\" }) one value."
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::handles::keep;
    use crate::handles::tests::kept;
    use capa_domain::Redactor;
    use capa_sandbox::Whole;
    use serde_json::json;

    const CLI: Reader<'static> = Reader::Client(Some("cli"));

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
}
