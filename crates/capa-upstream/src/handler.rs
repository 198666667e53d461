//! The client side of each upstream connection: who we say we are, and what we do with the
//! server's notifications.

#![expect(
    deprecated,
    reason = "log messages are deprecated by SEP-2577 but still sent and shown in the 2025 era"
)]

use rmcp::ClientHandler;
use rmcp::model::{
    ClientCapabilities, ClientConfig, CreateMessageRequestParams, CreateMessageResult,
    ElicitRequestParams, ElicitResult, ElicitationCapability, ErrorData, FormElicitationCapability,
    Implementation, ListRootsResult, LoggingMessageNotificationParam, ProgressNotificationParam,
    ResourceUpdatedNotificationParam, SamplingCapability,
};
use rmcp::service::{NotificationContext, RequestContext, RoleClient};
use tokio::sync::mpsc;

use crate::asker::{Askers, Wanted};
use crate::progress::ProgressRouter;
use crate::rounds::elicitation_from;
use crate::supervisor::UpstreamEvent;

/// Forwards "tools changed" to the supervisor, which lists the tools again, progress to the
/// call that asked for it, and what the hub relays to its clients (log messages, changed
/// resources, changed prompt and resource lists) to the hub.
#[derive(Clone)]
pub(crate) struct UpstreamClient {
    pub(crate) source_id: String,
    pub(crate) tools_changed: mpsc::UnboundedSender<()>,
    pub(crate) progress: ProgressRouter,
    pub(crate) askers: Askers,
    pub(crate) events: mpsc::UnboundedSender<UpstreamEvent>,
    /// The connection whose credentials this upstream uses, named in what it tells the hub:
    /// clients hear only the default connection's messages and changes.
    pub(crate) connection: Option<String>,
}

impl UpstreamClient {
    fn tell_hub(&self, event: UpstreamEvent) {
        // A closed channel means the hub is shutting down: nobody to tell.
        let _ = self.events.send(event);
    }
}

impl ClientHandler for UpstreamClient {
    /// Sampling and form elicitation, passed on to the client whose call runs (`asker.rs`).
    /// Not roots: one source serves every client, and a client's roots would change what it
    /// allows for all of them (server-filesystem replaces its directories with them).
    fn get_info(&self) -> ClientConfig {
        let mut capabilities = ClientCapabilities::default();
        capabilities.sampling = Some(SamplingCapability::default());
        capabilities.elicitation =
            Some(ElicitationCapability::new().with_form(FormElicitationCapability::default()));
        ClientConfig::new(
            capabilities,
            Implementation::new("capabilities-hub", env!("CARGO_PKG_VERSION")),
        )
    }

    async fn create_message(
        &self,
        params: CreateMessageRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> Result<CreateMessageResult, ErrorData> {
        let asker = self.askers.current(&self.source_id, Wanted::Sampling)?;
        asker.create_message(params).await
    }

    /// The form's message names the source, so the person knows who asks (`rounds.rs`).
    async fn create_elicitation(
        &self,
        params: ElicitRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, ErrorData> {
        let asker = self.askers.current(&self.source_id, Wanted::Elicitation)?;
        let params = elicitation_from(&self.source_id, params)?;
        asker.create_elicitation(params).await
    }

    /// Roots are not declared at `initialize` (see `get_info`), but each call tells the source
    /// what its client can answer (`rounds.rs`): a source that asks for roots mid-call gets the
    /// roots of that call's client, or an error, never an empty list made up here.
    async fn list_roots(
        &self,
        _context: RequestContext<RoleClient>,
    ) -> Result<ListRootsResult, ErrorData> {
        let asker = self.askers.current(&self.source_id, Wanted::Roots)?;
        asker.list_roots().await
    }

    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        tracing::info!(source = %self.source_id, "upstream says its tools changed");
        // The receiver lives as long as the supervisor; a closed channel means shutdown.
        let _ = self.tools_changed.send(());
    }

    async fn on_progress(
        &self,
        params: ProgressNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        self.progress.deliver(params);
    }

    async fn on_logging_message(
        &self,
        params: LoggingMessageNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        self.tell_hub(UpstreamEvent::Message {
            source_id: self.source_id.clone(),
            connection: self.connection.clone(),
            message: params,
        });
    }

    async fn on_resource_updated(
        &self,
        params: ResourceUpdatedNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        self.tell_hub(UpstreamEvent::ResourceUpdated {
            source_id: self.source_id.clone(),
            connection: self.connection.clone(),
            uri: params.uri,
        });
    }

    async fn on_prompt_list_changed(&self, _context: NotificationContext<RoleClient>) {
        self.tell_hub(UpstreamEvent::ListsChanged {
            source_id: self.source_id.clone(),
            connection: self.connection.clone(),
        });
    }

    async fn on_resource_list_changed(&self, _context: NotificationContext<RoleClient>) {
        self.tell_hub(UpstreamEvent::ListsChanged {
            source_id: self.source_id.clone(),
            connection: self.connection.clone(),
        });
    }
}
