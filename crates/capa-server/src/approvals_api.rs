//! The JSON API for approvals: pending inputs (for `capabilities hub pending` and the UI), and
//! decisions — only from the UI's session (the app's window, or a browser the hub opened a login
//! link in), never for the bearer token alone, which every local process that reads the token
//! file holds. A terminal decides in the database and tells the hub with `changed`.

use std::sync::Arc;

use axum::Json;
use axum::extract::State;
use axum::http::StatusCode;
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

fn failure(code: &str, message: &str) -> Json<Value> {
    Json(json!({"ok": false, "error": {"code": code, "message": message}}))
}

pub async fn pending(State(hub): State<Arc<Hub>>) -> Json<Value> {
    match hub.approvals().pending() {
        Ok(pending) => {
            Json(json!({"ok": true, "pending": pending, "paused": hub.approvals().paused()}))
        }
        Err(e) => failure(e.code(), &e.to_string()),
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
        (Some(id), None) => hub.approvals().decide(id, choice, via).map(|()| 1),
        (None, Some(run)) => hub.approvals().decide_run(run, choice, via),
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

/// Decisions taken through a UI session (the app's window or a browser), recorded as `app`.
/// The bearer token alone is refused (`403`).
pub async fn decide(
    State(hub): State<Arc<Hub>>,
    session: Option<axum::Extension<crate::ui::UiSession>>,
    Json(request): Json<DecideRequest>,
) -> (StatusCode, Json<Value>) {
    if session.is_none() {
        return (
            StatusCode::FORBIDDEN,
            failure(
                "person_required",
                "decisions need a person: in the Capabilities app, on the approval page, or with `capabilities hub approve` at an interactive terminal; the hub's token alone cannot approve",
            ),
        );
    }
    (StatusCode::OK, Json(decide_json(&hub, &request, "app")))
}

/// `POST /api/approvals/changed`: an interactive terminal stored decisions (or an allow rule)
/// in the hub's files; look at them now. Grants nothing by itself.
pub async fn changed(State(hub): State<Arc<Hub>>) -> Json<Value> {
    hub.approvals().changed_elsewhere();
    Json(json!({"ok": true}))
}
