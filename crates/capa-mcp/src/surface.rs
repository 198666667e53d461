//! What an MCP front serves: a list of tools and a way to call them. The hub in this process is
//! one implementation ([`crate::local::LocalSurface`], and the mode surfaces that
//! [`crate::surface_for::surface_for`] picks); a running hub reached over HTTP is the other
//! ([`crate::bridge::RemoteSurface`]), so `capa mcp` serves the same front either way.
//!
//! A leaf: the trait and the plain data its methods take, nothing else of this crate but the
//! [`Relay`] it hands out, so that every surface can implement it without reaching into another.

use capa_core::{CallToolResult, JsonObject, ProgressSink, SkillFile, Tool};
use rmcp::model::{CallToolResponse, ErrorData, InputResponses};
use rmcp::service::{Peer, RoleServer};

use crate::relay::{NoRelay, Relay};

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
}

/// What the client of one call can do to let a person decide, and what it sent back from an
/// earlier round.
#[derive(Debug, Clone, Default)]
pub struct Asking {
    /// It speaks 2026-07-28 and declared form elicitation: `input_required` rounds.
    pub input_required: bool,
    /// An initialize-era session that declared form elicitation: the server can send
    /// `elicitation/create` to it mid-call.
    pub elicit_peer: Option<Peer<RoleServer>>,
    /// It declared URL elicitation: a sign-in the run waits for is offered as a link to the
    /// hub's sign-in page, in `input_required` (2026-07-28) or as `elicitation/create` on
    /// `url_peer` (earlier versions).
    pub url_input_required: bool,
    pub url_peer: Option<Peer<RoleServer>>,
    /// Answers to an earlier `input_required`, and the state it carried.
    pub input_responses: Option<InputResponses>,
    pub request_state: Option<String>,
    /// Whose session this call belongs to, for state kept across calls (search mode's
    /// callable matches, on-demand's active skills): the HTTP session, else (2026-07-28
    /// stateless requests) the client's name and version, else (stdio) the one connection.
    pub session: String,
    /// Fires when the client cancels the request (`notifications/cancelled`) or goes away: a
    /// run it started ends `cancelled`.
    pub cancel: tokio_util::sync::CancellationToken,
    /// The client as it introduced itself, as sent (untrusted; `capa_domain::client_label`
    /// makes it safe to show): `capa mcp`'s bridge passes it on to the running hub.
    pub client_info: Option<rmcp::model::Implementation>,
}

/// Server instructions when every tool is its own MCP tool.
pub const EXPOSE_ALL_INSTRUCTIONS: &str =
    "Capabilities hub: tools of the user's sources, named `namespace.tool`.";
