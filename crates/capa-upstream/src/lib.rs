//! Connections to upstream MCP servers (sources) with the rmcp client: stdio children and
//! Streamable HTTP endpoints.
//!
//! An [`Upstream`] keeps one server connected: it negotiates the protocol (2026-07-28 first, older
//! versions as fallback), lists tools page by page, refreshes them when the server says they
//! changed, restarts a crashed child with backoff, and bounds every call with a timeout. Failures
//! come back as [`UpstreamError`], typed and marked retryable or not, so the hub stays up whatever
//! an upstream does. What an upstream sends is bounded (`limits.rs`): one message while it
//! streams in, and a tool list in tools, pages, bytes and per-tool sizes (`tool_list.rs`).

mod asker;
mod auth_signal;
mod bounded;
mod connect;
mod error;
mod explain;
mod handler;
mod http_client;
mod in_flight;
mod limits;
mod line_transport;
mod progress;
mod rounds;
mod scan;
mod source_log;
mod source_task;
mod spec;
mod stdio;
mod supervisor;
mod timings;
mod tool_list;

pub use asker::{AskFuture, ClientAsker, Wanted};
pub use error::UpstreamError;
pub use limits::{
    MAX_DESCRIPTION_BYTES, MAX_JSON_DEPTH, MAX_MESSAGE_BYTES, MAX_SCHEMA_BYTES, MAX_TITLE_BYTES,
    MAX_TOOL_LIST_BYTES, MAX_TOOL_NAME_BYTES, MAX_TOOL_NESTING, MAX_TOOL_PAGES, MAX_TOOLS,
};
pub use progress::{Progress, ProgressRouter, ProgressSink, call_tool_with_progress};
pub use source_log::{
    LogLevel, LogLine, LogPage, LogStream, MAX_LOG_BYTES, MAX_LOG_LINE_BYTES, MAX_LOG_LINES,
    SourceLog,
};
pub use source_task::SOURCE_TASK_LIFE;
pub use spec::{
    DirectAnswer, DirectCalls, InProcessServer, InProcessStart, UpstreamSpec, UpstreamTransport,
};
pub use supervisor::relay::Offers;
pub use supervisor::{Upstream, UpstreamEvent, UpstreamState, UpstreamStatus};
pub use timings::SupervisorTimings;

/// rmcp's model types, re-exported so that users of this crate name one version of them.
pub use rmcp::model::{
    CallToolResult, ClientCapabilities, CompleteRequestParams, CompleteResult, ElicitRequestParams,
    ElicitResult, ErrorData, GetPromptResult, InputRequest, InputResponses, JsonObject, Prompt,
    ReadResourceResult, Reference, Resource, ResourceTemplate, Tool,
};
/// Log messages and their levels, and sampling, deprecated by SEP-2577 (2026-07-28) but still
/// asked for and sent in the 2025 era.
#[expect(
    deprecated,
    reason = "log messages are deprecated by SEP-2577 but clients of the 2025 era still use them"
)]
pub use rmcp::model::{
    CreateMessageRequestParams, CreateMessageResult, ListRootsResult, LoggingLevel,
    LoggingMessageNotificationParam,
};
