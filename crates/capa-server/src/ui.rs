//! The web UI on the hub's loopback server: its static files under `/app/`, the one-time login
//! link that starts a UI session, and the JSON API it calls (docs/api.md).
//!
//! A UI session is the approval page's mechanism ([`crate::approval_page`]'s links and sessions)
//! with a wider grant: `GET /app/login/<token>` uses up a link made by [`UiAccess::issue_link`]
//! (for `capa ui` through `POST /api/ui/link`, or in process for the desktop app), sets the
//! `capa_ui_<port>` cookie (`HttpOnly; SameSite=Strict; Path=/`) and redirects to
//! `/app/?session=<key>`, where the UI keeps the key in its origin's storage. Every `/api/*`
//! request of the session — reads too — sends the cookie and the key in `X-Capa-Csrf` (the event
//! stream, which cannot send headers, `?session=<key>`); then the route is open to the UI as with
//! the bearer token ([`crate::cookies`] says why both). The guard's Host and Origin checks apply
//! before.

mod assets;
mod clients;
mod connections;
mod events;
pub mod handoff;
mod import;
mod pairings;
mod runs;
mod settings;
mod sign_in;
mod source_logs;
mod sources;
mod switches;
mod tool_changes;
mod tool_text;

use std::net::SocketAddr;
use std::sync::Arc;

use axum::Router;
use axum::body::Body;
use axum::extract::{Path, Request, State};
use axum::http::{HeaderValue, Method, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use capa_core::Hub;
use serde_json::{Value, json};

use crate::approval_page::secrets::Secrets;

/// The UI session cookie's name, before the port (`capa_ui_4477`).
pub const COOKIE: &str = "capa_ui";
/// The header that carries the session's key on every request.
pub const CSRF_HEADER: &str = "x-capa-csrf";
/// The query parameter that carries the key where no header can (the event stream, the landing
/// after login).
pub const SESSION_PARAM: &str = "session";

/// Who may use the web UI: one-time login links and the sessions they start.
pub struct UiAccess {
    origin: String,
    /// `capa_ui_<port>`.
    cookie: String,
    secrets: Arc<Secrets>,
}

impl std::fmt::Debug for UiAccess {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("UiAccess")
            .field("origin", &self.origin)
            .finish_non_exhaustive()
    }
}

/// A request authenticated by a UI session (set by the guard as a request extension).
#[derive(Debug, Clone)]
pub struct UiSession {
    pub csrf: String,
}

impl UiSession {
    /// Who made a change that arrived with `session`: a UI session is a person in the app's
    /// window (or a browser the hub opened a link in); the bearer token alone is not.
    pub(crate) fn changed_by(session: Option<&axum::Extension<UiSession>>) -> capa_core::ChangedBy {
        if session.is_some() {
            capa_core::ChangedBy::Person
        } else {
            capa_core::ChangedBy::Unconfirmed
        }
    }
}

/// The refusal of something only a person may do (`what`: "confirming a source") to a request
/// with the bearer token alone.
pub(crate) fn person_required(what: &str, terminal: &str) -> Response {
    fail(
        StatusCode::FORBIDDEN,
        "person_required",
        format!(
            "{what} needs a person: in the Capabilities app, or `{terminal}` at an interactive terminal; the hub's token alone cannot"
        ),
    )
}

/// What the guard makes of a request without the bearer token.
pub(crate) enum UiAuth {
    /// A live UI session (with its CSRF token, on writes).
    Session(UiSession),
    /// A session cookie, but the write lacks the CSRF token or comes from elsewhere: a code
    /// (`csrf`, `forbidden_origin`) and a message.
    Refused(&'static str, &'static str),
    /// No usable session: the guard answers 401.
    None,
}

impl UiAccess {
    pub(crate) fn new(addr: SocketAddr, secrets: Arc<Secrets>) -> Arc<Self> {
        Arc::new(Self {
            origin: format!("http://{addr}"),
            cookie: crate::cookies::name(COOKIE, addr.port()),
            secrets,
        })
    }

