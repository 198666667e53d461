//! Checks on every HTTP request, before anything else runs: a loopback `Host` (DNS rebinding), an
//! `Origin` that is the hub itself when a browser sends one, and the bearer token (except on the
//! approval page under `/approve/`, which has its own one-time link, cookie and CSRF token, and
//! the web UI under `/app/`, whose session cookie and CSRF token stand in for the token on
//! `/api/*`: see [`crate::ui`]).

use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use crate::token;

/// What a request must match.
#[derive(Debug, Clone)]
pub(crate) struct Guard {
    pub token: String,
    pub port: u16,
    pub ui: std::sync::Arc<crate::ui::UiAccess>,
    /// Finds the paired client of a client key (`/mcp` only).
    pub hub: std::sync::Arc<capa_core::Hub>,
    /// A team hub's sign-in: then only the provider's access tokens open it
    /// ([`crate::team_auth`]).
    pub sign_in: Option<std::sync::Arc<capa_signin::SignIn>>,
}

const LOOPBACK_NAMES: &[&str] = &["127.0.0.1", "localhost", "[::1]"];

/// The host name of a `Host` header or an origin's authority, without the port.
fn host_name(authority: &str) -> &str {
    if authority.starts_with('[') {
        return authority.split_inclusive(']').next().unwrap_or(authority);
    }
    authority.split(':').next().unwrap_or(authority)
}

fn port_of(authority: &str) -> Option<u16> {
    let after_host = authority.strip_prefix(host_name(authority))?;
    after_host.strip_prefix(':')?.parse().ok()
}

fn host_ok(headers: &HeaderMap) -> bool {
    let Some(host) = headers.get(header::HOST).and_then(|h| h.to_str().ok()) else {
        return false;
    };
    LOOPBACK_NAMES.contains(&host_name(host))
}

/// No `Origin` (not a browser), or the hub's own.
fn origin_ok(port: u16, headers: &HeaderMap) -> bool {
    let Some(origin) = headers.get(header::ORIGIN) else {
        return true;
    };
    let Some(authority) = origin.to_str().ok().and_then(|o| o.strip_prefix("http://")) else {
        return false;
    };
    LOOPBACK_NAMES.contains(&host_name(authority)) && port_of(authority) == Some(port)
}

pub(crate) fn bearer(headers: &HeaderMap) -> Option<&str> {
    headers
        .get(header::AUTHORIZATION)
        .and_then(|h| h.to_str().ok())
        .and_then(|h| h.strip_prefix("Bearer "))
        .map(str::trim)
}

impl Guard {
    fn token_ok(&self, headers: &HeaderMap) -> bool {
        bearer(headers).is_some_and(|given| token::matches(&self.token, given))
    }
}

/// A paired client's own key opens the MCP endpoints (`/mcp`, `/mcp/<profile>`) and nothing
/// else: the API stays the token's and the UI session's.
fn is_mcp_path(path: &str) -> bool {
    path == "/mcp" || path.starts_with("/mcp/")
}

fn reject(status: StatusCode, message: &str) -> Response {
    let body = serde_json::json!({"error": {"code": status.as_u16(), "message": message}});
    let mut response = (status, axum::Json(body)).into_response();
    if status == StatusCode::UNAUTHORIZED
        && let Ok(value) = header::HeaderValue::from_str("Bearer realm=\"capabilities\"")
    {
        response
            .headers_mut()
            .insert(header::WWW_AUTHENTICATE, value);
    }
    response
}

/// The request showed the token or a UI session: its connection is a client's, closed for room
/// only after every connection that never did ([`crate::connections`]).
pub(crate) fn authenticated(request: &Request<Body>) {
    if let Some(slot) = request.extensions().get::<crate::connections::Slot>() {
        slot.mark_authenticated();
    }
}

/// Axum middleware applying the guard.
pub(crate) async fn check(
    State(guard): State<Guard>,
    mut request: Request<Body>,
    next: Next,
) -> Response {
    let headers = request.headers();
    if !host_ok(headers) {
        return reject(
            StatusCode::FORBIDDEN,
            "forbidden Host header: the hub only answers requests addressed to 127.0.0.1, localhost or [::1]",
        );
    }
    if !origin_ok(guard.port, headers) {
        return reject(
            StatusCode::FORBIDDEN,
            "forbidden Origin: cross-origin requests are refused",
        );
    }
    if let Some(sign_in) = &guard.sign_in {
        return crate::team_auth::check(sign_in, request, next).await;
    }
    if guard.token_ok(headers) {
        authenticated(&request);
        return next.run(request).await;
    }
    // The approval page authenticates with its one-time link, session cookie and CSRF token.
    let path = request.uri().path();
    if crate::approval_page::is_page_path(path)
        || crate::ui::is_open_path(path)
        // The client checks who we are before it sends the token (crate::discovery).
        || path == crate::discovery::PROVE_PATH
    {
        return next.run(request).await;
    }
    if is_mcp_path(path)
        && let Some(given) = bearer(headers).filter(|b| b.starts_with(capa_core::CLIENT_KEY_PREFIX))
    {
        let Some(client) = guard.hub.pairings().identify(given) else {
            return reject(
                StatusCode::UNAUTHORIZED,
                "this client key is not paired with the hub (the pairing was removed, or it belongs to another hub's data): pair the client again on the Capabilities app's Clients page or with `capa clients pair`",
            );
        };
        authenticated(&request);
        request.extensions_mut().insert(client);
        return next.run(request).await;
    }
    match guard.ui.authorize(&request) {
        crate::ui::UiAuth::Session(session) => {
            authenticated(&request);
            request.extensions_mut().insert(session);
            next.run(request).await
        }
        crate::ui::UiAuth::Refused(code, message) => {
            crate::ui::fail(StatusCode::FORBIDDEN, code, message)
        }
        crate::ui::UiAuth::None => reject(
            StatusCode::UNAUTHORIZED,
            "missing or wrong bearer token: send `Authorization: Bearer <token>` with the token from the hub's data dir",
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(pairs: &[(header::HeaderName, &str)]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for (k, v) in pairs {
            map.insert(k.clone(), v.parse().expect("header value"));
        }
        map
    }

    #[test]
    fn hosts_must_be_loopback_names() {
        assert!(host_ok(&headers(&[(header::HOST, "127.0.0.1:4477")])));
        assert!(host_ok(&headers(&[(header::HOST, "localhost")])));
        assert!(host_ok(&headers(&[(header::HOST, "[::1]:4477")])));
        assert!(!host_ok(&headers(&[(header::HOST, "evil.example:4477")])));
        assert!(!host_ok(&headers(&[(
            header::HOST,
            "127.0.0.1.evil.example"
        )])));
        assert!(!host_ok(&HeaderMap::new()));
    }

    #[test]
    fn origins_must_be_the_hub_itself() {
        assert!(origin_ok(4477, &HeaderMap::new()));
        assert!(origin_ok(
            4477,
            &headers(&[(header::ORIGIN, "http://localhost:4477")])
        ));
        assert!(!origin_ok(
            4477,
            &headers(&[(header::ORIGIN, "http://localhost:9999")])
        ));
        assert!(!origin_ok(
            4477,
            &headers(&[(header::ORIGIN, "https://evil.example")])
        ));
        assert!(!origin_ok(4477, &headers(&[(header::ORIGIN, "null")])));
    }
}
