//! The lookups of code mode: `search` (BM25F over the catalog) and `describe` (TypeScript
//! declarations). The MCP tools and the sandbox's `hub.search` / `hub.describe` both answer
//! from here, so the model reads the same text either way.

mod describe;
mod index;
mod matches;
mod pin_marks;
mod search;

pub use describe::{MAX_TARGETS, describe};
pub use index::ToolIndex;
pub use matches::{ToolMatch, matching_tools};
pub(crate) use search::one_line;
pub use search::{DEFAULT_LIMIT, MAX_LIMIT, MAX_QUERY_CHARS, SearchRequest, search};

/// A lookup the hub cannot answer as asked. The message is written for the model: it says what
/// was wrong and what to do instead.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum LookupError {
    /// An argument is out of its range or malformed.
    #[error("{0}")]
    InvalidArguments(String),
    /// No namespace by that name.
    #[error("{0}")]
    UnknownNamespace(String),
    /// A describe target names nothing the catalog has.
    #[error("{0}")]
    UnknownTarget(String),
    /// The index could not be built (a bug, or out of memory); the catalog itself is intact.
    #[error("the search index is not available: {0}")]
    Index(String),
    /// The hub's database could not be read.
    #[error("the hub's database is not available: {0}")]
    Store(String),
}

impl LookupError {
    /// A stable code for programs.
    pub fn code(&self) -> &'static str {
        match self {
            Self::InvalidArguments(_) => "invalid_arguments",
            Self::UnknownNamespace(_) => "unknown_namespace",
            Self::UnknownTarget(_) => "unknown_target",
            Self::Index(_) => "index_unavailable",
            Self::Store(_) => "store_unavailable",
        }
    }

    /// Only an index or database failure may go away on its own.
    pub fn retryable(&self) -> bool {
        matches!(self, Self::Index(_) | Self::Store(_))
    }
}

/// `a, b or c` for "did you mean" lists.
fn one_of(names: &[String]) -> String {
    match names {
        [] => String::new(),
        [one] => one.clone(),
        [rest @ .., last] => format!("{} or {last}", rest.join(", ")),
    }
}
