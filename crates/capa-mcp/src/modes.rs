//! The `search`, `on-demand` and `none` exposure modes (tool-exposure.md, "Modes").
//!
//! - `search`: `search` and `call_tool`. Matches become callable at once and stay callable for
//!   the session, so searches accumulate.
//! - `on-demand`: `setup_tools` and `call_tool`. `setup_tools(['<skill>'])` or
//!   `setup_tools(['@<server>'])` activates tools for the session and answers their compact
//!   signatures.
//! - `none`: an empty list; `capa sh` runs tools from a terminal.
//!
//! A session is the HTTP session, else (2026-07-28 requests carry none) the client's name and
//! version, else the stdio connection (see `Asking::session`).

mod meta;
mod sessions;

pub use meta::{Meta, MetaSurface};

use capa_core::{CallToolResult, JsonObject, ProgressSink, Tool};
use rmcp::model::ErrorData;

pub(crate) use crate::boxed::Never;
use crate::surface::{BoxFuture, Surface, ToolChanges};
use crate::tool_error::typed_error_result;

/// Server instructions when the project exposes no MCP tools.
pub const NONE_INSTRUCTIONS: &str = "Capabilities hub: this project exposes no MCP tools (toolExposure: none); tools run from a terminal with `capa sh <group> <tool>`.";

/// `toolExposure: none`: nothing to list, nothing to call over MCP.
#[derive(Debug, Clone, Copy)]
pub struct NoneSurface;

impl Surface for NoneSurface {
    fn list_tools(&self) -> BoxFuture<'_, Result<Vec<Tool>, ErrorData>> {
        Box::pin(async { Ok(Vec::new()) })
    }

    fn call_tool(
        &self,
        address: String,
        _arguments: Option<JsonObject>,
        _client: Option<String>,
        _progress: Option<ProgressSink>,
    ) -> BoxFuture<'_, Result<CallToolResult, ErrorData>> {
        Box::pin(async move {
            Ok(typed_error_result(
                "unknown_tool",
                &format!(
                    "`{address}`: this project exposes no MCP tools (toolExposure: none); run tools with `capa sh <group> <tool>` in a terminal"
                ),
                false,
            ))
        })
    }

    fn tool_changes(&self) -> Box<dyn ToolChanges> {
        Box::new(Never)
    }

    fn instructions(&self) -> String {
        NONE_INSTRUCTIONS.to_owned()
    }
}
