//! Run history for the UI: `GET /api/runs` (filtered, newest first) and `GET /api/runs/<id>`
//! (code, envelope, journal, approvals and kept results), and pieces of kept results
//! (`GET /api/runs/<id>/handles/<handle>`). Everything shown was redacted when stored and is
//! redacted again on the way out; previews are bounded.

use axum::extract::{Path, State};
use axum::http::{StatusCode, Uri};
use axum::response::Response;
use capa_core::RunHistory;
use capa_store::{RunFilter, RunSummary};
use serde_json::{Value, json};

use super::{UiState, fail, ok};

/// Longest preview of a journaled call's arguments or outcome, in characters.
const PREVIEW_CHARS: usize = 2_000;
const DEFAULT_LIMIT: u32 = 50;
const MAX_LIMIT: u32 = 500;

/// `%xx` and `+` decoded.
fn decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'+' => out.push(b' '),
            b'%' => {
                let byte = bytes
                    .get(i + 1..i + 3)
                    .and_then(|h| std::str::from_utf8(h).ok())
                    .and_then(|h| u8::from_str_radix(h, 16).ok());
                match byte {
                    Some(b) => {
                        out.push(b);
                        i += 2;
                    }
                    None => out.push(b'%'),
                }
            }
            b => out.push(b),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

fn query_pairs(uri: &Uri) -> Vec<(String, String)> {
    uri.query()
        .unwrap_or_default()
        .split('&')
        .filter(|p| !p.is_empty())
        .map(|pair| {
            let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
            (decode(k), decode(v))
        })
        .collect()
}

fn filter_of(uri: &Uri) -> Result<RunFilter, String> {
    let mut filter = RunFilter {
        limit: DEFAULT_LIMIT,
        ..RunFilter::default()
    };
    for (key, value) in query_pairs(uri) {
        if value.is_empty() {
            continue;
        }
        match key.as_str() {
            "status" => {
                let known = capa_store::RunState::ALL
                    .map(capa_store::RunState::as_str)
                    .join(", ");
                filter.status =
                    Some(capa_store::RunState::parse(&value).ok_or_else(|| {
                        format!("`status` must be one of {known}, not {value:?}")
                    })?);
            }
            "source" => filter.source = Some(value),
            "since" => {
                filter.since_ms = Some(value.parse().map_err(|_| {
                    format!("`since` must be milliseconds since the epoch, not {value:?}")
                })?);
            }
            "limit" => {
                let limit: u32 = value
                    .parse()
                    .map_err(|_| format!("`limit` must be a number, not {value:?}"))?;
                filter.limit = limit.clamp(1, MAX_LIMIT);
            }
            other => {
                return Err(format!(
                    "unknown filter `{other}`: use status, source, since, limit"
                ));
            }
        }
    }
    Ok(filter)
}

fn summary(run: &RunSummary) -> Value {
    json!({
        "id": run.id,
        "status": run.status.as_str(),
        "client": run.client,
        "createdAtMs": run.created_at_ms,
        "updatedAtMs": run.updated_at_ms,
        "attempts": run.attempts,
        "addresses": run.addresses,
        "resultBytes": run.result_bytes,
    })
}

/// `GET /api/runs?status=&source=&since=&limit=`.
pub(crate) async fn list(State(state): State<UiState>, uri: Uri) -> Response {
    let filter = match filter_of(&uri) {
        Ok(filter) => filter,
        Err(message) => return fail(StatusCode::BAD_REQUEST, "invalid_arguments", message),
    };
    match state.hub.runs().find(&filter) {
        Ok(runs) => ok(json!({"ok": true, "runs": runs.iter().map(summary).collect::<Vec<_>>()})),
        Err(e) => fail(StatusCode::INTERNAL_SERVER_ERROR, "store", e.to_string()),
    }
}

/// `text` cut to [`PREVIEW_CHARS`] characters, marked when cut.
fn bounded(text: &str) -> Value {
    if text.chars().count() <= PREVIEW_CHARS {
        return json!({"text": text, "truncated": false});
    }
    let cut: String = text.chars().take(PREVIEW_CHARS).collect();
    json!({"text": format!("{cut}…"), "truncated": true})
}

