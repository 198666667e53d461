//! A failed call as the model reads it: a tool result with `isError`, and the typed error in
//! `_meta` for programs. Every surface answers failures this way.

use capa_core::{CallError, CallToolResult};
use rmcp::model::ContentBlock;

/// A failed call as a tool result with `isError: true`, so the model sees what happened, plus the
/// typed error in `_meta` for programs: `{"capabilities/error": {code, message, retryable}}`.
pub fn error_result(error: &CallError) -> CallToolResult {
    typed_error_result(error.code(), &error.to_string(), error.retryable())
}

/// An `isError` result reading `code: message`, with `{code, message, retryable}` in `_meta`.
pub fn typed_error_result(code: &str, message: &str, retryable: bool) -> CallToolResult {
    let retry = if retryable { " (retryable)" } else { "" };
    let mut result = CallToolResult::error(vec![ContentBlock::text(format!(
        "{code}: {message}{retry}"
    ))]);
    let mut meta = rmcp::model::MetaObject::new();
    meta.0.insert(
        ERROR_META_KEY.to_owned(),
        serde_json::json!({
            "code": code,
            "message": message,
            "retryable": retryable,
        }),
    );
    result.meta = Some(meta);
    result
}

/// `_meta` key of a typed call error.
pub const ERROR_META_KEY: &str = "capabilities/error";
