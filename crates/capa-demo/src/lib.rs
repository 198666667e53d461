//! The built-in `demo` source: a few tools that need no account (echo, arithmetic, and a small
//! notes store), so that a first start has something to search and call.
//!
//! It is a real MCP server (rmcp), served in-process over an in-memory duplex pipe, so the hub
//! reaches it through exactly the same client path as any other upstream.

mod notes;
mod server;

pub use notes::Notes;
pub use server::DemoServer;

/// The namespace of the demo source.
pub const DEMO_SOURCE_ID: &str = "demo";

/// A short label shown wherever the demo source is listed.
pub const DEMO_DESCRIPTION: &str =
    "Built-in demo tools (no account needed). Turn off with `options: { demo: false }`.";

/// Starts the demo server on one end of an in-memory pipe and returns the other end, ready to be
/// used as a client transport.
pub fn spawn_in_process(notes: Notes) -> tokio::io::DuplexStream {
    use rmcp::ServiceExt;
    let (client_end, server_end) = tokio::io::duplex(64 * 1024);
    tokio::spawn(async move {
        match DemoServer::new(notes).serve(server_end).await {
            Ok(running) => {
                let _ = running.waiting().await;
            }
            Err(e) => tracing::warn!(error = %e, "demo source failed to start"),
        }
    });
    client_end
}
