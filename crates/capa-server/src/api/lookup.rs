//! `POST /api/search` and `POST /api/describe`: code mode's lookups, for `capa search`,
//! `capa describe` and the UI.

use std::sync::Arc;

use axum::Json;
use axum::extract::State;
use capa_core::Hub;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

/// `POST /api/search`: the `search` lookup, for `capa search` and the UI.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SearchApiRequest {
    pub query: String,
    #[serde(default)]
    pub namespace: Option<String>,
    #[serde(default)]
    pub limit: Option<i64>,
}

/// `POST /api/describe`: the `describe` lookup.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct DescribeApiRequest {
    pub targets: Vec<String>,
}

/// A lookup's answer as the API and `--json` print it: `{ok, text}` or `{ok, error}`.
fn lookup_json(answer: Result<String, capa_core::LookupError>) -> Value {
    match answer {
        Ok(text) => json!({"ok": true, "text": text}),
        Err(e) => {
            json!({"ok": false, "error": {"code": e.code(), "message": e.to_string(), "retryable": e.retryable()}})
        }
    }
}

pub async fn search_json(hub: &Hub, request: SearchApiRequest) -> Value {
    let request = capa_core::SearchRequest {
        query: request.query,
        namespace: request.namespace,
        limit: request.limit,
    };
    lookup_json(hub.search(&request).await)
}

pub async fn describe_json(hub: &Hub, request: DescribeApiRequest) -> Value {
    lookup_json(hub.describe(&request.targets).await)
}

pub(super) async fn search(
    State(hub): State<Arc<Hub>>,
    Json(request): Json<SearchApiRequest>,
) -> Json<Value> {
    Json(search_json(&hub, request).await)
}

pub(super) async fn describe(
    State(hub): State<Arc<Hub>>,
    Json(request): Json<DescribeApiRequest>,
) -> Json<Value> {
    Json(describe_json(&hub, request).await)
}

/// `POST /api/tools/search`: `{query}` → `{ok, matches: [{address, score}]}`, best first, every
/// tool the query matches whatever the policy says of it (the Tools page's filter).
#[derive(Debug, Clone, Deserialize)]
pub(super) struct ToolMatchRequest {
    query: String,
}

pub(super) async fn tool_matches(
    State(hub): State<Arc<Hub>>,
    Json(request): Json<ToolMatchRequest>,
) -> Json<Value> {
    Json(match hub.matching_tools(&request.query).await {
        Ok(matches) => json!({"ok": true, "matches": matches}),
        Err(e) => {
            json!({"ok": false, "error": {"code": e.code(), "message": e.to_string(), "retryable": e.retryable()}})
        }
    })
}
