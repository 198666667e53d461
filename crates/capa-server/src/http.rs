//! The hub's loopback HTTP server: the MCP endpoint at `/mcp` and a small JSON API under `/api`
//! for the CLI (and later the web UI), all behind the same guard (Host, Origin, token).

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use axum::extract::State;
use axum::routing::{get, post};
use axum::{Json, Router};
use capa_core::{Authorization, CallContext, CallError, DirectAnswer, Hub, HubPaths, PendingInput};
use rmcp::transport::StreamableHttpServerConfig;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::tower::StreamableHttpService;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use crate::approval_page::ApprovalPages;
use crate::discovery::{self, ProofKey};
use crate::front::McpFront;
use crate::guard::{self, Guard};
use crate::surface::surface_for;
use crate::ui::UiAccess;

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
    hub.redactor().add(&token);
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
    hub.runs().set_page_opener(pages.opener());
    let ui = UiAccess::new(addr, pages.secrets());
    let router = router(
        hub,
        pages,
        (proof.clone(), Arc::from(format!("http://{addr}"))),
        Guard {
            token,
            port: addr.port(),
            ui: ui.clone(),
        },
        shutdown.child_token(),
        options.ui_dir,
    );
    let stop = shutdown.clone();
    let task = tokio::spawn(async move {
        let served = axum::serve(listener, router)
            .with_graceful_shutdown(async move { stop.cancelled_owned().await })
            .await;
        if let Err(e) = served {
            tracing::error!(error = %e, "HTTP server stopped");
        }
    });
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
    cancel: CancellationToken,
    ui_dir: Option<PathBuf>,
) -> Router {
    let surface = surface_for(hub.clone());
    let mcp = StreamableHttpService::new(
        move || Ok(McpFront::new(surface.clone())),
        Arc::new(LocalSessionManager::default()),
        // Host and Origin are checked by our guard (which also knows the port); rmcp's own
        // checks stay on as a second line.
        StreamableHttpServerConfig::default()
            .with_cancellation_token(cancel.clone())
            .with_allowed_hosts(["127.0.0.1", "localhost", "::1", "[::1]"])
            .with_max_request_body_bytes(crate::mcp_body::MAX_BODY_BYTES),
    );
    // A malformed POST gets a JSON-RPC error before rmcp sees it (crate::mcp_body).
    let mcp = Router::new()
        .nest_service("/mcp", mcp)
        .layer(axum::middleware::from_fn(crate::mcp_body::check));
    Router::new()
        .merge(mcp)
        .route("/api/health", get(health))
        .route("/api/config", get(config))
        .route("/api/tools", get(tools))
        .route("/api/call", post(call))
        .route("/api/search", post(search))
        .route("/api/describe", post(describe))
        .route("/api/connections/reload", post(reload_connections))
        .route("/api/policy", get(policy))
        .route("/api/policy/reload", post(reload_policy))
        .route("/api/approvals", get(crate::approvals_api::pending))
        .route("/api/approvals/decide", post(crate::approvals_api::decide))
        .route(
            "/api/approvals/changed",
            post(crate::approvals_api::changed),
        )
        .with_state(hub.clone())
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

async fn health() -> Json<Value> {
    Json(json!({"ok": true, "version": env!("CARGO_PKG_VERSION"), "pid": std::process::id()}))
}

async fn config(State(hub): State<Arc<Hub>>) -> Json<Value> {
    let config = hub.config();
    Json(json!({
        "files": hub.files(),
        "toolExposure": config.exposure.mode.as_str(),
        "decidedBy": config.exposure.decided_by,
        "upstreamTimeoutMs": config.upstream_timeout.as_millis() as u64,
        "demo": config.demo,
        "warnings": config.warnings,
    }))
}

/// A tool as the CLI lists it.
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolListing {
    pub address: String,
    pub source: String,
    pub remote_name: String,
    pub description: Option<String>,
    pub input_schema: Value,
    pub annotations: Option<Value>,
    /// `allow`, `ask` or `deny`: what the policy decides for the tool (calls without a
    /// connection). Listings for models leave denied tools out; this one is the user's view.
    #[serde(default)]
    pub policy: String,
}

/// Lists the catalog for the API and the CLI.
pub fn tool_listings(hub: &Hub) -> Vec<ToolListing> {
    hub.catalog()
        .tools()
        .iter()
        .map(|t| ToolListing {
            address: t.address.to_string(),
            source: t.address.namespace.clone(),
            remote_name: t.remote_name.clone(),
            description: t.definition.description.as_ref().map(|d| d.to_string()),
            input_schema: Value::Object((*t.definition.input_schema).clone()),
            annotations: t
                .definition
                .annotations
                .as_ref()
                .and_then(|a| serde_json::to_value(a).ok()),
            policy: hub.listing_verdict(t).decision.to_string(),
        })
        .collect()
}

async fn tools(State(hub): State<Arc<Hub>>) -> Json<Vec<ToolListing>> {
    hub.startup_done().await;
    Json(tool_listings(&hub))
}

/// A call through the API.
#[derive(Debug, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CallRequest {
    pub address: String,
    #[serde(default)]
    pub arguments: Option<serde_json::Map<String, Value>>,
    #[serde(default)]
    pub connection: Option<String>,
    /// The pending input an earlier answer named (`approval_required`): the call runs when a
    /// person approved exactly this call.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub approval: Option<String>,
    /// How long to wait for that person's decision before answering `approval_pending`
    /// (at most [`MAX_APPROVAL_WAIT`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wait_ms: Option<u64>,
    /// The caller stops waiting for the decision on `approval`: the input ends (expired), so
    /// the popup and the page stop asking. Only ever a "no".
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub abandon: bool,
    /// The whole result. Without it the result is cut to the run limits' `inlineResultBytes`
    /// (24 KB) with a notice, as on every channel a model reads: `capa sh` is how tools run in
    /// `toolExposure: none` projects, and an agent reads its output.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub full: bool,
}

