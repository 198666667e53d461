//! Connections to upstream MCP servers (sources) with the rmcp client: stdio children and
//! Streamable HTTP endpoints.
//!
//! An [`Upstream`] keeps one server connected: it negotiates the protocol (2026-07-28 first, older
//! versions as fallback), lists tools page by page, refreshes them when the server says they
//! changed, restarts a crashed child with backoff, and bounds every call with a timeout. Failures
//! come back as [`UpstreamError`], typed and marked retryable or not, so the hub stays up whatever
//! an upstream does.

mod connect;
mod error;
mod handler;
mod progress;
mod spec;
mod supervisor;

pub use error::UpstreamError;
pub use progress::{Progress, ProgressRouter, ProgressSink, call_tool_with_progress};
pub use spec::{UpstreamSpec, UpstreamTransport};
pub use supervisor::{Upstream, UpstreamEvent, UpstreamState, UpstreamStatus};

/// rmcp's model types, re-exported so that users of this crate name one version of them.
pub use rmcp::model::{CallToolResult, JsonObject, Tool};
