//! The JSON API for approvals, used by `capabilities hub pending|approve|deny` (and the UI):
//! pending inputs, and decisions that take the same path as every other delivery.

use std::sync::Arc;

use axum::Json;
use axum::extract::State;
use capa_core::{Choice, Hub};
use serde::Deserialize;
use serde_json::{Value, json};

/// `POST /api/approvals/decide`: one approval by id, or every pending approval of a run.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct DecideRequest {
    #[serde(default)]
    pub approval_id: Option<String>,
    #[serde(default)]
    pub run_id: Option<String>,
    /// `approve_once`, `approve_run`, `always_allow` or `deny`.
    pub choice: String,
}

fn failure(code: &str, message: String) -> Json<Value> {
    Json(json!({"ok": false, "error": {"code": code, "message": message}}))
}

pub async fn pending(State(hub): State<Arc<Hub>>) -> Json<Value> {
    match hub.pending_inputs() {
        Ok(pending) => {
            Json(json!({"ok": true, "pending": pending, "paused": hub.approvals_paused()}))
        }
        Err(e) => failure(e.code(), e.to_string()),
    }
}

/// Decides for `via` (`cli`, `page`, `app`): the same rules wherever a decision comes from.
pub fn decide_json(hub: &Hub, request: &DecideRequest, via: &str) -> Value {
    let Some(choice) = Choice::parse(&request.choice) else {
        return json!({"ok": false, "error": {"code": "invalid_arguments", "message": format!(
            "unknown choice `{}`: use approve_once, approve_run, always_allow or deny",
            request.choice
        )}});
    };
    let decided = match (&request.approval_id, &request.run_id) {
        (Some(id), None) => hub.decide(id, choice, via).map(|()| 1),
        (None, Some(run)) => hub.decide_run(run, choice, via),
        _ => {
            return json!({"ok": false, "error": {"code": "invalid_arguments",
                "message": "send exactly one of approvalId or runId"}});
        }
    };
    match decided {
        Ok(count) => json!({"ok": true, "decided": count, "choice": choice.as_str()}),
        Err(e) => json!({"ok": false, "error": {"code": e.code(), "message": e.to_string()}}),
    }
}

/// Decisions taken through a UI session (the app's window or a browser) are recorded as `app`.
pub async fn decide(
    State(hub): State<Arc<Hub>>,
    session: Option<axum::Extension<crate::ui::UiSession>>,
    Json(request): Json<DecideRequest>,
) -> Json<Value> {
    let via = if session.is_some() { "app" } else { "cli" };
    Json(decide_json(&hub, &request, via))
}
