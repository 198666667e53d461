//! `GET /sign-in/<token>`: the hub's own sign-in page, the link a client's URL elicitation shows
//! the person. It holds a one-time token, never the authorization server's URL with its state;
//! following it starts the OAuth sign-in of the source it names and sends the browser on to the
//! authorization server. What comes back goes to the hub's loopback redirect, not here.

use axum::extract::{Path, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};

use super::{PageState, html, message_page};

pub(super) async fn follow(State(state): State<PageState>, Path(token): Path<String>) -> Response {
    let Some((source, connection)) = state.pages.secrets.redeem_sign_in_link(&token) else {
        return html(
            StatusCode::GONE,
            message_page(
                "This sign-in link was used or has expired",
                &[
                    "Sign in from Capabilities (Sources, Sign in), or with `capa connections login <source>` in a terminal.",
                ],
            ),
        );
    };
    match state
        .hub
        .begin_sign_in(&source, connection.as_deref())
        .await
    {
        Ok(started) => {
            let mut response = StatusCode::SEE_OTHER.into_response();
            let headers = response.headers_mut();
            match HeaderValue::from_str(&started.url) {
                Ok(location) => {
                    headers.insert(header::LOCATION, location);
                }
                Err(_) => return super::internal_error(),
            }
            // The authorization server learns nothing of this page's address.
            headers.insert(
                header::REFERRER_POLICY,
                HeaderValue::from_static("no-referrer"),
            );
            headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
            response
        }
        Err(e) => html(
            StatusCode::BAD_GATEWAY,
            message_page(
                &format!("Could not sign in to {source}"),
                &[&state.hub.redact(&e.to_string())],
            ),
        ),
    }
}
