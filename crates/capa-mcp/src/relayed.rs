//! A source's tool result as this hub gives it to its clients.

use capa_core::CallToolResult;
use rmcp::model::ResultType;

/// `_meta` key under which a 2026-07-28 server names itself in each result.
const UPSTREAM_SERVER_INFO_META: &str = "io.modelcontextprotocol/serverInfo";

/// `result` as this hub relays it: what its source said of itself in `_meta` (its server
/// identity, the id of a task of its own) would misname the server that answered, and a result
/// of an older source carries no `resultType`, which 2026-07-28 requires.
pub(crate) fn relayed(mut result: CallToolResult) -> CallToolResult {
    result.result_type = Some(ResultType::COMPLETE);
    if let Some(meta) = result.meta.as_mut() {
        meta.0.remove(UPSTREAM_SERVER_INFO_META);
        meta.0.remove(capa_core::RELATED_TASK_META);
        if meta.0.is_empty() {
            result.meta = None;
        }
    }
    result
}
