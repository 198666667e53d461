//! The hub's JSON API as types: what [`crate::client::HubClient`] sends and gets back, the same
//! from a hub in this process as from the running hub over HTTP. Field names and order are the
//! API's (capa-server's `http` and `approvals_api`), so a value printed with `--json` reads as
//! the API's own answer.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};
use serde_json::Value;

pub use capa_server::http::{
    CallRequest, DescribeApiRequest, ProfileListing, SearchApiRequest, SkillListing, ToolListing,
};

/// An API error: a stable `code` to match on and a `message` for a person.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ApiError {
    pub code: String,
    pub message: String,
    /// Whether the same request may succeed later (call and lookup errors say; others don't).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retryable: Option<bool>,
}

/// The answer of an action that only reports success: `{ok}` or `{ok: false, error}`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Ack {
    pub ok: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<ApiError>,
}

/// `GET /api/sources`: one source's state, as the hub lists it.
pub use capa_core::SourceStatus as SourceView;

/// `GET /api/config`: the configuration the hub runs with.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ConfigView {
    pub files: Vec<PathBuf>,
    pub tool_exposure: String,
    pub decided_by: String,
    pub upstream_timeout_ms: u64,
    pub demo: bool,
    pub warnings: Vec<String>,
    /// Whether code mode's `search` ranks by meaning; absent from hubs older than it.
    #[serde(default)]
    pub search: Option<capa_core::SemanticStatus>,
}

/// A pending input as frontends show it; the preview is redacted.
pub use capa_core::PendingInput as PendingView;

/// `GET /api/approvals`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct PendingList {
    pub ok: bool,
    #[serde(default)]
    pub pending: Vec<PendingView>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<ApiError>,
}

/// `POST /api/call`: the call's result, or why there is none.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct CallAnswer {
    pub ok: bool,
    /// The tool's `CallToolResult`, as MCP shapes it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result: Option<Value>,
    /// The result was cut to the inline limit (`full` was not asked).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cut: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<ApiError>,
    /// The pending input to name when calling again (`approval_required`, `approval_pending`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub approval: Option<PendingView>,
}

impl CallAnswer {
    /// The error's code, when the call failed.
    pub fn error_code(&self) -> Option<&str> {
        self.error.as_ref().map(|e| e.code.as_str())
    }
}

/// `POST /api/search` and `/api/describe`: `{ok, text}` or `{ok: false, error}`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct LookupAnswer {
    pub ok: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<ApiError>,
}

/// `POST /api/policy/reload`: the file the hub reads, and whether it took it.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct PolicyReload {
    pub ok: bool,
    pub file: PathBuf,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<ApiError>,
}

/// `POST /api/ui/link`: `handoff` names the file in the data dir that holds the link's secret
/// (`capa ui --print`); without it the hub opens a link in the browser itself.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct UiLinkRequest {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub handoff: Option<String>,
}
