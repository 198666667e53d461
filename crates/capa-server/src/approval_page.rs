//! The browser approval page, for clients that cannot show an approval form themselves.
//!
//! When a run pauses, the hub calls the opener [`http::serve`](crate::http::serve) installed: it
//! makes a one-time link (`/approve/<token>`, ten minutes) and opens it in the user's browser.
//! Following the link starts a page session (an `HttpOnly`, `SameSite=Strict` cookie) bound to
//! that run and redirects to `/approve/run/<runId>`, which lists the run's pending inputs with a
//! form per choice. Decisions need the session cookie, the session's CSRF token and the hub's own
//! origin, and end in [`capa_core::Approvals::decide`] like every other delivery. These routes need no bearer
//! token; the guard still checks Host and Origin.

pub(crate) mod browser;
mod form;
mod render;
mod sign_in;
pub(crate) use self::render::message_page;
pub(crate) mod secrets;

use std::net::SocketAddr;
use std::sync::Arc;

use axum::Router;
use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use capa_core::{Choice, Hub, PageOpener};

use self::render::{RunPage, path_segment};
use self::secrets::{LINK_TTL, SESSION_TTL, Secrets};

/// The session cookie's name, before the port (`capa_approval_4477`).
const COOKIE: &str = "capa_approval";

/// The query parameter with the session's key on the run's page ([`crate::cookies`] says why
/// a cookie alone does not make a session).
const KEY_PARAM: &str = "k";

/// The approval pages of one HTTP server: its origin, and the links and sessions it handed out.
pub(crate) struct ApprovalPages {
    origin: String,
    /// `capa_approval_<port>`.
    cookie: String,
    /// Shared with the web UI's [`crate::ui::UiAccess`]: one mechanism for links and sessions.
    secrets: Arc<Secrets>,
}

impl ApprovalPages {
    /// Pages served at `addr` (the bound address, with its real port).
    pub(crate) fn new(addr: SocketAddr) -> Arc<Self> {
        Arc::new(Self {
            origin: format!("http://{addr}"),
            cookie: crate::cookies::name(COOKIE, addr.port()),
            secrets: Arc::new(Secrets::new(LINK_TTL, SESSION_TTL)),
        })
    }

    /// The links and sessions, for the web UI's access.
    pub(crate) fn secrets(&self) -> Arc<Secrets> {
        Arc::clone(&self.secrets)
    }

    /// The maker of one-time sign-in links ([`capa_core::Connections::set_sign_in_linker`]).
    pub(crate) fn sign_in_linker(self: &Arc<Self>) -> capa_core::SignInLinker {
        let pages = Arc::clone(self);
        Arc::new(move |source: &str, connection: Option<&str>| {
            let token = pages.secrets.issue_sign_in_link(source, connection)?;
            Some(format!("{}/sign-in/{token}", pages.origin))
        })
    }

    /// The opener for [`capa_core::Runs::set_page_opener`]. It holds no reference to the hub.
    pub(crate) fn opener(self: &Arc<Self>) -> PageOpener {
        let pages = Arc::clone(self);
        Arc::new(move |run_id: &str| pages.open(run_id))
    }

    /// Opens a fresh link to `run_id`'s page in the browser; false when no browser started.
    fn open(&self, run_id: &str) -> bool {
        if std::env::var("CAPA_NO_BROWSER").is_ok_and(|v| v == "1") {
            return false;
        }
        let Some(token) = self.secrets.issue_link(run_id) else {
            tracing::warn!(run = %run_id, "no randomness for an approval page link");
            return false;
        };
        // The URL carries the token: it goes to the browser only, never to a log.
        match browser::open(&format!("{}/approve/{token}", self.origin)) {
            Ok(()) => {
                tracing::info!(run = %run_id, "opened the approval page for run {run_id}");
                true
            }
            Err(e) => {
                self.secrets.revoke_link(&token);
                tracing::warn!(run = %run_id, error = %e, "could not start a browser for the approval page");
                false
            }
        }
    }

    /// Whether a POST comes from a page of this hub: `Origin`, or `Referer` when there is no
    /// `Origin`, must be exactly the hub's origin.
    fn same_origin(&self, headers: &HeaderMap) -> bool {
        if let Some(origin) = headers.get(header::ORIGIN) {
            return origin.to_str().is_ok_and(|o| o == self.origin);
        }
        headers
            .get(header::REFERER)
            .and_then(|r| r.to_str().ok())
            .is_some_and(|r| {
                r.strip_prefix(self.origin.as_str())
                    .is_some_and(|rest| rest.is_empty() || rest.starts_with('/'))
            })
    }
}

#[derive(Clone)]
struct PageState {
    hub: Arc<Hub>,
    pages: Arc<ApprovalPages>,
}

/// The page routes, with their own state; merged into the hub's router under its guard.
pub(crate) fn routes(hub: Arc<Hub>, pages: Arc<ApprovalPages>) -> Router {
    Router::new()
        .route("/approve/{token}", get(follow_link))
        .route("/approve/run/{run_id}", get(show_run))
        .route("/approve/run/{run_id}/decide", post(decide))
        .route("/sign-in/{token}", get(sign_in::follow))
        .with_state(PageState { hub, pages })
}

