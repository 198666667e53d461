//! A source's tool result as this hub gives it to its clients.

use capa_core::CallToolResult;
use rmcp::model::ResultType;

/// `_meta` key under which a 2026-07-28 server names itself in each result.
const UPSTREAM_SERVER_INFO_META: &str = "io.modelcontextprotocol/serverInfo";

/// `result` as this hub relays it: its source's server identity in `_meta` would misname the
/// server that answered (the id of a source's own task is removed where the hub follows it,
/// `capa_upstream`'s `source_task.rs`), and a result of an older source carries no
/// `resultType`, which 2026-07-28 requires.
pub(crate) fn relayed(mut result: CallToolResult) -> CallToolResult {
    result.result_type = Some(ResultType::COMPLETE);
    if let Some(meta) = result.meta.as_mut() {
        meta.0.remove(UPSTREAM_SERVER_INFO_META);
        if meta.0.is_empty() {
            result.meta = None;
        }
    }
    result
}
