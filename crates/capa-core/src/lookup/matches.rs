//! The tools a query matches, for a person filtering the Tools page: every tool of the catalog
//! ranked by the same index `search` uses, whatever the policy says of it (a person looks for a
//! tool they turned off too), above the same relevance floor.

use super::search::{MAX_QUERY_CHARS, RELEVANCE_FLOOR};
use super::{LookupError, ToolIndex};

/// A tool a query matched, with its score (higher is closer).
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct ToolMatch {
    pub address: String,
    pub score: f32,
}

/// The tools of `index` that `query` matches, best first; none for an empty query.
pub fn matching_tools(index: &ToolIndex, query: &str) -> Result<Vec<ToolMatch>, LookupError> {
    let query = query.trim();
    if query.chars().count() > MAX_QUERY_CHARS {
        return Err(LookupError::InvalidArguments(format!(
            "the search is {} characters; keep it to {MAX_QUERY_CHARS} or fewer",
            query.chars().count()
        )));
    }
    if query.is_empty() {
        return Ok(Vec::new());
    }
    let hits = index
        .search_index()
        .search(query)
        .map_err(|e| LookupError::Index(e.to_string()))?;
    let floor = hits
        .first()
        .map_or(0.0, |best| best.score * RELEVANCE_FLOOR);
    let tools = index.catalog().tools();
    Ok(hits
        .iter()
        .filter(|h| h.score >= floor)
        .filter_map(|h| {
            Some(ToolMatch {
                address: tools.get(h.doc)?.address.to_string(),
                score: h.score,
            })
        })
        .collect())
}
