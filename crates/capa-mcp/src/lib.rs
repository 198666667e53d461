//! The hub's MCP side: the front and the surfaces it serves.
//!
//! [`McpFront`] is an rmcp server handler over a [`Surface`] (`surface.rs`, a leaf), served on
//! stdio here ([`serve_stdio`]) and on Streamable HTTP by capa-server, which owns the loopback
//! HTTP server, its guard and the JSON API and depends on this crate. The surfaces are one per
//! exposure mode ([`surface_for`]): code mode's `search`/`describe`/`execute` (`code.rs`, with
//! the approval rounds over MCP in `approvals.rs`), `search`, `on-demand` and `none`
//! (`modes.rs`), and expose-all ([`LocalSurface`]). Every direct result is fitted to the inline
//! budget (`inline.rs`). The sources' prompts and resources go through a [`relay::Relay`].
//! [`bridge::RemoteSurface`] lets `capa mcp` forward to a running hub.

mod approvals;
mod asker;
mod asking;
mod boxed;
pub mod bridge;
pub mod code;
mod folded;
mod front;
pub mod hub_client;
pub mod inline;
mod kept_tasks;
mod listen;
pub mod local;
pub mod modes;
pub mod notices;
mod pairing;
pub mod panics;
mod read_result;
pub mod relay;
mod relayed;
mod skills;
mod state_codec;
pub mod surface;
pub mod surface_for;
mod task_store;
mod tasks;
pub mod tool_error;

pub use code::{CODE_INSTRUCTIONS, CodeSurface, code_tools};
pub use front::McpFront;
pub use local::LocalSurface;
pub use surface::{Asking, Surface, ToolChanges};
pub use surface_for::{surface_for, surface_for_profile};

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
