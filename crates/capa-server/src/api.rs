//! The JSON API under `/api` (docs/api.md): health, config, the tool list, calls, lookups,
//! connections and policy for the CLI and the UI; approvals are in `approvals_api.rs`. Every
//! route is behind the HTTP server's guard (Host, Origin, token).

mod call;
mod lookup;
mod profiles;
mod skills;

use std::sync::Arc;

use axum::extract::State;
use axum::routing::{get, post};
use axum::{Json, Router};
use capa_core::Hub;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

pub use call::{CallRequest, MAX_APPROVAL_WAIT, call_json};
pub use lookup::{DescribeApiRequest, SearchApiRequest, describe_json, search_json};
pub use profiles::{ProfileListing, profile_listings};
pub use skills::{SkillListing, skill_listings};

/// The API's routes, for the router to give the hub as state.
pub(crate) fn routes() -> Router<Arc<Hub>> {
    Router::new()
        .route("/api/health", get(health))
        .route("/api/config", get(config))
        .route("/api/secrets/store", get(secret_store))
        .route("/api/tools", get(tools))
        .route("/api/skills", get(skills::skills))
        .route("/api/profiles", get(profiles::profiles))
        .route("/api/call", post(call::call))
        .route("/api/search", post(lookup::search))
        .route("/api/tools/search", post(lookup::tool_matches))
        .route("/api/describe", post(lookup::describe))
        .route("/api/connections/reload", post(reload_connections))
        .route("/api/policy", get(policy))
        .route("/api/policy/reload", post(reload_policy))
        .route("/api/approvals", get(crate::approvals_api::pending))
        .route("/api/approvals/decide", post(crate::approvals_api::decide))
        .route(
            "/api/approvals/changed",
            post(crate::approvals_api::changed),
        )
}

async fn health() -> Json<Value> {
    Json(json!({"ok": true, "version": env!("CARGO_PKG_VERSION"), "pid": std::process::id()}))
}

async fn config(State(hub): State<Arc<Hub>>) -> Json<Value> {
    let config = hub.config();
    Json(json!({
        "files": hub.files(),
        "toolExposure": config.exposure.mode.as_str(),
        "decidedBy": config.exposure.decided_by,
        "upstreamTimeoutMs": u64::try_from(config.upstream_timeout.as_millis()).unwrap_or(u64::MAX),
        "demo": config.demo,
        "warnings": config.warnings,
        "search": hub.semantic_status(),
        "searchModelLoaded": hub.search_model_loaded(),
    }))
}

/// `GET /api/secrets/store` → `{store: keychain | file | none, file?}`: where connection secrets
/// are kept. Its own route, not part of `/api/config` (which pages poll): the first ask opens the
/// keychain's D-Bus connection, about 3 MiB a hub that never stores a secret need not hold.
async fn secret_store(State(hub): State<Arc<Hub>>) -> Json<Value> {
    let (kind, file) = hub.connections().secret_store();
    Json(match file {
        Some(file) => json!({"store": kind, "file": file}),
        None => json!({"store": kind}),
    })
}

/// A tool as the CLI lists it.
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolListing {
    pub address: String,
    pub source: String,
    pub remote_name: String,
    pub description: Option<String>,
    pub input_schema: Value,
    pub annotations: Option<Value>,
    /// What the policy decides for the tool (calls without a connection), spelled `allow`,
    /// `ask` or `deny`. Listings for models leave denied tools out; this one is the user's view.
    #[serde(default)]
    pub policy: capa_core::Decision,
    /// `changed`, `new` or `blocked` when the tool's definition waits for the person's review
    /// (docs/pinning.md); absent when it is as approved.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub review: Option<capa_core::ChangeState>,
    /// When the tool's text breaks a rule (docs/tool-text.md): the flags, the digest of that
    /// text and whether a person accepted it; `null` for clean text.
    #[serde(default)]
    pub text_review: Option<capa_core::tool_text::TextReview>,
}

/// Lists the catalog for the API and the CLI.
pub fn tool_listings(hub: &Hub) -> Vec<ToolListing> {
    let mut reviews = hub.tool_text_reviews();
    hub.catalog()
        .tools()
        .iter()
        .map(|t| ToolListing {
            address: t.address.to_string(),
            source: t.address.namespace.clone(),
            remote_name: t.remote_name.clone(),
            description: t.definition.description.clone(),
            input_schema: Value::Object((*t.definition.input_schema).clone()),
            annotations: t
                .definition
                .annotations
                .as_ref()
                .and_then(|a| serde_json::to_value(a).ok()),
            policy: hub.listing_verdict(t).decision,
            review: hub.tool_change_state(&t.address.to_string()),
            text_review: reviews.remove(&t.address.to_string()),
        })
        .collect()
}

async fn tools(State(hub): State<Arc<Hub>>) -> Json<Vec<ToolListing>> {
    hub.startup_done().await;
    Json(tool_listings(&hub))
}

async fn reload_connections(State(hub): State<Arc<Hub>>) -> Json<Value> {
    hub.connections().reload().await;
    Json(json!({"ok": true}))
}

/// `GET /api/policy`: the rules in force and the file they come from.
async fn policy(State(hub): State<Arc<Hub>>) -> Json<Value> {
    Json(json!({
        "file": hub.policy_file(),
        "rules": hub.policy().rules(),
        "held": hub.held_policy_changes(),
    }))
}

/// `POST /api/policy/reload`, after `capa policy set` or a hand edit. A broken file is
/// reported (`invalid_policy`, with its line) and the previous policy stays in force.
async fn reload_policy(State(hub): State<Arc<Hub>>) -> Json<Value> {
    match hub.reload_policy() {
        Ok(()) => {
            Json(json!({"ok": true, "file": hub.policy_file(), "rules": hub.policy().rules()}))
        }
        Err(e) => Json(json!({
            "ok": false,
            "file": hub.policy_file(),
            "error": {"code": "invalid_policy", "message": e.to_string(), "retryable": false},
        })),
    }
}
