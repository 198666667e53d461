//! `POST /api/tools/accept-text {address, digest}`: a person dismisses the warning of a flagged
//! tool for the exact text they were shown (docs/tool-text.md). Block is the tool's switch
//! (`PUT /api/tools/enabled`). The bearer token alone is not a person and is refused.

use axum::Json;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::Response;
use capa_core::ToolTextError;
use serde::Deserialize;
use serde_json::json;

use super::{UiSession, UiState, fail, ok, person_required};

/// The body of `POST /api/tools/accept-text`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct AcceptText {
    pub address: String,
    /// The `textReview.digest` of the listing the person saw.
    pub digest: String,
}

/// `POST /api/tools/accept-text`.
pub(crate) async fn accept_text(
    State(state): State<UiState>,
    session: Option<axum::Extension<UiSession>>,
    Json(request): Json<AcceptText>,
) -> Response {
    let by = UiSession::changed_by(session.as_ref());
    match state
        .hub
        .accept_tool_text(&request.address, &request.digest, by)
    {
        Ok(()) => ok(json!({
            "ok": true,
            "address": request.address,
            "message": format!("{} is accepted as it reads now; a change to its text flags it again.", request.address),
        })),
        Err(ToolTextError::PersonRequired) => person_required(
            "Accepting a flagged tool",
            "capa tools accept-text <address>",
        ),
        Err(e) => {
            let status = match e {
                ToolTextError::UnknownTool(_) => StatusCode::NOT_FOUND,
                ToolTextError::Store(_) => StatusCode::SERVICE_UNAVAILABLE,
                _ => StatusCode::CONFLICT,
            };
            fail(status, e.code(), e.to_string())
        }
    }
}