/// Whether a request path belongs to the page (exempt from the bearer token).
pub(crate) fn is_page_path(path: &str) -> bool {
    path.starts_with("/approve/") || path.starts_with("/sign-in/")
}

/// An HTML response with the page's security headers.
fn html(status: StatusCode, body: String) -> Response {
    let mut response = (status, body).into_response();
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/html; charset=utf-8"),
    );
    headers.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(
            "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'",
        ),
    );
    headers.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    // Not `no-referrer`: under it a browser sends `Origin: null` with the page's own form posts,
    // which the origin check must refuse. `same-origin` still never tells another site anything.
    headers.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("same-origin"),
    );
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    headers.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    response
}

/// A 303 to `location`, with the page's headers.
fn see_other(location: &str, cookie: Option<&str>) -> Response {
    let mut response = html(StatusCode::SEE_OTHER, String::new());
    let headers = response.headers_mut();
    match HeaderValue::from_str(location) {
        Ok(value) => {
            headers.insert(header::LOCATION, value);
        }
        Err(_) => return internal_error(),
    }
    if let Some(cookie) = cookie {
        match HeaderValue::from_str(cookie) {
            Ok(value) => {
                headers.insert(header::SET_COOKIE, value);
            }
            Err(_) => return internal_error(),
        }
    }
    response
}

fn internal_error() -> Response {
    html(
        StatusCode::INTERNAL_SERVER_ERROR,
        message_page(
            "Something went wrong",
            &["Run `capabilities hub pending` in a terminal to see and decide what is waiting."],
        ),
    )
}

fn forbidden() -> Response {
    html(
        StatusCode::FORBIDDEN,
        message_page(
            "Not allowed",
            &[
                "This page only works from the link Capabilities opened, in the same browser. Nothing was decided.",
                "Run `capabilities hub pending` in a terminal to see and decide what is waiting.",
            ],
        ),
    )
}

impl ApprovalPages {
    /// The session cookie's value that is a live page session bound to `run_id` (any live page
    /// session when `None`); none when no value is, or two different ones are.
    fn session_cookie<'a>(&self, headers: &'a HeaderMap, run_id: Option<&str>) -> Option<&'a str> {
        let values = crate::cookies::values(headers, &self.cookie);
        crate::cookies::the_live_one(&values, |v| match run_id {
            Some(run_id) => self.secrets.session(v, run_id, false).is_some(),
            None => self.secrets.is_page_session(v),
        })
        .ok()
        .flatten()
    }
}

/// The run's page, with the session's key.
fn run_url(run_id: &str, key: &str) -> String {
    format!("/approve/run/{}?{KEY_PARAM}={key}", path_segment(run_id))
}

/// `GET /approve/<token>`: uses up the link, starts (or extends) a session, redirects to the run.
async fn follow_link(
    State(state): State<PageState>,
    Path(token): Path<String>,
    headers: HeaderMap,
) -> Response {
    let Some(run_id) = state.pages.secrets.redeem_link(&token) else {
        return html(
            StatusCode::GONE,
            message_page(
                "This link was used or has expired",
                &[
                    "This link was used or has expired. Run `capabilities hub pending` in a terminal.",
                ],
            ),
        );
    };
    let pages = &state.pages;
    let Some(session) = pages
        .secrets
        .bind(pages.session_cookie(&headers, None), &run_id)
    else {
        return internal_error();
    };
    let Some(view) = pages.secrets.session(&session, &run_id, false) else {
        return internal_error();
    };
    let cookie = format!(
        "{}={session}; HttpOnly; SameSite=Strict; Path=/approve",
        pages.cookie
    );
    let mut response = html(
        StatusCode::OK,
        render::landing_page(&run_url(&run_id, &view.csrf)),
    );
    match HeaderValue::from_str(&cookie) {
        Ok(value) => {
            response.headers_mut().insert(header::SET_COOKIE, value);
        }
        Err(_) => return internal_error(),
    }
    response
}

/// `GET /approve/run/<runId>`: the run's pending inputs, for a session bound to it.
async fn show_run(
    State(state): State<PageState>,
    Path(run_id): Path<String>,
    uri: axum::http::Uri,
    headers: HeaderMap,
) -> Response {
    let pages = &state.pages;
    if !crate::cookies::from_own_site(&headers, true) {
        return forbidden();
    }
    let Some(session) = pages.session_cookie(&headers, Some(&run_id)) else {
        return forbidden();
    };
    // The key first, without touching the session: a replayed cookie alone learns nothing.
    let key = crate::cookies::query_param(&uri, KEY_PARAM).unwrap_or_default();
    if !pages
        .secrets
        .session(session, &run_id, false)
        .is_some_and(|view| crate::token::matches(&view.csrf, key))
    {
        return forbidden();
    }
    let Some(view) = pages.secrets.session(session, &run_id, true) else {
        return forbidden();
    };
    pages.secrets.touch(session);
    let pending = match state.hub.approvals().pending_of(&run_id) {
        Ok(pending) => pending,
        Err(e) => {
            tracing::warn!(run = %run_id, error = %e, "the approval page could not read pending inputs");
            return internal_error();
        }
    };
    let page = RunPage {
        run_id: &run_id,
        pending: &pending,
        csrf: &view.csrf,
        flash: view.flash.as_deref(),
    };
    html(StatusCode::OK, page.render())
}