/// The longest one request waits for a decision; a caller that waits longer asks again.
pub const MAX_APPROVAL_WAIT: Duration = Duration::from_secs(60);

/// Runs a call and shapes the answer the way the API and `capa call --json` print it. The
/// authorizer decides; a call that needs a person is recorded as a pending input (the popup,
/// the page, `capabilities hub pending` and the UI show it) and answered `approval_required`
/// with its id. The caller then gets a person's decision — at an interactive terminal, or by
/// waiting for one taken in the app — and calls again naming the approval. The bearer token
/// alone never approves anything.
pub async fn call_json(hub: &Hub, request: CallRequest, client: &str) -> Value {
    let CallRequest {
        address,
        arguments,
        connection,
        approval,
        wait_ms,
        abandon,
        full,
    } = request;
    let authorization = match hub.authorize(&address, connection.as_deref()).await {
        Ok(authorization) => authorization,
        Err(e) => return call_error_json(&e),
    };
    let permit = match authorization {
        Authorization::Allowed(permit) => permit,
        Authorization::Denied { address, .. } => {
            return call_error_json(&CallError::Denied { address });
        }
        Authorization::NeedsPerson(question) => {
            let shown = arguments.clone().map(Value::Object).unwrap_or(Value::Null);
            let approval_id = match approval {
                Some(id) => id,
                None => match hub.ask_direct(&question, &shown, None) {
                    Ok((input, _)) => return pending_json("approval_required", &input),
                    Err(e) => return decide_error_json(&e),
                },
            };
            let wait = Duration::from_millis(wait_ms.unwrap_or(0)).min(MAX_APPROVAL_WAIT);
            if !wait.is_zero() {
                hub.wait_for_decision(&approval_id, wait).await;
            }
            if abandon
                && let Ok(DirectAnswer::Pending(_)) =
                    hub.direct_answer(&approval_id, question.clone(), &shown)
            {
                hub.expire_input(&approval_id);
            }
            match hub.direct_answer(&approval_id, question, &shown) {
                Ok(DirectAnswer::Approved(permit)) => permit,
                Ok(DirectAnswer::Pending(input)) => {
                    return pending_json("approval_pending", &input);
                }
                Ok(DirectAnswer::Denied) => {
                    return error_json(
                        "denied",
                        &format!("the user denied the call to {address}"),
                        false,
                    );
                }
                Ok(DirectAnswer::Expired) => {
                    return error_json(
                        "approval_expired",
                        &format!("nobody approved the call to {address} in time"),
                        false,
                    );
                }
                Err(e) => return decide_error_json(&e),
            }
        }
    };
    let context = CallContext {
        client: Some(client.to_owned()),
        progress: None,
    };
    match hub.call(permit, arguments, &context).await {
        Ok(result) => {
            let budget = hub.run_limits().inline_result_bytes;
            let cut = !full && crate::inline::measured(&result) > budget;
            let result = if cut {
                crate::inline::fit(result, budget)
            } else {
                result
            };
            json!({"ok": result.is_error != Some(true), "result": result, "cut": cut})
        }
        Err(e) => call_error_json(&e),
    }
}

