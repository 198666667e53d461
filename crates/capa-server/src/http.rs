//! The hub's loopback HTTP server: the MCP endpoint at `/mcp` and a small JSON API under `/api`
//! for the CLI (and later the web UI), all behind the same guard (Host, Origin, token). This
//! file binds and routes; the API's handlers are in `api.rs`, the web UI's in `ui.rs`.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use axum::extract::State;
use axum::routing::get;
use axum::{Json, Router};
use capa_core::{Hub, HubPaths};
use capa_mcp::{McpFront, surface_for, surface_for_profile};
use rmcp::transport::StreamableHttpServerConfig;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::tower::StreamableHttpService;
use serde_json::json;
use tokio_util::sync::CancellationToken;

use crate::approval_page::ApprovalPages;
use crate::discovery::{self, ProofKey};
use crate::guard::{self, Guard};
use crate::ui::UiAccess;

pub use crate::api::{
    CallRequest, DescribeApiRequest, MAX_APPROVAL_WAIT, ProfileListing, SearchApiRequest,
    SkillListing, ToolListing, call_json, describe_json, profile_listings, search_json,
    skill_listings, tool_listings,
};

/// The port `capa hub serve` listens on unless told otherwise.
pub const DEFAULT_PORT: u16 = 4477;

/// Why the HTTP server could not start.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ServeError {
    #[error(
        "refusing to listen on {0}: the hub only binds loopback addresses (127.0.0.1 or [::1]); use --http 127.0.0.1:<port>"
    )]
    NotLoopback(SocketAddr),
    #[error("cannot listen on {addr}: {source}")]
    Bind {
        addr: SocketAddr,
        #[source]
        source: std::io::Error,
    },
    #[error("the system gave no randomness for the hub's proof key; cannot start safely")]
    NoRandomness,
}

/// A running HTTP server.
#[derive(Debug)]
pub struct HttpServer {
    pub addr: SocketAddr,
    ui: Arc<UiAccess>,
    shutdown: CancellationToken,
    task: tokio::task::JoinHandle<()>,
    proof: Arc<ProofKey>,
    /// The data dir whose `hub.json` names this server, once [`HttpServer::publish`]ed.
    published: std::sync::Mutex<Option<HubPaths>>,
}

impl HttpServer {
    /// The MCP endpoint's URL.
    pub fn mcp_url(&self) -> String {
        format!("http://{}/mcp", self.addr)
    }

    /// Login links for the web UI (the desktop app opens them in its window).
    pub fn ui(&self) -> &Arc<UiAccess> {
        &self.ui
    }

    /// Base URL, `http://127.0.0.1:4477`.
    pub fn base_url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Writes the discovery file (`hub.json`) of `paths` for this server, with this start's
    /// proof key, so that `capa` commands find it and can check it is the hub
    /// ([`crate::discovery`]). Removed again by [`HttpServer::shutdown`].
    pub fn publish(&self, paths: &HubPaths) -> std::io::Result<()> {
        discovery::publish(paths, &self.base_url(), &self.proof)?;
        if let Ok(mut published) = self.published.lock() {
            *published = Some(paths.clone());
        }
        Ok(())
    }

    /// Removes the discovery file (when it still names this server), stops accepting requests
    /// and waits for open ones to finish (at most five seconds).
    pub async fn shutdown(self) {
        let published = self.published.lock().ok().and_then(|mut p| p.take());
        if let Some(paths) = published {
            discovery::withdraw(&paths, &self.base_url());
        }
        self.shutdown.cancel();
        let _ = tokio::time::timeout(Duration::from_secs(5), self.task).await;
    }
}

/// How the server runs beyond its address and token.
#[derive(Debug, Clone, Default)]
pub struct ServeOptions {
    /// The web UI's built files, when the caller knows them (the desktop app's bundled
    /// resources). `CAPA_UI_DIR` comes first (docs/ui.md, "Where the UI is served from").
    pub ui_dir: Option<PathBuf>,
    /// A team hub's sign-in with the organisation's identity provider: only its access tokens
    /// open the hub (docs/team.md, "Sign-in").
    pub sign_in: Option<Arc<capa_signin::SignIn>>,
}

/// Binds `addr` (loopback only) and serves until shut down.
pub async fn serve(
    hub: Arc<Hub>,
    addr: SocketAddr,
    token: String,
) -> Result<HttpServer, ServeError> {
    serve_with(hub, addr, token, ServeOptions::default()).await
}

/// [`serve`] with [`ServeOptions`].
pub async fn serve_with(
    hub: Arc<Hub>,
    addr: SocketAddr,
    token: String,
    options: ServeOptions,
) -> Result<HttpServer, ServeError> {
    // Exactly 127.0.0.1 or ::1: the Host and Origin checks (and rmcp's) know those names, so
    // another loopback address such as 127.0.0.2 would start and then refuse every request.
    let canonical = match addr.ip() {
        std::net::IpAddr::V4(ip) => ip == std::net::Ipv4Addr::LOCALHOST,
        std::net::IpAddr::V6(ip) => ip == std::net::Ipv6Addr::LOCALHOST,
    };
    if !canonical {
        return Err(ServeError::NotLoopback(addr));
    }
    hub.treat_as_secret(&token);
    let proof = Arc::new(ProofKey::generate().ok_or(ServeError::NoRandomness)?);
    let listener = tokio::net::TcpListener::bind(addr)
        .await
        .map_err(|source| ServeError::Bind { addr, source })?;
    let addr = listener
        .local_addr()
        .map_err(|source| ServeError::Bind { addr, source })?;
    let shutdown = CancellationToken::new();
    // The approval page opens at this server's real address, known only now.
    let pages = ApprovalPages::new(addr);
    hub.approvals().set_page_opener(pages.opener());
    hub.connections().set_sign_in_linker(pages.sign_in_linker());
    let ui = UiAccess::new(addr, pages.secrets());
    let router = router(
        hub.clone(),
        pages,
        (proof.clone(), Arc::from(format!("http://{addr}"))),
        Guard {
            token,
            port: addr.port(),
            ui: ui.clone(),
            hub,
            sign_in: options.sign_in.clone(),
        },
        &shutdown.child_token(),
        options.ui_dir.as_deref(),
    );
    // Connections are accepted and bounded in `connections.rs` (a head deadline, a bound that
    // closes idle strangers first): axum::serve has neither.
    let task = tokio::spawn(crate::connections::serve(
        listener,
        router,
        shutdown.clone(),
    ));
    Ok(HttpServer {
        addr,
        ui,
        shutdown,
        task,
        proof,
        published: std::sync::Mutex::new(None),
    })
}