    /// The hub's own origin, `http://127.0.0.1:<port>`.
    pub fn origin(&self) -> &str {
        &self.origin
    }

    /// A one-time login link (valid ten minutes), as a path: `/app/login/<token>`. Empty when
    /// the system has no randomness to give (then nobody can log in, which is safe).
    pub fn issue_link(&self) -> String {
        match self.secrets.issue_app_link() {
            Some(token) => format!("/app/login/{token}"),
            None => String::new(),
        }
    }

    /// The same link as an absolute URL on this server.
    pub fn issue_url(&self) -> Option<String> {
        let path = self.issue_link();
        (!path.is_empty()).then(|| format!("{}{path}", self.origin))
    }

    /// The UI's view of a request that did not bring the bearer token.
    pub(crate) fn authorize(&self, request: &Request<Body>) -> UiAuth {
        if !request.uri().path().starts_with("/api/") {
            return UiAuth::None;
        }
        let headers = request.headers();
        let values = crate::cookies::values(headers, &self.cookie);
        let id = match crate::cookies::the_live_one(&values, |v| {
            self.secrets.app_session(v).is_some()
        }) {
            Ok(Some(id)) => id,
            Ok(None) => return UiAuth::None,
            Err(()) => {
                return UiAuth::Refused(
                    "duplicate_cookie",
                    "two live session cookies arrived: sign in again from the app or with `capa ui`",
                );
            }
        };
        let Some(csrf) = self.secrets.app_session(id) else {
            return UiAuth::None;
        };
        if !crate::cookies::from_own_site(headers, false) {
            return UiAuth::Refused(
                "forbidden_site",
                "a UI session request must come from the hub's own pages",
            );
        }
        if let Some(origin) = headers.get(header::ORIGIN)
            && !origin.to_str().is_ok_and(|o| self.same_origin(o))
        {
            return UiAuth::Refused("forbidden_origin", "forbidden Origin for a UI session");
        }
        // Reads too: the cookie reaches every port of this host, the key only this origin.
        let events = request.method() == Method::GET && request.uri().path() == "/api/events";
        let given = headers
            .get(CSRF_HEADER)
            .and_then(|h| h.to_str().ok())
            .or_else(|| {
                events
                    .then(|| crate::cookies::query_param(request.uri(), SESSION_PARAM))
                    .flatten()
            });
        if !given.is_some_and(|g| crate::token::matches(&csrf, g)) {
            return UiAuth::Refused(
                "csrf",
                "missing or wrong X-Capa-Csrf header: the UI sends its session key on every request; sign in again if this page lost it",
            );
        }
        self.secrets.touch(id);
        UiAuth::Session(UiSession { csrf })
    }

    /// The hub's own origin, under the names the guard accepts for it.
    fn same_origin(&self, origin: &str) -> bool {
        let port = self.origin.rsplit(':').next().unwrap_or_default();
        origin == self.origin
            || origin == format!("http://localhost:{port}")
            || origin == format!("http://[::1]:{port}")
    }
}

/// Whether a request path needs no token: the UI's static files and its login link.
pub(crate) fn is_open_path(path: &str) -> bool {
    path == "/app" || path.starts_with("/app/")
}

/// An API failure: `{ok: false, error: {code, message}}` with `status`.
pub(crate) fn fail(status: StatusCode, code: &str, message: impl Into<String>) -> Response {
    let body = json!({"ok": false, "error": {"code": code, "message": message.into()}});
    (status, axum::Json(body)).into_response()
}

/// An API success: `value` as JSON, with status 200.
pub(crate) fn ok(value: Value) -> Response {
    axum::Json(value).into_response()
}

#[derive(Clone)]
pub(crate) struct UiState {
    pub(crate) hub: Arc<Hub>,
    pub(crate) access: Arc<UiAccess>,
    /// Cancelled when the server shuts down (ends event streams).
    pub(crate) cancel: tokio_util::sync::CancellationToken,
    /// Where the UI's files are, chosen once at start ([`assets::ui_dir`]).
    pub(crate) ui_dir: Option<Arc<std::path::Path>>,
    /// The Clients page's previews and last changes ([`clients`]).
    pub(crate) clients: Arc<clients::ClientsMemory>,
}

