//! `capa mcp` when a hub is already running: a stdio MCP server whose tools are those of the
//! running hub, reached over its HTTP endpoint. State and (later) approvals stay in that one hub.

#![expect(
    deprecated,
    reason = "sampling and roots are deprecated by SEP-2577 but sources of the 2025 era still ask for them"
)]

use std::sync::Arc;

use capa_core::{
    CallToolResult, JsonObject, ProgressRouter, ProgressSink, Tool, call_tool_with_progress,
};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, ClientCapabilities, ClientConfig,
    CreateMessageRequestParams, CreateMessageResult, ElicitRequestParams, ElicitResult, ErrorData,
    Implementation, ListRootsResult, ProgressNotificationParam,
};
use rmcp::service::{
    ClientLifecycleMode, ClientServiceExt, NotificationContext, RequestContext, RoleClient,
    RunningService,
};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::{ClientHandler, ServiceError};
use tokio::sync::{broadcast, watch};

use crate::notices::Notice;
use crate::relay::Relay;
use crate::surface::{Asking, BoxFuture, Surface, ToolChanges};

mod asked;
mod gated;
mod relayed;

use asked::ClientSlot;

/// Notices the bridge's client may fall behind by before it misses some.
const NOTICE_BACKLOG: usize = 256;

#[derive(Clone)]
struct BridgeClient {
    /// The bridge's client, asked what the hub asks it.
    asked: ClientSlot,
    changed: Arc<watch::Sender<u64>>,
    progress: ProgressRouter,
    notices: broadcast::Sender<Notice>,
}

impl ClientHandler for BridgeClient {
    fn get_info(&self) -> ClientConfig {
        ClientConfig::new(
            ClientCapabilities::default(),
            Implementation::new("capa-mcp-bridge", env!("CARGO_PKG_VERSION")),
        )
    }

    async fn create_message(
        &self,
        params: CreateMessageRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> Result<CreateMessageResult, ErrorData> {
        self.asked.create_message(params).await
    }

    async fn create_elicitation(
        &self,
        params: ElicitRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, ErrorData> {
        self.asked.create_elicitation(params).await
    }

    async fn list_roots(
        &self,
        _context: RequestContext<RoleClient>,
    ) -> Result<ListRootsResult, ErrorData> {
        self.asked.list_roots().await
    }

    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        self.changed.send_modify(|n| *n += 1);
    }

    async fn on_prompt_list_changed(&self, _context: NotificationContext<RoleClient>) {
        self.changed.send_modify(|n| *n += 1);
    }

    async fn on_resource_list_changed(&self, _context: NotificationContext<RoleClient>) {
        self.changed.send_modify(|n| *n += 1);
    }

    async fn on_progress(
        &self,
        params: ProgressNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        self.progress.deliver(params);
    }

    #[expect(
        deprecated,
        reason = "log messages are deprecated by SEP-2577 but the hub sends them in the initialize era"
    )]
    async fn on_logging_message(
        &self,
        params: rmcp::model::LoggingMessageNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        // No listener: the bridge's client set no level yet, or is gone.
        let _ = self.notices.send(Notice::Message(params));
    }

    async fn on_resource_updated(
        &self,
        params: rmcp::model::ResourceUpdatedNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        let key = capa_core::Subscribed {
            source: String::new(),
            uri: params.uri,
        };
        let _ = self.notices.send(Notice::Updated(key));
    }
}

/// The running hub, as a surface.
pub struct RemoteSurface {
    client: RunningService<RoleClient, BridgeClient>,
    /// The bridge's client, as the hub's requests reach it (`asked.rs`).
    asked: ClientSlot,
    changes: watch::Receiver<u64>,
    progress: ProgressRouter,
    /// The running hub's log messages and resource changes.
    notices: broadcast::Sender<Notice>,
    /// The hub that proved itself, checked again before every request: once it stops, anyone
    /// may take its port, and the bridge must not send them the token and the client's calls.
    hub: Arc<dyn HubLiveness>,
}

/// The hub a bridge forwards to, asked before every request whether it still runs. capa-server's
/// `bridge::HubCheck` answers from the discovery file and the hub's proof; this crate knows no
/// discovery of its own.
pub trait HubLiveness: std::fmt::Debug + Send + Sync + 'static {
    /// Whether that hub still runs.
    fn still_there(&self) -> BoxFuture<'_, bool>;
    /// Its base URL, `http://127.0.0.1:4477`, for the log.
    fn url(&self) -> &str;
}

impl std::fmt::Debug for RemoteSurface {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RemoteSurface").finish_non_exhaustive()
    }
}

impl RemoteSurface {
    /// Connects to the hub's MCP endpoint with its token.
    pub async fn connect(url: &str, token: &str, hub: impl HubLiveness) -> Result<Self, String> {
        let (tx, changes) = watch::channel(0);
        let progress = ProgressRouter::default();
        let notices = broadcast::channel(NOTICE_BACKLOG).0;
        let asked = ClientSlot::default();
        let handler = BridgeClient {
            asked: asked.clone(),
            changed: Arc::new(tx),
            progress: progress.clone(),
            notices: notices.clone(),
        };
        let hub: Arc<dyn HubLiveness> = Arc::new(hub);
        let http = crate::hub_client::client(None)
            .ok_or_else(|| "cannot make an HTTP client".to_owned())?;
        let transport = StreamableHttpClientTransport::with_client(
            gated::GatedClient::new(http, hub.clone()),
            StreamableHttpClientTransportConfig::with_uri(url.to_owned())
                .auth_header(token.to_owned()),
        );
        // The initialize era keeps a session, so the hub can push `tools/list_changed` to us.
        let lifecycle = ClientLifecycleMode::Initialize;
        let client = handler
            .serve_with_lifecycle(transport, lifecycle)
            .await
            .map_err(|e| format!("cannot connect to the running hub at {url}: {e}"))?;
        Ok(Self {
            client,
            asked,
            changes,
            progress,
            notices,
            hub,
        })
    }

