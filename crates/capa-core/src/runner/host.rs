//! The sandbox's host: guest tool calls go through the hub (catalog, connections, policy,
//! redaction, history) and are journaled in call order; `hub.search` / `hub.describe` answer
//! from the same lookups as the MCP tools.

use std::sync::Arc;
use std::time::Instant;

use capa_sandbox::{Host, HostCall, ToolFailure};
use capa_store::JournalEntry;
use futures::future::BoxFuture;
use serde_json::Value;

use crate::hub::{CallContext, Hub};
use crate::lookup::{LookupError, SearchRequest};
use crate::{CallError, CallToolResult};

/// One run's view of the hub.
pub(super) struct HubHost {
    pub hub: Arc<Hub>,
    pub run_id: String,
    pub client: Option<String>,
}

impl Host for HubHost {
    fn call(&self, call: HostCall) -> BoxFuture<'static, Result<Value, ToolFailure>> {
        let hub = self.hub.clone();
        let run_id = self.run_id.clone();
        let client = self.client.clone();
        Box::pin(async move {
            let started = Instant::now();
            let arguments = match &call.arguments {
                Value::Object(map) => Some(map.clone()),
                Value::Null => None,
                _ => {
                    return Err(failure(
                        "invalid_arguments",
                        format!("{} takes an object of arguments", call.address),
                        false,
                    ));
                }
            };
            let context = CallContext {
                client,
                connection: call.connection.clone(),
                progress: None,
            };
            let outcome = match hub.call(&call.address, arguments, &context).await {
                Ok(result) => tool_value(&call.address, result),
                Err(error) => Err(call_failure(&error)),
            };
            let mut arguments = call.arguments.clone();
            hub.redactor().redact_json(&mut arguments);
            let entry = JournalEntry {
                index: call.index,
                address: call.address.clone(),
                connection: call.connection.clone(),
                arguments: arguments.to_string(),
                ok: outcome.is_ok(),
                outcome: match &outcome {
                    Ok(value) => value.to_string(),
                    Err(failure) => serde_json::json!({
                        "code": failure.code,
                        "message": failure.message,
                        "retryable": failure.retryable,
                    })
                    .to_string(),
                },
                ms: started.elapsed().as_millis() as i64,
            };
            if let Err(e) = hub.store().journal_call(&run_id, &entry) {
                tracing::error!(error = %e, run = %run_id, "could not journal a call");
            }
            outcome
        })
    }

    fn search(&self, query: String) -> BoxFuture<'static, Result<String, ToolFailure>> {
        let hub = self.hub.clone();
        Box::pin(async move {
            let request = SearchRequest {
                query,
                ..SearchRequest::default()
            };
            hub.search(&request).await.map_err(|e| lookup_failure(&e))
        })
    }

    fn describe(&self, targets: Vec<String>) -> BoxFuture<'static, Result<String, ToolFailure>> {
        let hub = self.hub.clone();
        Box::pin(async move { hub.describe(&targets).await.map_err(|e| lookup_failure(&e)) })
    }
}

fn failure(code: &str, message: String, retryable: bool) -> ToolFailure {
    ToolFailure {
        code: code.to_owned(),
        message,
        hint: None,
        status: None,
        retryable,
    }
}

fn call_failure(error: &CallError) -> ToolFailure {
    let hint = match error {
        CallError::UnknownTool { .. } => Some("Use hub.search() to find tools.".to_owned()),
        CallError::NeedsConnection { .. } => Some(
            "Ask the user to add the connection in Capabilities; never ask for secrets in chat."
                .to_owned(),
        ),
        _ => None,
    };
    ToolFailure {
        hint,
        ..failure(error.code(), error.to_string(), error.retryable())
    }
}

fn lookup_failure(error: &LookupError) -> ToolFailure {
    failure(error.code(), error.to_string(), error.retryable())
}

/// What a guest receives for a tool's result: its structured content when it has one, else its
/// single text block (parsed as JSON when it is JSON), else its content blocks. A result with
/// `isError` becomes a `ToolError` with the tool's own text as the message.
fn tool_value(address: &str, result: CallToolResult) -> Result<Value, ToolFailure> {
    let texts: Vec<&str> = result
        .content
        .iter()
        .filter_map(|block| block.as_text().map(|t| t.text.as_str()))
        .collect();
    if result.is_error == Some(true) {
        let message = if texts.is_empty() {
            format!("{address} reported an error")
        } else {
            texts.join("\n")
        };
        return Err(failure("tool_error", message, false));
    }
    if let Some(structured) = result.structured_content {
        return Ok(structured);
    }
    if let [text] = texts.as_slice()
        && result.content.len() == 1
    {
        return Ok(serde_json::from_str(text).unwrap_or_else(|_| Value::String((*text).to_owned())));
    }
    Ok(serde_json::to_value(&result.content).unwrap_or(Value::Null))
}
