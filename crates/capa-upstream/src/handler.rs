//! The client side of each upstream connection: who we say we are, and what we do with the
//! server's notifications.

use rmcp::ClientHandler;
use rmcp::model::{ClientCapabilities, ClientConfig, Implementation, ProgressNotificationParam};
use rmcp::service::{NotificationContext, RoleClient};
use tokio::sync::mpsc;

use crate::progress::ProgressRouter;

/// Forwards "tools changed" to the supervisor, which lists the tools again, and progress to the
/// call that asked for it.
#[derive(Clone)]
pub(crate) struct UpstreamClient {
    pub(crate) source_id: String,
    pub(crate) tools_changed: mpsc::UnboundedSender<()>,
    pub(crate) progress: ProgressRouter,
}

impl ClientHandler for UpstreamClient {
    fn get_info(&self) -> ClientConfig {
        ClientConfig::new(
            ClientCapabilities::default(),
            Implementation::new("capabilities-hub", env!("CARGO_PKG_VERSION")),
        )
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
}