/// The UI's routes (static files, login, session, and its API); merged under the guard.
pub(crate) fn routes(
    hub: Arc<Hub>,
    access: Arc<UiAccess>,
    cancel: tokio_util::sync::CancellationToken,
    ui_dir: Option<&std::path::Path>,
) -> Router {
    Router::new()
        .route("/app/login/{token}", get(login))
        .route("/app", get(assets::serve))
        .route("/app/", get(assets::serve))
        .route("/app/{*path}", get(assets::serve))
        .route("/api/session", get(session))
        .route("/api/ui/link", post(link))
        .route("/api/sources", get(sources::list).post(sources::add))
        .route(
            "/api/sources/{id}",
            axum::routing::put(sources::replace).delete(sources::remove),
        )
        .route("/api/sources/{id}/restart", post(sources::restart))
        .route("/api/sources/{id}/sign-in", post(sign_in::sign_in))
        .route(
            "/api/sources/{id}/sign-in/redirect",
            post(sign_in::pasted_redirect),
        )
        .route("/api/sources/{id}/logs", get(source_logs::logs))
        .route("/api/sources/{id}/confirm", post(sources::confirm))
        .route(
            "/api/sources/{id}/enabled",
            axum::routing::put(switches::source_enabled),
        )
        .route(
            "/api/sources/{id}/sampling",
            axum::routing::put(switches::source_sampling),
        )
        .route(
            "/api/sources/{id}/write-tools-off",
            post(switches::write_tools_off),
        )
        .route("/api/tools/changes", get(tool_changes::list))
        .route("/api/tools/changes/reload", post(tool_changes::reload))
        .route("/api/tools/accept", post(tool_changes::accept))
        .route("/api/tools/block", post(tool_changes::block))
        .route(
            "/api/tools/enabled",
            axum::routing::put(switches::tools_enabled),
        )
        .route("/api/tools/accept-text", post(tool_text::accept_text))
        .route(
            "/api/policy/rule",
            axum::routing::put(settings::set_rule).delete(settings::reset_rule),
        )
        .route("/api/policy/confirm", post(settings::confirm))
        .route("/api/approvals/pause", post(settings::pause))
        .route(
            "/api/connections",
            get(connections::list).put(connections::set),
        )
        .route(
            "/api/connections/{source}/{name}",
            axum::routing::delete(connections::remove),
        )
        .route("/api/clients", get(clients::list))
        .route(
            "/api/clients/paired",
            get(pairings::list).post(pairings::pair),
        )
        .route(
            "/api/clients/paired/{id}",
            axum::routing::delete(pairings::unpair),
        )
        .route(
            "/api/clients/paired/{id}/forms",
            axum::routing::put(pairings::forms),
        )
        .route("/api/clients/{id}/preview", post(clients::preview))
        .route("/api/clients/{id}/apply", post(clients::apply))
        .route("/api/clients/{id}/undo", post(clients::undo))
        .route("/api/import/clients", get(import::clients))
        .route("/api/import/preview", post(import::preview))
        .route("/api/import/apply", post(import::apply))
        .route(
            "/api/import/well-known",
            get(import::well_known_list).post(import::well_known_add),
        )
        .route("/api/runs", get(runs::list))
        .route("/api/runs/{id}", get(runs::detail))
        .route("/api/runs/{id}/handles/{handle}", get(runs::handle_piece))
        .route("/api/events", get(events::stream))
        .with_state(UiState {
            hub,
            access,
            cancel,
            ui_dir: assets::ui_dir(ui_dir).map(Arc::from),
            clients: Arc::default(),
        })
}

fn gone() -> Response {
    let body = crate::approval_page::message_page(
        "This link was used or has expired",
        &["Run `capa ui` in a terminal for a new link, or open Capabilities from the desktop app."],
    );
    assets::html(StatusCode::GONE, body)
}