/// `GET /api/runs/<id>`.
pub(crate) async fn detail(State(state): State<UiState>, Path(id): Path<String>) -> Response {
    let history = match state.hub.runs().history(&id) {
        Ok(Some(history)) => history,
        Ok(None) => return fail(StatusCode::NOT_FOUND, "not_found", format!("no run `{id}`")),
        Err(e) => return fail(StatusCode::INTERNAL_SERVER_ERROR, "store", e.to_string()),
    };
    let RunHistory {
        run,
        journal,
        inputs: approvals,
        handles,
    } = history;
    let envelope = run
        .envelope
        .as_deref()
        .map(|text| serde_json::from_str::<Value>(&state.hub.redact(text)).unwrap_or(Value::Null));
    let calls: Vec<Value> = journal
        .iter()
        .map(|entry| {
            json!({
                "index": entry.index,
                "address": entry.address,
                "connection": entry.connection,
                "ok": entry.ok,
                // Sent, never answered: the hub stopped while the call was in flight.
                "inFlight": entry.in_flight,
                "ms": entry.ms,
                "arguments": bounded(&state.hub.redact(&entry.arguments)),
                "outcome": bounded(&state.hub.redact(&entry.outcome)),
            })
        })
        .collect();
    let approvals: Vec<Value> = approvals
        .iter()
        .map(|a| {
            json!({
                "id": a.id,
                "kind": a.kind,
                "callIndex": a.call_index,
                "address": a.address,
                "connection": a.connection,
                "reason": a.reason,
                "status": a.status.as_str(),
                "scope": a.scope,
                "decidedVia": a.decided_via,
                "createdAtMs": a.created_at_ms,
                "decidedAtMs": a.decided_at_ms,
            })
        })
        .collect();
    ok(json!({
        "ok": true,
        "run": {
            "id": run.id,
            "status": run.status.as_str(),
            "client": run.client,
            "createdAtMs": run.created_at_ms,
            "updatedAtMs": run.updated_at_ms,
            "attempts": run.attempts,
            "resumable": run.resumable,
            "code": state.hub.redact(&run.code),
            "envelope": envelope,
            "calls": calls,
            "approvals": approvals,
            // Of the envelope's `handles`, those still kept (a day at most).
            "keptHandles": handles,
        }
    }))
}

/// `GET /api/runs/<id>/handles/<handle>?offset=&length=`: a piece of what the run kept whole
/// for `hub.read`, as `hub.read` answers (`{data, offset, total, next}`); its text was redacted
/// when kept and is again here.
pub(crate) async fn handle_piece(
    State(state): State<UiState>,
    Path((id, handle)): Path<(String, String)>,
    uri: Uri,
) -> Response {
    let mut options = serde_json::Map::new();
    for (key, value) in query_pairs(&uri) {
        match (key.as_str(), value.parse::<u64>()) {
            ("offset" | "length", Ok(n)) => {
                options.insert(key, json!(n));
            }
            _ => {
                return fail(
                    StatusCode::BAD_REQUEST,
                    "invalid_arguments",
                    format!("`{key}` is not a filter here: use offset and length (numbers)"),
                );
            }
        }
    }
    let hub = state.hub.clone();
    let options = Value::Object(options).to_string();
    let read =
        tokio::task::spawn_blocking(move || hub.runs().read_handle(&id, &handle, &options)).await;
    match read {
        Ok(Ok(Some(Ok(piece)))) => ok(json!({"ok": true, "piece": piece})),
        Ok(Ok(Some(Err(failure)))) => fail(StatusCode::BAD_REQUEST, &failure.code, failure.message),
        Ok(Ok(None)) => fail(
            StatusCode::NOT_FOUND,
            "not_found",
            "this run kept no such result, or it is no longer kept (a day at most)".to_owned(),
        ),
        Ok(Err(e)) => fail(StatusCode::INTERNAL_SERVER_ERROR, "store", e.to_string()),
        Err(_) => fail(
            StatusCode::INTERNAL_SERVER_ERROR,
            "internal",
            "the read failed".to_owned(),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn filters_are_read_from_the_query() {
        let uri: Uri = "/api/runs?status=completed&source=demo&since=5&limit=9999&x="
            .parse()
            .expect("uri");
        let filter = filter_of(&uri).expect("filter");
        assert_eq!(filter.status, Some(capa_store::RunState::Completed));
        assert_eq!(filter.source.as_deref(), Some("demo"));
        assert_eq!(filter.since_ms, Some(5));
        assert_eq!(filter.limit, MAX_LIMIT);
        assert!(filter_of(&"/api/runs?since=soon".parse().expect("uri")).is_err());
        assert!(filter_of(&"/api/runs?status=done".parse().expect("uri")).is_err());
        assert_eq!(decode("a%20b+c%2"), "a b c%2");
    }
}
