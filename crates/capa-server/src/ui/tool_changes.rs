//! The review of changed tool definitions (docs/pinning.md):
//!
//! - `GET /api/tools/changes`: the tools whose definition differs from the one a person
//!   approved, that appeared after their source's first listing, or that a person blocked; each
//!   with the approved and the new definition (`approved`, `now`) and the parts that differ.
//! - `POST /api/tools/accept {address}`: the new definition becomes the approved one. It can
//!   loosen a verdict, so it needs a person: the UI's session; the bearer token alone gets 403
//!   `person_required` (a terminal records it in the store: `capa tools accept`).
//! - `POST /api/tools/block {address}`: the tool is denied until accepted. It only tightens, so
//!   the token may do it.
//! - `POST /api/tools/changes/reload`: re-reads the pins after a terminal recorded a review.

use axum::Json;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::Response;
use capa_core::PinError;
use serde::Deserialize;
use serde_json::json;

use super::{UiSession, UiState, fail, ok};

/// The body of `POST /api/tools/accept` and `POST /api/tools/block`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct ToolAddress {
    pub address: String,
}

fn changes(state: &UiState) -> Response {
    ok(json!({"ok": true, "changes": state.hub.tool_changes()}))
}

fn refused(state: &UiState, error: &PinError) -> Response {
    let code = match error {
        PinError::UnknownTool(_) => "unknown_tool",
        PinError::NothingToReview(_) => "nothing_to_review",
    };
    fail(
        StatusCode::NOT_FOUND,
        code,
        state.hub.redact(&error.to_string()),
    )
}

/// `GET /api/tools/changes`.
pub(crate) async fn list(State(state): State<UiState>) -> Response {
    state.hub.startup_done().await;
    changes(&state)
}

/// `POST /api/tools/accept` (the UI's session only).
pub(crate) async fn accept(
    State(state): State<UiState>,
    session: Option<axum::Extension<UiSession>>,
    Json(request): Json<ToolAddress>,
) -> Response {
    if session.is_none() {
        return super::person_required(
            "Accepting a tool's changed definition",
            "capa tools accept <address>",
        );
    }
    match state.hub.accept_tool_change(&request.address) {
        Ok(_) => changes(&state),
        Err(e) => refused(&state, &e),
    }
}

/// `POST /api/tools/block`.
pub(crate) async fn block(
    State(state): State<UiState>,
    Json(request): Json<ToolAddress>,
) -> Response {
    match state.hub.block_tool(&request.address) {
        Ok(()) => changes(&state),
        Err(e) => refused(&state, &e),
    }
}

/// `POST /api/tools/changes/reload`.
pub(crate) async fn reload(State(state): State<UiState>) -> Response {
    state.hub.reload_pins();
    changes(&state)
}
