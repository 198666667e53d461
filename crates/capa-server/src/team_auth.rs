//! The guard of a team hub with sign-in (`capa hub serve --sign-in-issuer … --resource …`,
//! docs/team.md): every request shows an access token the organisation's `OpenID` provider
//! issued for this hub, and nothing else opens it — not the hub's shared token, not a paired
//! client's key, not a UI session. What stays open: the Protected Resource Metadata (RFC 9728)
//! that tells a client where to sign in, the liveness check HAProxy polls, and the proof a
//! local client asks for before it sends anything.
//!
//! A refused request gets `401` with `WWW-Authenticate: Bearer resource_metadata="…"` (the MCP
//! authorization spec), and `error="invalid_token"` with the reason when a token was shown.

use std::sync::Arc;

use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::{Json, Router};
use capa_signin::{Refusal, SignIn};

/// Where RFC 9728 puts the metadata (the resource's path, if any, follows it).
pub(crate) const METADATA_PATH: &str = "/.well-known/oauth-protected-resource";

/// Paths a request reaches without a token on a team hub.
fn is_open_path(path: &str) -> bool {
    path == METADATA_PATH
        || path.starts_with("/.well-known/oauth-protected-resource/")
        || path == "/api/health"
        || path == crate::discovery::PROVE_PATH
}

/// The metadata routes, served only when sign-in is on.
pub(crate) fn routes(sign_in: Arc<SignIn>) -> Router {
    Router::new()
        .route(METADATA_PATH, get(metadata))
        .route(&format!("{METADATA_PATH}/{{*resource}}"), get(metadata))
        .with_state(sign_in)
}

async fn metadata(State(sign_in): State<Arc<SignIn>>) -> Json<serde_json::Value> {
    Json(sign_in.resource_metadata())
}

/// A quoted-string parameter of `WWW-Authenticate`: no quote or backslash inside.
fn quoted(text: &str) -> String {
    text.chars().filter(|c| *c != '"' && *c != '\\').collect()
}

/// `401` naming the metadata, and why the token (if any) was refused.
fn unauthorized(sign_in: &SignIn, refusal: Option<&Refusal>) -> Response {
    let mut challenge = format!(
        "Bearer resource_metadata=\"{}\"",
        quoted(&sign_in.resource_metadata_url())
    );
    let message = match refusal {
        Some(refusal) => {
            challenge.push_str(&format!(
                ", error=\"invalid_token\", error_description=\"{}\"",
                quoted(&refusal.to_string())
            ));
            format!("{refusal}: sign in again with the team's identity provider")
        }
        None => "this team hub needs an access token from the team's identity provider: \
                 sign in (an MCP client does so from the Protected Resource Metadata this \
                 answer names)"
            .to_owned(),
    };
    let body = serde_json::json!({"error": {"code": 401, "message": message}});
    let mut response = (StatusCode::UNAUTHORIZED, Json(body)).into_response();
    if let Ok(value) = HeaderValue::from_str(&challenge) {
        response
            .headers_mut()
            .insert(header::WWW_AUTHENTICATE, value);
    }
    response
}

/// Lets a request with a valid access token through, with the [`capa_signin::Person`] it
/// names in its extensions.
pub(crate) async fn check(
    sign_in: &Arc<SignIn>,
    mut request: Request<Body>,
    next: Next,
) -> Response {
    if is_open_path(request.uri().path()) {
        return next.run(request).await;
    }
    let Some(token) = crate::guard::bearer(request.headers()) else {
        return unauthorized(sign_in, None);
    };
    match sign_in.verify(token).await {
        Ok(person) => {
            crate::guard::authenticated(&request);
            tracing::debug!(subject = %person.subject, "a signed-in request");
            request.extensions_mut().insert(person);
            next.run(request).await
        }
        Err(refusal) => {
            tracing::info!("a team hub request refused: {refusal}");
            unauthorized(sign_in, Some(&refusal))
        }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn only_the_metadata_health_and_proof_are_open() {
        for open in [
            "/.well-known/oauth-protected-resource",
            "/.well-known/oauth-protected-resource/mcp",
            "/api/health",
            crate::discovery::PROVE_PATH,
        ] {
            assert!(super::is_open_path(open), "{open}");
        }
        for closed in [
            "/mcp",
            "/api/runs",
            "/app/",
            "/approve/x",
            "/.well-known/other",
        ] {
            assert!(!super::is_open_path(closed), "{closed}");
        }
    }

    #[test]
    fn a_challenge_parameter_cannot_break_out_of_its_quotes() {
        assert_eq!(super::quoted(r#"a"b\c"#), "abc");
    }
}