fn error_json(code: &str, message: &str, retryable: bool) -> Value {
    json!({"ok": false, "error": {"code": code, "message": message, "retryable": retryable}})
}

fn call_error_json(error: &CallError) -> Value {
    error_json(error.code(), &error.to_string(), error.retryable())
}

fn decide_error_json(error: &capa_core::DecideError) -> Value {
    error_json(error.code(), &error.to_string(), false)
}

/// A call waiting for a person: the error says so and where to decide, `approval` is the
/// pending input (redacted preview included) to name when calling again.
fn pending_json(code: &str, input: &PendingInput) -> Value {
    let message = format!(
        "{} needs your approval ({}): approve it in the Capabilities app, or run `capabilities hub approve {}` in a terminal",
        input.address, input.reason, input.id
    );
    json!({
        "ok": false,
        "error": {"code": code, "message": message, "retryable": true},
        "approval": input,
    })
}

async fn call(State(hub): State<Arc<Hub>>, Json(request): Json<CallRequest>) -> Json<Value> {
    Json(call_json(&hub, request, "capa-cli").await)
}

/// `POST /api/search`: the `search` lookup, for `capa search` and the UI.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SearchApiRequest {
    pub query: String,
    #[serde(default)]
    pub namespace: Option<String>,
    #[serde(default)]
    pub limit: Option<i64>,
}

/// `POST /api/describe`: the `describe` lookup.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct DescribeApiRequest {
    pub targets: Vec<String>,
}

/// A lookup's answer as the API and `--json` print it: `{ok, text}` or `{ok, error}`.
fn lookup_json(answer: Result<String, capa_core::LookupError>) -> Value {
    match answer {
        Ok(text) => json!({"ok": true, "text": text}),
        Err(e) => {
            json!({"ok": false, "error": {"code": e.code(), "message": e.to_string(), "retryable": e.retryable()}})
        }
    }
}

pub async fn search_json(hub: &Hub, request: SearchApiRequest) -> Value {
    let request = capa_core::SearchRequest {
        query: request.query,
        namespace: request.namespace,
        limit: request.limit,
    };
    lookup_json(hub.search(&request).await)
}

pub async fn describe_json(hub: &Hub, request: DescribeApiRequest) -> Value {
    lookup_json(hub.describe(&request.targets).await)
}

async fn search(State(hub): State<Arc<Hub>>, Json(request): Json<SearchApiRequest>) -> Json<Value> {
    Json(search_json(&hub, request).await)
}

async fn describe(
    State(hub): State<Arc<Hub>>,
    Json(request): Json<DescribeApiRequest>,
) -> Json<Value> {
    Json(describe_json(&hub, request).await)
}

async fn reload_connections(State(hub): State<Arc<Hub>>) -> Json<Value> {
    hub.reload_connections().await;
    Json(json!({"ok": true}))
}

/// `GET /api/policy`: the rules in force and the file they come from.
async fn policy(State(hub): State<Arc<Hub>>) -> Json<Value> {
    Json(json!({
        "file": hub.policy_file(),
        "rules": hub.policy().rules(),
        "held": hub.held_policy_changes(),
    }))
}

/// `POST /api/policy/reload`, after `capa policy set` or a hand edit. A broken file is
/// reported (`invalid_policy`, with its line) and the previous policy stays in force.
async fn reload_policy(State(hub): State<Arc<Hub>>) -> Json<Value> {
    match hub.reload_policy() {
        Ok(()) => {
            Json(json!({"ok": true, "file": hub.policy_file(), "rules": hub.policy().rules()}))
        }
        Err(e) => Json(json!({
            "ok": false,
            "file": hub.policy_file(),
            "error": {"code": "invalid_policy", "message": e.to_string(), "retryable": false},
        })),
    }
}
