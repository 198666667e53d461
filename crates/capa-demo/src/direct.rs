//! The demo's tools called without a session: what the hub's in-process call path uses
//! (`capa_upstream::DirectCalls`), so that a guest's call to a built-in tool is a function call
//! rather than two JSON encodings and a pipe each way.
//!
//! Each answer is exactly what the MCP server (`server.rs`, rmcp's tool router) answers for the
//! same call: arguments parsed by rmcp's own `parse_json_object`, a parse failure a tool error
//! with rmcp's words, an unknown tool rmcp's `invalid_params`, the result converted by rmcp's
//! `IntoCallToolResult`. `tests/direct.rs` holds both paths to the same answers, and to the same
//! list of tools.

use rmcp::ErrorData;
use rmcp::handler::server::tool::{IntoCallToolResult, parse_json_object};
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{CallToolResponse, CallToolResult, ContentBlock, JsonObject};
use serde::de::DeserializeOwned;

use crate::server::DemoServer;

impl capa_upstream::DirectCalls for DemoServer {
    fn call_tool(&self, name: &str, arguments: Option<JsonObject>) -> capa_upstream::DirectAnswer {
        // The tools answer at once (the notes are in memory or one small file): the future is
        // ready when made.
        Box::pin(std::future::ready(self.call_direct(name, arguments)))
    }
}

impl DemoServer {
    /// Answers a call of tool `name` as the server answers `tools/call`.
    pub fn call_direct(
        &self,
        name: &str,
        arguments: Option<JsonObject>,
    ) -> Result<CallToolResult, ErrorData> {
        match name {
            "echo" => with(arguments, |p| self.echo(p)),
            "add" => with(arguments, |p| self.add(p)),
            "multiply" => with(arguments, |p| self.multiply(p)),
            "divide" => with(arguments, |p| self.divide(p)),
            "list_notes" => complete(self.list_notes().into_call_tool_result()),
            "read_note" => with(arguments, |p| self.read_note(p)),
            "write_note" => with(arguments, |p| self.write_note(p)),
            "delete_note" => with(arguments, |p| self.delete_note(p)),
            _ => Err(ErrorData::invalid_params("tool not found", None)),
        }
    }
}

/// Calls `tool` with its parsed arguments (none: an empty object, as rmcp reads them).
fn with<P: DeserializeOwned, R: IntoCallToolResult>(
    arguments: Option<JsonObject>,
    tool: impl FnOnce(Parameters<P>) -> R,
) -> Result<CallToolResult, ErrorData> {
    match parse_json_object::<P>(arguments.unwrap_or_default()) {
        Ok(parsed) => complete(tool(Parameters(parsed)).into_call_tool_result()),
        // rmcp's router turns a parse failure into a tool error the model can read.
        Err(e) => Ok(CallToolResult::error(vec![ContentBlock::text(e.message)])),
    }
}

fn complete(answer: Result<CallToolResponse, ErrorData>) -> Result<CallToolResult, ErrorData> {
    match answer? {
        CallToolResponse::Complete(result) => Ok(result),
        _ => Err(ErrorData::internal_error(
            "a demo tool answered with something other than a result",
            None,
        )),
    }
}