/// The flash after a decision taken on the page.
fn decided_message(choice: Choice, address: &str) -> String {
    match choice {
        Choice::Once => "Approved once.".to_owned(),
        Choice::Run => "Approved for the rest of this run.".to_owned(),
        Choice::Always => format!("Always allowed {address}."),
        Choice::Deny => "Denied.".to_owned(),
    }
}

/// `POST /approve/run/<runId>/decide`: one decision on one of the run's pending approvals.
async fn decide(
    State(state): State<PageState>,
    Path(run_id): Path<String>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let pages = &state.pages;
    if !pages.same_origin(&headers) || !crate::cookies::from_own_site(&headers, false) {
        return forbidden();
    }
    let Some(session) = pages.session_cookie(&headers, Some(&run_id)) else {
        return forbidden();
    };
    let Some(view) = pages.secrets.session(session, &run_id, false) else {
        return forbidden();
    };
    let fields = form::fields(&body);
    let field = |name: &str| {
        fields
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    };
    if !field("csrf").is_some_and(|given| crate::token::matches(&view.csrf, given)) {
        return forbidden();
    }
    pages.secrets.touch(session);
    let (Some(approval_id), Some(choice)) =
        (field("approval"), field("choice").and_then(Choice::parse))
    else {
        return html(
            StatusCode::BAD_REQUEST,
            message_page(
                "Bad request",
                &["The form was incomplete. Nothing was decided."],
            ),
        );
    };
    let message = match state.hub.approvals().pending_of(&run_id) {
        Ok(pending) => match pending
            .iter()
            .find(|p| p.id == approval_id && p.kind == capa_store::InputKind::Approval)
        {
            Some(input) => match state.hub.approvals().decide(&input.id, choice, "page") {
                Ok(()) => decided_message(choice, &input.address),
                Err(e) => format!("Nothing was decided: {e}."),
            },
            None => "That request is no longer waiting.".to_owned(),
        },
        Err(e) => format!("Nothing was decided: {e}."),
    };
    pages.secrets.set_flash(session, message);
    see_other(&run_url(&run_id, &view.csrf), None)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_hubs_own_origin_may_post() {
        let pages = ApprovalPages::new(SocketAddr::from(([127, 0, 0, 1], 4477)));
        let with = |name: header::HeaderName, value: &str| {
            let mut headers = HeaderMap::new();
            headers.insert(name, HeaderValue::from_str(value).expect("header"));
            headers
        };
        assert!(pages.same_origin(&with(header::ORIGIN, "http://127.0.0.1:4477")));
        assert!(!pages.same_origin(&with(header::ORIGIN, "http://localhost:4477")));
        assert!(!pages.same_origin(&with(header::ORIGIN, "null")));
        assert!(pages.same_origin(&with(
            header::REFERER,
            "http://127.0.0.1:4477/approve/run/r"
        )));
        assert!(!pages.same_origin(&with(header::REFERER, "http://127.0.0.1:44770/x")));
        assert!(!pages.same_origin(&HeaderMap::new()));
    }

    #[test]
    fn the_session_cookie_is_named_for_the_port_and_a_planted_value_is_ignored() {
        let pages = ApprovalPages::new(SocketAddr::from(([127, 0, 0, 1], 4477)));
        let mine = pages.secrets.bind(None, "run_1").expect("session");
        let other = pages.secrets.bind(None, "run_1").expect("session");
        let cookies = |value: String| {
            let mut headers = HeaderMap::new();
            headers.insert(
                header::COOKIE,
                HeaderValue::from_str(&value).expect("header"),
            );
            headers
        };
        let headers = cookies(format!(
            "a=1; capa_approval_4477={mine}; capa_approval_4478=x"
        ));
        assert_eq!(
            pages.session_cookie(&headers, Some("run_1")),
            Some(mine.as_str())
        );
        assert_eq!(
            pages.session_cookie(&headers, Some("run_2")),
            None,
            "bound to run_1 only"
        );
        // Another port planted a stale value under our name: ignored.
        let planted = cookies(format!(
            "capa_approval_4477=planted; capa_approval_4477={mine}"
        ));
        assert_eq!(
            pages.session_cookie(&planted, Some("run_1")),
            Some(mine.as_str())
        );
        // Two live sessions: which one is ours cannot be told.
        let both = cookies(format!(
            "capa_approval_4477={other}; capa_approval_4477={mine}"
        ));
        assert_eq!(pages.session_cookie(&both, Some("run_1")), None);
        assert!(!pages.cookie.is_empty() && pages.cookie.ends_with("_4477"));
        assert!(is_page_path("/approve/run/x"));
        assert!(!is_page_path("/api/approvals"));
    }
}
