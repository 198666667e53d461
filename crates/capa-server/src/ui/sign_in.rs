//! `POST /api/sources/{id}/sign-in`: a person's OAuth sign-in from the app. The hub starts it,
//! opens the system browser on the authorization server's page, and waits for the redirect on
//! a loopback port of its own; the page polls `GET /api/sources` for the outcome.
//!
//! `POST /api/sources/{id}/sign-in/redirect`: the address a browser ended on, pasted by a
//! person who signed in on another device (whose browser cannot reach this computer's loopback
//! port). It is checked like the loopback redirect (the sign-in's `state`), so it grants nothing
//! a local process could not already do by requesting the loopback address itself.

use axum::Json;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::Response;
use capa_core::SignInFailure;
use serde::Deserialize;
use serde_json::json;

use super::{UiState, fail, ok};

/// The body of the request; `{}` signs in as the default (or first, `personal`) connection.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(super) struct SignInBody {
    #[serde(default)]
    connection: Option<String>,
}

pub(crate) async fn sign_in(
    State(state): State<UiState>,
    Path(id): Path<String>,
    Json(body): Json<SignInBody>,
) -> Response {
    let started = match state
        .hub
        .begin_sign_in(&id, body.connection.as_deref())
        .await
    {
        Ok(started) => started,
        Err(e @ SignInFailure::UnknownSource(_)) => {
            return fail(StatusCode::NOT_FOUND, "not_found", e.to_string());
        }
        Err(e @ SignInFailure::NotOAuth(_)) => {
            return fail(StatusCode::BAD_REQUEST, "not_oauth", e.to_string());
        }
        Err(e @ SignInFailure::InvalidName(_)) => {
            return fail(StatusCode::BAD_REQUEST, "invalid_arguments", e.to_string());
        }
        Err(e) => return fail(StatusCode::BAD_GATEWAY, "sign_in_failed", e.to_string()),
    };
    // The browser gets a private forwarding page, so the URL stays out of other users' `ps`.
    // Watched: an opener that finds no browser fails, and the page then says so.
    let url = started.url.clone();
    let opened = tokio::task::spawn_blocking(move || crate::open_for_person(&url))
        .await
        .is_ok_and(|r| r.is_ok());
    ok(json!({
        "ok": true,
        "connection": started.connection,
        "url": started.url,
        "opened": opened,
    }))
}

/// The body of a pasted redirect.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(super) struct PastedRedirect {
    address: String,
}

pub(crate) async fn pasted_redirect(
    State(state): State<UiState>,
    Path(id): Path<String>,
    Json(body): Json<PastedRedirect>,
) -> Response {
    match state
        .hub
        .connections()
        .finish_sign_in_from(&id, &body.address)
        .await
    {
        Ok(()) => ok(json!({ "ok": true })),
        Err(e @ SignInFailure::UnknownSource(_)) => {
            fail(StatusCode::NOT_FOUND, "not_found", e.to_string())
        }
        Err(e @ SignInFailure::NotWaiting(_)) => {
            fail(StatusCode::CONFLICT, "not_waiting", e.to_string())
        }
        Err(e) => fail(StatusCode::BAD_REQUEST, "invalid_arguments", e.to_string()),
    }
}
