//! `read_result`: direct mode's way to large results (docs/profiles.md, "Large results in direct
//! mode"). A `direct` (or `expose-all`) named profile with `readResult` (on by default) lists this
//! tool beside the sources' tools; a result over `inlineResultBytes` is then kept whole for the
//! client that called (capa-core's `keep_direct_result`), cut to the limit as always
//! ([`crate::inline`]), and its notice names the handle. `read_result({ handle, offset, length })`
//! reads any piece, `read_result({ handle, path })` one value: what `hub.read` answers in code
//! mode, from the same store.
//!
//! The hub's own expose-all (`options.toolExposure`) does not list it: tool-exposure.md defines
//! that list as the sources' tools.

use std::sync::Arc;

use capa_core::{CallToolResult, Hub, JsonObject, Profile, Tool};
use rmcp::model::{ContentBlock, ToolAnnotations};
use serde_json::{Value, json};

use crate::tool_error::typed_error_result;

/// The tool's name: no dot, so it cannot be a source's `namespace.tool`.
pub(crate) const READ_RESULT: &str = "read_result";

const DESCRIPTION: &str = "Read a piece of a large tool result the hub kept: a result over the inline limit ends with its handle. read_result({ handle, offset, length }) reads bytes of its text (offset 0 first; `next` says where the next piece starts), read_result({ handle, path: \"items[3].body\" }) one value of its JSON. Kept for a day, for this client only.";

/// Whether the surface of `profile` serves `read_result`: a named direct profile that did not
/// turn it off.
pub(crate) fn enabled(profile: Option<&Profile>) -> bool {
    profile
        .is_some_and(|p| p.mode() == capa_config::ExposureMode::ExposeAll && p.config().read_result)
}

/// The tool's MCP definition.
pub(crate) fn tool() -> Tool {
    let schema = json!({
        "type": "object",
        "properties": {
            "handle": {"type": "string", "description": "The handle a cut result named (h_…)."},
            "offset": {"type": "integer", "minimum": 0, "description": "First byte of the piece (UTF-8)."},
            "length": {"type": "integer", "minimum": 1, "description": "Bytes to read; 16 KB when left out."},
            "path": {"type": "string", "description": "One value of the JSON, like items[3].body."}
        },
        "required": ["handle"]
    });
    let schema = match schema {
        Value::Object(map) => map,
        _ => JsonObject::new(),
    };
    Tool::new(READ_RESULT, DESCRIPTION, Arc::new(schema))
        .annotate(ToolAnnotations::new().read_only(true).idempotent(true))
}

/// Answers `read_result(arguments)` for `client`, within `budget` like every direct result: a
/// piece without a `length` is a quarter of it (its JSON is sent twice, as structured content
/// and as text), and a larger one asked for is cut like any result.
pub(crate) async fn call(
    hub: &Arc<Hub>,
    client: Option<String>,
    arguments: Option<JsonObject>,
    budget: usize,
) -> CallToolResult {
    let mut arguments = arguments.unwrap_or_default();
    let Some(Value::String(handle)) = arguments.remove("handle") else {
        return typed_error_result(
            "invalid_arguments",
            "read_result takes { handle: \"h_…\", offset?, length? } or { handle, path }",
            false,
        );
    };
    let options = Value::Object(arguments).to_string();
    let hub = hub.clone();
    let default_length = (budget / 4).max(1);
    let read = tokio::task::spawn_blocking(move || {
        hub.runs()
            .read_kept_result(client.as_deref(), &handle, &options, default_length)
    })
    .await;
    match read {
        Ok(Ok(piece)) => {
            let text = piece.to_string();
            let mut result = CallToolResult::structured(piece);
            result.content = vec![ContentBlock::text(text)];
            crate::inline::fit(result, budget)
        }
        Ok(Err(failure)) => {
            let mut message = failure.message.clone();
            if let Some(hint) = &failure.hint {
                message = format!("{message} {hint}");
            }
            typed_error_result(&failure.code, &message, failure.retryable)
        }
        Err(_) => typed_error_result("internal", "read_result failed", false),
    }
}

/// What is kept of a direct call's result: its structured content when it has one, its text
/// when every block is text, else the whole result as JSON.
pub(crate) fn body(result: &CallToolResult) -> Value {
    if let Some(structured) = &result.structured_content {
        return structured.clone();
    }
    let texts: Option<Vec<&str>> = result
        .content
        .iter()
        .map(|b| b.as_text().map(|t| t.text.as_str()))
        .collect();
    match texts {
        Some(texts) if !texts.is_empty() => Value::String(texts.concat()),
        _ => serde_json::to_value(result).unwrap_or(Value::Null),
    }
}

/// `result` within `budget`; over it, kept whole first when the surface serves `read_result`,
/// and its notice names the handle (or says why it was not kept).
pub(crate) async fn fit(
    hub: &Arc<Hub>,
    keep: bool,
    client: Option<&str>,
    result: CallToolResult,
    budget: usize,
) -> CallToolResult {
    if !keep || crate::inline::fits(&result, budget) {
        return crate::inline::fit(result, budget);
    }
    let value = body(&result);
    let owner = client.map(str::to_owned);
    let keeper = hub.clone();
    let kept = tokio::task::spawn_blocking(move || {
        keeper.runs().keep_direct_result(owner.as_deref(), value)
    })
    .await
    .unwrap_or_else(|_| Err("the hub could not keep it".to_owned()));
    let note = match kept {
        Ok(handle) => format!(
            "The whole result is kept as {} ({}, {}): read it with read_result({{ handle: \"{}\", offset: 0 }}) and on from `next`, or read_result({{ handle: \"{}\", path: \"…\" }}) for one value.",
            handle.handle,
            capa_sandbox::human_bytes(usize::try_from(handle.bytes).unwrap_or(usize::MAX)),
            handle.preview,
            handle.handle,
            handle.handle,
        ),
        Err(why) => format!(
            "The whole result is not kept: {why}. Ask the tool for less: a narrower query, a smaller range or fewer items."
        ),
    };
    crate::inline::fit_noting(result, budget, Some(&note))
}
