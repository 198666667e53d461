//! The built-in `demo` source: a few tools that need no account (echo, arithmetic, and a small
//! notes store), so that a first start has something to search and call.
//!
//! It is a real MCP server (rmcp), served in-process over an in-memory duplex pipe, so the hub
//! connects to it, lists its tools and watches it as any other upstream. Its calls take a
//! shorter road once it is connected: [`DemoServer::call_direct`], a function call with the
//! same answers (`direct.rs`).

mod direct;
mod notes;
mod server;

pub use notes::Notes;
pub use server::DemoServer;

/// The namespace of the demo source.
pub const DEMO_SOURCE_ID: &str = "demo";

/// A short label shown wherever the demo source is listed.
pub const DEMO_DESCRIPTION: &str = "Built-in demo tools (no account needed). To turn them off, set options: { demo: false } in the capabilities file.";

/// The longest message the demo server reads (its newline counted): what the hub reads of an
/// upstream, `capa_upstream::MAX_MESSAGE_BYTES` (a test pins them equal). The hub refuses a
/// larger request to the demo before sending it (`arguments_too_large`), because the demo would
/// drop it unread and leave the call waiting for its timeout.
pub const MAX_MESSAGE_BYTES: usize = 8 * 1024 * 1024;

/// Starts the demo server on one end of an in-memory pipe and returns the other end, ready to be
/// used as a client transport, with the same server's direct calls ([`DemoServer::call_direct`]).
pub fn spawn_in_process(notes: Notes) -> capa_upstream::InProcessServer {
    use rmcp::ServiceExt;
    use rmcp::transport::async_rw::AsyncRwTransport;
    let (client_end, server_end) = tokio::io::duplex(64 * 1024);
    let server = DemoServer::new(notes);
    let served = server.clone();
    tokio::spawn(async move {
        let (read, write) = tokio::io::split(server_end);
        let transport =
            AsyncRwTransport::new_server(read, write).with_max_line_length(MAX_MESSAGE_BYTES);
        match served.serve(transport).await {
            Ok(running) => {
                let _ = running.waiting().await;
            }
            Err(e) => tracing::warn!(error = %e, "demo source failed to start"),
        }
    });
    capa_upstream::InProcessServer {
        stream: client_end,
        direct: Some(std::sync::Arc::new(server)),
    }
}
