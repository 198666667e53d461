//! `GET /api/sources/<id>/logs?after=<seq>`: a source's log — its child's stderr and the hub's
//! lines about it — from the hub's bounded ring in memory (`capa_upstream::SourceLog`), redacted.
//! Live views ask again with the `next` they were given (polling: one bounded page a time).

use axum::extract::{Path, State};
use axum::http::{StatusCode, Uri};
use axum::response::Response;
use serde_json::json;

use super::{UiState, fail, ok};

/// The `after` of the query: 0 (everything kept) when absent.
fn after_of(uri: &Uri) -> Result<u64, String> {
    let mut after = 0;
    for pair in uri.query().unwrap_or_default().split('&') {
        let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
        match key {
            "" => {}
            "after" if value.is_empty() => {}
            "after" => {
                after = value.parse().map_err(|_| {
                    format!("`after` must be a line number (the `next` of the last answer), not {value:?}")
                })?;
            }
            other => return Err(format!("unknown parameter `{other}`: use after")),
        }
    }
    Ok(after)
}

pub(crate) async fn logs(
    State(state): State<UiState>,
    Path(id): Path<String>,
    uri: Uri,
) -> Response {
    let after = match after_of(&uri) {
        Ok(after) => after,
        Err(message) => return fail(StatusCode::BAD_REQUEST, "invalid_arguments", message),
    };
    match state.hub.sources().log_after(&id, after) {
        Some(page) => ok(json!({
            "ok": true,
            "lines": page.lines,
            "dropped": page.dropped,
            "next": page.next,
        })),
        None => fail(
            StatusCode::NOT_FOUND,
            "not_found",
            format!("no source `{id}`: `capa sources list` shows them"),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_after_from_the_query() {
        let uri = |q: &str| q.parse::<Uri>().unwrap_or_default();
        assert_eq!(after_of(&uri("/api/sources/a/logs")), Ok(0));
        assert_eq!(after_of(&uri("/api/sources/a/logs?after=17")), Ok(17));
        assert_eq!(after_of(&uri("/api/sources/a/logs?after=")), Ok(0));
        assert!(after_of(&uri("/api/sources/a/logs?after=-1")).is_err());
        assert!(after_of(&uri("/api/sources/a/logs?since=3")).is_err());
    }
}