fn router(
    hub: Arc<Hub>,
    pages: Arc<ApprovalPages>,
    prover: (Arc<ProofKey>, Arc<str>),
    guard: Guard,
    cancel: &CancellationToken,
    ui_dir: Option<&Path>,
) -> Router {
    // The hub's own profile at /mcp, each named profile at /mcp/<name> (docs/profiles.md),
    // each also with a trailing slash; any other /mcp/<name> is answered by `unknown_profile`.
    let mut endpoints = vec![("/mcp".to_owned(), surface_for(hub.clone()))];
    for profile in hub.profiles() {
        let path = format!("/mcp/{}", profile.name());
        endpoints.push((path, surface_for_profile(hub.clone(), Some(profile))));
    }
    let mut mcp = Router::new();
    for (path, surface) in endpoints {
        let service = mcp_service(surface, cancel);
        mcp = mcp
            .route_service(&format!("{path}/"), service.clone())
            .route_service(&path, service);
    }
    // A malformed POST gets a JSON-RPC error before rmcp sees it (crate::mcp_body); an answer
    // ready at once goes out as JSON, not as a stream (crate::mcp_reply); a profile that does not
    // exist is a 404 whatever the body.
    let mcp = mcp
        .layer(axum::middleware::from_fn(crate::mcp_reply::prefer_json))
        .layer(axum::middleware::from_fn(crate::mcp_body::check))
        .route("/mcp/{profile}", axum::routing::any(unknown_profile))
        .route("/mcp/{profile}/", axum::routing::any(unknown_profile))
        .with_state(hub.clone());
    let metadata = match &guard.sign_in {
        Some(sign_in) => crate::team_auth::routes(sign_in.clone()),
        None => Router::new(),
    };
    Router::new()
        .merge(mcp)
        .merge(metadata)
        .merge(crate::api::routes().with_state(hub.clone()))
        .merge(crate::ui::routes(
            hub.clone(),
            guard.ui.clone(),
            cancel.child_token(),
            ui_dir,
        ))
        .merge(crate::approval_page::routes(hub, pages))
        .merge(
            Router::new()
                .route(discovery::PROVE_PATH, get(prove))
                .with_state(prover),
        )
        .layer(axum::middleware::from_fn(crate::panics::contain))
        .layer(axum::middleware::from_fn_with_state(guard, guard::check))
}

/// The MCP endpoint of one surface.
fn mcp_service(
    surface: Arc<dyn capa_mcp::Surface>,
    cancel: &CancellationToken,
) -> StreamableHttpService<McpFront, LocalSessionManager> {
    StreamableHttpService::new(
        move || Ok(McpFront::new(surface.clone())),
        Arc::new(LocalSessionManager::default()),
        // Host and Origin are checked by our guard (which also knows the port); rmcp's own
        // checks stay on as a second line.
        StreamableHttpServerConfig::default()
            .with_cancellation_token(cancel.clone())
            .with_allowed_hosts(["127.0.0.1", "localhost", "::1", "[::1]"])
            .with_max_request_body_bytes(crate::mcp_body::MAX_BODY_BYTES),
    )
}

/// `/mcp/<name>` of a profile the configuration does not have: `404` with a JSON-RPC error
/// that names the profiles there are.
async fn unknown_profile(
    State(hub): State<Arc<Hub>>,
    axum::extract::Path(name): axum::extract::Path<String>,
) -> axum::response::Response {
    use axum::response::IntoResponse;
    let names: Vec<String> = hub.profiles().iter().map(|p| p.name().to_owned()).collect();
    let known = if names.is_empty() {
        "this hub has no named profiles (`profiles:` in a capabilities file); use /mcp".to_owned()
    } else {
        format!(
            "its profiles are {}; /mcp serves the default one",
            names.join(", ")
        )
    };
    let error = rmcp::model::ErrorData::invalid_request(
        format!("no profile named `{name}` at /mcp/{name}: {known}"),
        None,
    );
    let body = serde_json::json!({"jsonrpc": "2.0", "id": null, "error": error});
    (axum::http::StatusCode::NOT_FOUND, axum::Json(body)).into_response()
}

/// `GET /api/hub/prove?challenge=<hex>` (no token: the client checks who we are before it sends
/// one): the HMAC of the challenge under this start's proof key.
async fn prove(
    State((proof, url)): State<(Arc<ProofKey>, Arc<str>)>,
    uri: axum::http::Uri,
) -> axum::response::Response {
    use axum::response::IntoResponse;
    let challenge = crate::cookies::query_param(&uri, "challenge").unwrap_or_default();
    if !discovery::valid_challenge(challenge) {
        return (
            axum::http::StatusCode::BAD_REQUEST,
            Json(json!({"error": {"code": 400, "message": "the challenge must be 64 to 128 hex digits"}})),
        )
            .into_response();
    }
    Json(json!({"proof": proof.answer(&url, challenge)})).into_response()
}
