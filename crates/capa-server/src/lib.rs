//! The hub's MCP front and loopback HTTP server.
//!
//! [`McpFront`] serves a [`Surface`] over stdio or Streamable HTTP. [`http::serve`] binds the
//! loopback HTTP server (MCP at `/mcp`, a JSON API under `/api`) behind the guard that checks Host,
//! Origin and the bearer token. [`bridge::RemoteSurface`] lets `capa mcp` forward to a running hub.

mod approval_page;
mod approvals;
pub mod approvals_api;
pub mod bridge;
pub mod code;
mod cookies;
pub mod discovery;
mod front;
mod guard;
pub mod http;
mod inline;
mod mcp_body;
pub mod modes;
mod panics;
pub mod surface;
pub mod token;
pub mod ui;

pub use approval_page::browser::open as open_in_browser;
pub use code::{CODE_INSTRUCTIONS, CodeSurface, code_tools};
pub use front::McpFront;
pub use http::{DEFAULT_PORT, HttpServer, ServeError, ServeOptions, serve, serve_with};
pub use surface::{Asking, LocalSurface, Surface, ToolChanges, surface_for};

/// Serves `front` on this process's stdin and stdout until the client closes them.
pub async fn serve_stdio(front: McpFront) -> Result<(), String> {
    use rmcp::ServiceExt;
    let running = front
        .serve(rmcp::transport::stdio())
        .await
        .map_err(|e| format!("MCP over stdio failed to start: {e}"))?;
    running
        .waiting()
        .await
        .map(|_| ())
        .map_err(|e| format!("MCP over stdio stopped: {e}"))
}
