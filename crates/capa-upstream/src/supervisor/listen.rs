//! A 2026-07-28 server's list changes, which it sends only on a `subscriptions/listen` stream.

use rmcp::model::{ServerNotification, SubscriptionFilter};
use rmcp::{Peer, service::RoleClient};
use tokio::sync::mpsc;

/// Aborts a task when dropped, so a listener ends with its connection.
pub(super) struct AbortOnDrop(pub(super) tokio::task::JoinHandle<()>);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}

pub(super) async fn listen_for_tool_changes(
    peer: Peer<RoleClient>,
    source_id: String,
    tools_changed: mpsc::UnboundedSender<()>,
) {
    let filter = SubscriptionFilter::builder().tools_list_changed().build();
    let mut subscription = match peer.listen(filter).await {
        Ok(subscription) => subscription,
        Err(e) => {
            tracing::debug!(source = %source_id, error = %e, "upstream refused subscriptions/listen; tool changes will not be seen");
            return;
        }
    };
    while let Ok(Some(notification)) = subscription.next().await {
        if matches!(
            notification,
            ServerNotification::ToolListChangedNotification(_)
        ) {
            tracing::info!(source = %source_id, "upstream says its tools changed");
            if tools_changed.send(()).is_err() {
                break;
            }
        }
    }
}
