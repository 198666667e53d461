//! Calls to a server inside the hub that takes them as functions ([`DirectCalls`]): the demo
//! source. The connection, its tool list and its status are the session's as for any upstream;
//! only a call, once the upstream is ready, skips the pipe. What the session path guarantees
//! around a call holds here too, each in the same words (the same [`UpstreamError`]):
//!
//! - the call's timeout (`UpstreamSpec::call_timeout`), and cancellation by dropping the call;
//! - arguments are refused before the server sees them (`arguments_too_large`) when their JSON
//!   text and the largest request line around it ([`ENVELOPE_BYTES`]) pass [`MAX_MESSAGE_BYTES`]:
//!   nothing the pipe would refuse is taken, and the two roads differ only within that 1 KiB;
//! - a result over [`MAX_MESSAGE_BYTES`] of JSON is refused (`result_too_large`), and one whose
//!   answer would nest deeper than [`MAX_JSON_DEPTH`] (`result_too_deep`): its structured
//!   content sits two levels down in the answer (the message, `result`);
//! - an error of the server's (`invalid_params` for an unknown tool) becomes what the session's
//!   error answer becomes (`UpstreamError::from_service`).

use std::sync::Arc;

use capa_domain::json_size::json_len;
use rmcp::model::{CallToolResult, JsonObject};

use super::Upstream;
use crate::error::UpstreamError;
use crate::limits::{MAX_JSON_DEPTH, MAX_MESSAGE_BYTES};
use crate::spec::DirectCalls;
use crate::supervisor::UpstreamState;

/// How deep a result's structured content starts in the session's answer: the message, then
/// `result`, then the content's own top container.
const STRUCTURED_CONTENT_DEPTH: u32 = 3;

/// The most a `tools/call` request line adds around its arguments: the JSON-RPC envelope, the
/// tool's name (an upstream's names are at most 128 bytes) and the hub's `_meta`.
const ENVELOPE_BYTES: usize = 1024;

impl Upstream {
    /// The server's direct calls, when it takes them and the upstream is ready now.
    pub(super) fn direct_when_ready(&self) -> Option<Arc<dyn DirectCalls>> {
        let snapshot = self.snapshot.borrow();
        if snapshot.state == UpstreamState::Ready && snapshot.peer.is_some() {
            snapshot.direct.clone()
        } else {
            None
        }
    }

    /// Calls tool `name` of the server as a function, within the call's timeout and limits.
    pub(super) async fn call_direct(
        &self,
        direct: &dyn DirectCalls,
        name: &str,
        arguments: Option<JsonObject>,
    ) -> Result<CallToolResult, UpstreamError> {
        let source_id = &self.spec.source_id;
        if let Some(arguments) = &arguments {
            let bytes = json_len(arguments);
            if bytes.saturating_add(ENVELOPE_BYTES) > MAX_MESSAGE_BYTES {
                return Err(UpstreamError::ArgumentsTooLarge {
                    source_id: source_id.clone(),
                    bytes: u64::try_from(bytes).unwrap_or(u64::MAX),
                    limit: MAX_MESSAGE_BYTES,
                });
            }
        }
        let answer =
            tokio::time::timeout(self.spec.call_timeout, direct.call_tool(name, arguments))
                .await
                .map_err(|_| self.timed_out())?;
        let result = answer
            .map_err(|e| UpstreamError::from_service(source_id, rmcp::ServiceError::McpError(e)))?;
        let bytes = json_len(&result);
        if bytes > MAX_MESSAGE_BYTES {
            return Err(UpstreamError::TooLarge {
                source_id: source_id.clone(),
                bytes: Some(u64::try_from(bytes).unwrap_or(u64::MAX)),
                limit: MAX_MESSAGE_BYTES,
            });
        }
        let content_limit = MAX_JSON_DEPTH - (STRUCTURED_CONTENT_DEPTH - 1);
        if let Some(depth) = result
            .structured_content
            .as_ref()
            .and_then(|v| deeper_than(v, content_limit))
        {
            return Err(UpstreamError::TooDeep {
                source_id: source_id.clone(),
                depth: Some(depth + u64::from(STRUCTURED_CONTENT_DEPTH - 1)),
                limit: MAX_JSON_DEPTH,
            });
        }
        Ok(result)
    }
}

/// The depth `value` reaches past `limit` (the first such depth found), if it does; without
/// recursion, so that a deep value cannot exhaust the stack here.
fn deeper_than(value: &serde_json::Value, limit: u32) -> Option<u64> {
    let mut stack = vec![(value, 1u32)];
    while let Some((value, depth)) = stack.pop() {
        let children: Box<dyn Iterator<Item = &serde_json::Value>> = match value {
            serde_json::Value::Array(items) => Box::new(items.iter()),
            serde_json::Value::Object(map) => Box::new(map.values()),
            _ => continue,
        };
        if depth > limit {
            return Some(u64::from(depth));
        }
        stack.extend(children.map(|child| (child, depth + 1)));
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn depth_is_counted_by_containers_and_found_past_the_limit() {
        let mut deep = json!(1);
        for _ in 0..10 {
            deep = json!([deep]);
        }
        assert_eq!(deeper_than(&deep, 10), None);
        assert_eq!(deeper_than(&deep, 9), Some(10));
        assert_eq!(deeper_than(&json!({"a": "b"}), 1), None);
        assert_eq!(deeper_than(&json!("scalar"), 0), None);
    }
}
