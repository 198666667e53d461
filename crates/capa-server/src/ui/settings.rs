//! Policy rules and "pause approvals" for the UI.

use axum::Json;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::Response;
use capa_core::Decision;
use serde::Deserialize;
use serde_json::json;

use super::{UiSession, UiState, fail, ok};

/// `PUT /api/policy/rule` (with `decision`) and `DELETE /api/policy/rule` (without).
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(super) struct RuleRequest {
    pub pattern: String,
    #[serde(default)]
    pub connection: Option<String>,
    #[serde(default)]
    pub decision: Option<String>,
}

fn rules(state: &UiState) -> serde_json::Value {
    json!({
        "ok": true,
        "file": state.hub.policy_file(),
        "rules": state.hub.policy().rules(),
        "held": state.hub.held_policy_changes(),
    })
}

/// `PUT /api/policy/rule {pattern, connection?, decision}`: writes the rule to `policy.yaml`.
pub(crate) async fn set_rule(
    State(state): State<UiState>,
    session: Option<axum::Extension<UiSession>>,
    Json(request): Json<RuleRequest>,
) -> Response {
    let Some(decision) = request.decision.as_deref().and_then(Decision::parse) else {
        return fail(
            StatusCode::BAD_REQUEST,
            "invalid_arguments",
            "`decision` must be allow, ask or deny",
        );
    };
    match state.hub.set_policy_rule(
        &request.pattern,
        request.connection.as_deref(),
        decision,
        UiSession::changed_by(session.as_ref()),
    ) {
        Ok(()) => ok(rules(&state)),
        Err(e) => fail(StatusCode::BAD_REQUEST, "invalid_policy", e.to_string()),
    }
}

/// `DELETE /api/policy/rule {pattern, connection?}`: removes the rule (404 when there was none).
pub(crate) async fn reset_rule(
    State(state): State<UiState>,
    session: Option<axum::Extension<UiSession>>,
    Json(request): Json<RuleRequest>,
) -> Response {
    match state.hub.reset_policy_rule(
        &request.pattern,
        request.connection.as_deref(),
        UiSession::changed_by(session.as_ref()),
    ) {
        Ok(true) => ok(rules(&state)),
        Ok(false) => fail(
            StatusCode::NOT_FOUND,
            "not_found",
            format!("no rule for `{}`", request.pattern),
        ),
        Err(e) => fail(StatusCode::BAD_REQUEST, "invalid_policy", e.to_string()),
    }
}

/// `POST /api/policy/confirm` (the UI's session only): the person confirms the policy file as
/// it is, and the changes held back take effect.
pub(crate) async fn confirm(
    State(state): State<UiState>,
    session: Option<axum::Extension<UiSession>>,
) -> Response {
    if session.is_none() {
        return super::person_required("Confirming the policy", "capa policy confirm");
    }
    match state.hub.confirm_policy() {
        Ok(()) => ok(rules(&state)),
        Err(e) => fail(StatusCode::BAD_REQUEST, "invalid_policy", e.to_string()),
    }
}

/// `POST /api/approvals/pause {paused}`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct PauseRequest {
    pub paused: bool,
}

pub(crate) async fn pause(
    State(state): State<UiState>,
    Json(request): Json<PauseRequest>,
) -> Response {
    state.hub.approvals().set_paused(request.paused);
    ok(json!({"ok": true, "paused": state.hub.approvals().paused()}))
}
