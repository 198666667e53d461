//! JSON Schema to TypeScript declarations, for the code-mode MCP surface.
//!
//! The hub shows the model its tools as TypeScript: `search` prints one-line signatures
//! ([`signature_line`]) and `describe` prints `declare const <namespace>` blocks with JSDoc
//! ([`describe`]) within a token budget counted in `o200k_base` ([`count_tokens`]). The sandbox
//! exposes each source as a global object whose members are named by [`member_names`], so the
//! declarations and the runtime agree on every identifier.
//!
//! Nothing here panics on a schema: what JSON Schema can say but TypeScript cannot, or what is
//! invalid, becomes `unknown` with a short `/* unsupported schema: … */` note.

mod builder;
mod catalog;
mod convert;
mod describe;
mod doc;
mod error;
mod ident;
mod keywords;
mod model;
mod render;
mod signature;
mod tokens;
mod ty;

pub use describe::{Description, MAX_TARGETS, declare_types, describe};
pub use error::DescribeError;
pub use ident::{js_identifier, member_names};
pub use signature::signature_line;
pub use tokens::{count_tokens, count_tokens_cl100k};

/// Default token budget of one `describe` call.
pub const DEFAULT_BUDGET: usize = 2500;

/// One tool as the generator sees it.
#[derive(Debug, Clone, Copy)]
pub struct ToolSpec<'a> {
    /// Source id, e.g. `github` or `aws-kb`.
    pub namespace: &'a str,
    /// Tool name as the catalog knows it, e.g. `create_issue`, `get-sum`.
    pub name: &'a str,
    pub description: Option<&'a str>,
    pub input_schema: &'a serde_json::Value,
    pub output_schema: Option<&'a serde_json::Value>,
}