    /// Sends one `tools/call` to the running hub; `meta`: the client of this bridge as it
    /// introduced itself and what it can answer, passed on in the request's `_meta` (which the
    /// hub reads before the bridge's own `initialize`), so the hub's history and approval popup
    /// name that client rather than the bridge, and ask it what it can answer (`asked.rs`).
    fn forward(
        &self,
        address: String,
        arguments: Option<JsonObject>,
        progress: Option<ProgressSink>,
        meta: Option<rmcp::model::RequestMetaObject>,
    ) -> BoxFuture<'_, Result<CallToolResult, ErrorData>> {
        Box::pin(async move {
            self.hub_still_there().await?;
            let mut params = CallToolRequestParams::new(address);
            params.arguments = arguments;
            params.meta = meta;
            let peer = self.client.peer();
            match progress {
                // The hub's own timeout bounds the call; the bridge adds none.
                Some(sink) => {
                    call_tool_with_progress(peer, params, None, &self.progress, sink).await
                }
                None => peer.call_tool(params).await,
            }
            .map_err(bridge_error)
        })
    }

    /// An error when the hub this bridge proved is gone (nothing is sent then).
    async fn hub_still_there(&self) -> Result<(), ErrorData> {
        if self.hub.still_there().await {
            return Ok(());
        }
        tracing::warn!(url = %self.hub.url(), "the hub this bridge forwards to has stopped; not forwarding");
        Err(ErrorData::internal_error(
            "the Capabilities hub this server forwarded to has stopped; restart it (the app or `capa hub serve`), then restart this MCP server in your client",
            None,
        ))
    }
}

fn bridge_error(e: ServiceError) -> ErrorData {
    match e {
        ServiceError::McpError(data) => data,
        other => {
            ErrorData::internal_error(format!("the running hub did not answer: {other}"), None)
        }
    }
}

impl Surface for RemoteSurface {
    fn relay(&self) -> &dyn Relay {
        self
    }

    fn list_tools(&self) -> BoxFuture<'_, Result<Vec<Tool>, ErrorData>> {
        Box::pin(async move {
            self.hub_still_there().await?;
            self.client
                .peer()
                .list_all_tools()
                .await
                .map_err(bridge_error)
        })
    }

    fn call_tool(
        &self,
        address: String,
        arguments: Option<JsonObject>,
        _client: Option<String>,
        progress: Option<ProgressSink>,
    ) -> BoxFuture<'_, Result<CallToolResult, ErrorData>> {
        self.forward(address, arguments, progress, None)
    }

    /// A call the client cancels (or walks away from) is dropped here, which makes rmcp send
    /// `notifications/cancelled` to the running hub: a run it started ends `cancelled` there.
    fn call_tool_asking(
        &self,
        address: String,
        arguments: Option<JsonObject>,
        _client: Option<String>,
        progress: Option<ProgressSink>,
        asking: Asking,
    ) -> BoxFuture<'_, Result<CallToolResponse, ErrorData>> {
        Box::pin(async move {
            let meta = self.asked.meta_for(&asking);
            let call = self.forward(address, arguments, progress, meta);
            tokio::select! {
                result = call => result.map(CallToolResponse::Complete),
                () = asking.cancel.cancelled() => Err(ErrorData::internal_error(
                    "the client cancelled the call",
                    None,
                )),
            }
        })
    }

    /// The running hub's skills: its `skills/list`, then each SKILL.md read.
    fn skills(&self) -> BoxFuture<'_, Result<Vec<capa_core::SkillFile>, ErrorData>> {
        Box::pin(async move {
            self.hub_still_there().await?;
            let peer = self.client.peer();
            let listed = peer.list_all_skills().await.map_err(bridge_error)?;
            let mut files = Vec::new();
            for skill in listed {
                let read = peer
                    .read_resource(rmcp::model::ReadResourceRequestParams::new(
                        skill.uri.clone(),
                    ))
                    .await
                    .map_err(bridge_error)?;
                if let Some(file) = crate::skills::file_from_read(skill, &read) {
                    files.push(file);
                }
            }
            Ok(files)
        })
    }

    fn tool_changes(&self) -> Box<dyn ToolChanges> {
        let mut changes = self.changes.clone();
        changes.mark_unchanged();
        Box::new(changes)
    }

    /// The running hub's own instructions, so that the bridge presents its exposure mode.
    fn instructions(&self) -> String {
        self.client
            .peer()
            .peer_info()
            .and_then(|info| info.instructions.clone())
            .unwrap_or_else(|| crate::surface::EXPOSE_ALL_INSTRUCTIONS.to_owned())
    }
}
