//! The hub's loopback HTTP server, over the MCP side in capa-mcp.
//!
//! [`http::serve`] binds the loopback HTTP server behind the guard that checks Host, Origin and
//! the bearer token (`guard.rs`, `token.rs`, `cookies.rs`), on connections that are bounded and
//! timed out however many a process opens without a token (`connections.rs`): MCP at `/mcp`
//! (capa-mcp's [`McpFront`], with malformed bodies answered first by `mcp_body.rs` and answers
//! ready at once sent as JSON by `mcp_reply.rs`), the JSON API under `/api` (`api.rs`,
//! `approvals_api.rs`), the web UI's files and sessions (`ui.rs`) and the approval page
//! (`approval_page.rs`). `discovery.rs` writes and proves `hub.json`, which
//! [`bridge::HubCheck`] reads so that `capa mcp` can forward to a running hub.
//!
//! The MCP side is re-exported here under its old paths, so callers need one crate.

mod api;
mod approval_page;
pub mod approvals_api;
pub mod bridge;
mod connections;
mod cookies;
pub mod discovery;
mod guard;
pub mod http;
mod mcp_body;
mod mcp_reply;
mod panics;
mod team_auth;
pub mod token;
pub mod ui;

pub use approval_page::browser::{open as open_in_browser, open_for_person};
pub use capa_mcp::{
    Asking, CODE_INSTRUCTIONS, CodeSurface, LocalSurface, McpFront, Surface, ToolChanges, code,
    code_tools, modes, serve_stdio, surface, surface_for, surface_for_profile,
};
pub use http::{DEFAULT_PORT, HttpServer, ServeError, ServeOptions, serve, serve_with};