/// `GET /app/login/<token>`: uses up the link, sets the session cookie, redirects to
/// `/app/?session=<key>` (a fragment the link had, such as a popup's `#/approve/<run>`, stays).
async fn login(State(state): State<UiState>, Path(token): Path<String>) -> Response {
    let Some(session) = state.access.secrets.redeem_app_link(&token) else {
        return gone();
    };
    let Some(key) = state.access.secrets.app_session(&session) else {
        return gone();
    };
    let mut response = assets::html(StatusCode::SEE_OTHER, String::new());
    let cookie = format!(
        "{}={session}; HttpOnly; SameSite=Strict; Path=/",
        state.access.cookie
    );
    let headers = response.headers_mut();
    if let Ok(value) = HeaderValue::from_str(&cookie) {
        headers.insert(header::SET_COOKIE, value);
    }
    if let Ok(value) = HeaderValue::from_str(&format!("/app/?{SESSION_PARAM}={key}")) {
        headers.insert(header::LOCATION, value);
    }
    response
}

/// `GET /api/session`: the session's CSRF token, for the UI's writes.
async fn session(session: Option<axum::Extension<UiSession>>) -> Response {
    match session {
        Some(axum::Extension(s)) => {
            ok(json!({"ok": true, "csrf": s.csrf, "version": env!("CARGO_PKG_VERSION")}))
        }
        None => fail(
            StatusCode::UNAUTHORIZED,
            "no_session",
            "no UI session: open the link `capa ui` prints",
        ),
    }
}

/// What `POST /api/ui/link` may name.
#[derive(Debug, Default, serde::Deserialize)]
struct LinkRequest {
    /// A login secret an interactive terminal left in the data dir (see [`handoff`]).
    #[serde(default)]
    handoff: Option<String>,
}

/// `POST /api/ui/link` (bearer token only), for `capa ui`: the hub opens a fresh login link in
/// the browser itself and never returns it, or accepts a terminal's handed-over secret.
async fn link(
    State(state): State<UiState>,
    session: Option<axum::Extension<UiSession>>,
    body: Option<axum::Json<LinkRequest>>,
) -> Response {
    if session.is_some() {
        return fail(
            StatusCode::FORBIDDEN,
            "forbidden",
            "login links are issued with the bearer token only",
        );
    }
    let request = body.map(|b| b.0).unwrap_or_default();
    if let Some(name) = request.handoff {
        return match handoff::take(&state.hub.paths().data_dir, &name) {
            Ok(token) => {
                state.access.secrets.register_app_link(token);
                ok(json!({"ok": true}))
            }
            Err(why) => fail(StatusCode::FORBIDDEN, "handoff", why),
        };
    }
    let no_browser = |why: &str| {
        fail(
            StatusCode::SERVICE_UNAVAILABLE,
            "no_browser",
            format!(
                "the hub could not open a browser ({why}); run `capa ui --print` at an interactive terminal for a link to open yourself"
            ),
        )
    };
    if std::env::var("CAPA_NO_BROWSER").is_ok_and(|v| v == "1") {
        return no_browser("CAPA_NO_BROWSER=1 is set for the hub");
    }
    let Some(url) = state.access.issue_url() else {
        return fail(
            StatusCode::INTERNAL_SERVER_ERROR,
            "no_randomness",
            "the system gave no randomness for a login link",
        );
    };
    // Watched for a failing opener (no display, no browser), so `capa ui` says "Opened" only
    // when something opened; off the runtime's workers, since it waits.
    let target = url.clone();
    let opened = tokio::task::spawn_blocking(move || crate::open_for_person(&target))
        .await
        .unwrap_or_else(|e| Err(std::io::Error::other(e.to_string())));
    match opened {
        Ok(()) => ok(json!({"ok": true, "opened": true})),
        Err(e) => {
            tracing::warn!(error = %e, "could not open the UI in a browser");
            if let Some(token) = url.rsplit('/').next() {
                state.access.secrets.revoke_app_link(token);
            }
            no_browser(&e.to_string())
        }
    }
}
