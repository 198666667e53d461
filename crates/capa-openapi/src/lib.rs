//! OpenAPI sources: an HTTP API described by an OpenAPI 3.0 or 3.1 document, served to the hub
//! as an MCP server of its own. Each operation is a tool (named by its `operationId`, or by
//! method and path), its parameters and body the tool's input, its success response the
//! tool's output type; each call is a real HTTP request with the source's credentials, bounded
//! in time, size and redirects.
//!
//! The server runs in the hub's process over an in-memory pipe, as the built-in demo does, so
//! everything the hub does for an MCP upstream (supervision, listing bounds, policies,
//! approvals, timeouts) applies unchanged.

mod api;
mod auth;
mod call;
mod document;
mod error;
mod naming;
mod operation;
mod request;
mod retry_after;
mod schema;
mod server;
mod server_url;
mod tool;
mod upgrade;

pub use api::{Api, Location, Settings};
pub use call::MAX_RESPONSE_BYTES;
pub use document::MAX_DOCUMENT_BYTES;
pub use error::LoadError;
pub use server::serve_in_process;
