//! What the `search` and `on-demand` exposure modes need from the core (tool-exposure.md):
//! plain term matching over the catalog, compact signatures, and a check of `call_tool`
//! arguments against a tool's input schema (so a model gets the full schema back when it got
//! them wrong).

mod arguments;
mod matching;
mod signature;

pub use arguments::check_arguments;
pub use matching::{DEFAULT_MATCHES, MAX_MATCHES, match_tools};
pub use signature::compact_signature;
