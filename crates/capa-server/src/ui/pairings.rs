//! The paired clients on the Clients page (docs/security.md, "Who may say yes"):
//!
//! - `GET /api/clients/paired`: each paired client, whether its forms count, when last seen.
//! - `POST /api/clients/paired {name}`: pairs a client and answers its key, once. A person's
//!   act: the UI session only (`403 person_required` to the token).
//! - `PUT /api/clients/paired/<id>/forms {forms}`: `true` needs the UI session; `false` (a
//!   tightening) anyone with the token.
//! - `DELETE /api/clients/paired/<id>`: unpairs (its key stops working).

use axum::Json;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::Response;
use capa_core::{PairedClient, PairingError};
use serde::Deserialize;
use serde_json::{Value, json};

use super::{UiSession, UiState, fail, ok, person_required};

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct PairRequest {
    name: String,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct FormsRequest {
    forms: bool,
}

fn listing(client: &PairedClient) -> Value {
    json!({
        "id": client.id,
        "name": client.name,
        "forms": client.forms,
        "createdAtMs": client.created_at_ms,
        "lastSeenMs": client.last_seen_ms,
    })
}

fn refused(e: &PairingError) -> Response {
    let (status, code) = match e {
        PairingError::EmptyName => (StatusCode::BAD_REQUEST, "invalid_name"),
        PairingError::NotFound(_) => (StatusCode::NOT_FOUND, "not_found"),
        PairingError::NoRandomness | PairingError::Store(_) => {
            (StatusCode::SERVICE_UNAVAILABLE, "store_unavailable")
        }
        _ => (StatusCode::INTERNAL_SERVER_ERROR, "internal"),
    };
    fail(status, code, e.to_string())
}

/// `GET /api/clients/paired`.
pub(crate) async fn list(State(state): State<UiState>) -> Response {
    match state.hub.pairings().list() {
        Ok(clients) => ok(Value::Array(clients.iter().map(listing).collect())),
        Err(e) => refused(&e),
    }
}

/// `POST /api/clients/paired`.
pub(crate) async fn pair(
    State(state): State<UiState>,
    session: Option<axum::Extension<UiSession>>,
    Json(request): Json<PairRequest>,
) -> Response {
    if session.is_none() {
        return person_required("Pairing a client", "capa clients pair <name>");
    }
    match state.hub.pairings().pair(&request.name) {
        Ok(new) => {
            let mut value = listing(&new.client);
            value["key"] = Value::String(new.key);
            ok(value)
        }
        Err(e) => refused(&e),
    }
}

/// `PUT /api/clients/paired/<id>/forms`.
pub(crate) async fn forms(
    State(state): State<UiState>,
    session: Option<axum::Extension<UiSession>>,
    Path(id): Path<String>,
    Json(request): Json<FormsRequest>,
) -> Response {
    if request.forms && session.is_none() {
        return person_required(
            "Letting a client's forms answer approvals",
            &format!("capa clients forms {id} on"),
        );
    }
    match state.hub.pairings().set_forms(&id, request.forms) {
        Ok(()) => ok(json!({"id": id, "forms": request.forms})),
        Err(e) => refused(&e),
    }
}

/// `DELETE /api/clients/paired/<id>`.
pub(crate) async fn unpair(State(state): State<UiState>, Path(id): Path<String>) -> Response {
    match state.hub.pairings().remove(&id) {
        Ok(()) => ok(json!({"id": id, "removed": true})),
        Err(e) => refused(&e),
    }
}
