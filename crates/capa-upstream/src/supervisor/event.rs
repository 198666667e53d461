//! What an upstream tells the hub: changes of its tools, and what the hub relays to its own
//! clients.

#![expect(
    deprecated,
    reason = "log messages are deprecated by SEP-2577 (2026-07-28) but clients of the 2025 era still ask for them"
)]

use rmcp::model::LoggingMessageNotificationParam;

/// What an upstream tells the hub.
#[derive(Debug, Clone, PartialEq)]
pub enum UpstreamEvent {
    /// The upstream's tool list (or its state) changed; the catalog should be rebuilt.
    Changed { source_id: String },
    /// The server sent a log message (`notifications/message`). `connection`: whose
    /// credentials the upstream that said it uses.
    Message {
        source_id: String,
        connection: Option<String>,
        message: LoggingMessageNotificationParam,
    },
    /// A resource the hub subscribed to changed (`notifications/resources/updated`), by the
    /// server's own URI.
    ResourceUpdated {
        source_id: String,
        connection: Option<String>,
        uri: String,
    },
    /// The server's prompts or resources changed (their `list_changed`).
    ListsChanged {
        source_id: String,
        connection: Option<String>,
    },
}
