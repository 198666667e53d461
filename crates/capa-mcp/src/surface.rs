//! What an MCP front serves: a list of tools and a way to call them. The hub in this process is
//! one implementation ([`crate::local::LocalSurface`], and the mode surfaces that
//! [`crate::surface_for::surface_for`] picks); a running hub reached over HTTP is the other
//! ([`crate::bridge::RemoteSurface`]), so `capa mcp` serves the same front either way.
//!
//! A leaf: the trait and the plain data its methods take, nothing else of this crate but the
//! [`Relay`] it hands out, so that every surface can implement it without reaching into another.

use capa_core::{CallToolResult, JsonObject, ProgressSink, SkillFile, Tool};
use rmcp::model::{CallToolResponse, ErrorData};

use crate::relay::{NoRelay, Relay};

pub use crate::asking::Asking;
pub use crate::boxed::{BoxFuture, ToolChanges};

/// Tools to serve.
pub trait Surface: Send + Sync + 'static {
    /// Every tool, as MCP definitions named by address.
    fn list_tools(&self) -> BoxFuture<'_, Result<Vec<Tool>, ErrorData>>;
    /// Calls one tool by its address; the upstream's progress reports go to `progress`.
    fn call_tool(
        &self,
        address: String,
        arguments: Option<JsonObject>,
        client: Option<String>,
        progress: Option<ProgressSink>,
    ) -> BoxFuture<'_, Result<CallToolResult, ErrorData>>;
    /// Calls one tool where the surface may ask the person behind the client first (code mode's
    /// approvals): `asking` says what the client can do. By default, a plain call.
    fn call_tool_asking(
        &self,
        address: String,
        arguments: Option<JsonObject>,
        client: Option<String>,
        progress: Option<ProgressSink>,
        _asking: Asking,
    ) -> BoxFuture<'_, Result<CallToolResponse, ErrorData>> {
        Box::pin(async move {
            self.call_tool(address, arguments, client, progress)
                .await
                .map(CallToolResponse::Complete)
        })
    }
    /// A stream of "the tool list changed" signals, owned by the one listener that waits on it.
    fn tool_changes(&self) -> Box<dyn ToolChanges>;
    /// Server instructions for clients: short, they are loaded into the model's context.
    fn instructions(&self) -> String {
        EXPOSE_ALL_INSTRUCTIONS.to_owned()
    }
    /// The skills served through the MCP Skills extension: each active skill's SKILL.md. None
    /// by default (a surface with no hub behind it).
    fn skills(&self) -> BoxFuture<'_, Result<Vec<SkillFile>, ErrorData>> {
        Box::pin(async { Ok(Vec::new()) })
    }
    /// The sources' prompts and resources. None by default.
    fn relay(&self) -> &dyn Relay {
        &NoRelay
    }
    /// The tool listed as `name`, as `list_tools` lists it, if this surface knows it at once:
    /// the HTTP layer checks a call's `Mcp-Param-*` headers (SEP-2243) against its schema's
    /// `x-mcp-header` properties. None by default (no header is checked then).
    fn listed_tool(&self, _name: &str) -> Option<Tool> {
        None
    }
    /// The tasks this surface gives its clients (SEP-2663, `crate::tasks`), if it gives any:
    /// the front then declares the Tasks extension and answers `tasks/*` from them.
    fn tasks(&self) -> Option<&crate::task_store::TaskStore> {
        None
    }
}

/// Server instructions when every tool is its own MCP tool.
pub const EXPOSE_ALL_INSTRUCTIONS: &str =
    "Capabilities hub: tools of the user's sources, named `namespace.tool`.";
