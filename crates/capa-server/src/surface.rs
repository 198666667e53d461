//! What an MCP front serves: a list of tools and a way to call them. The hub in this process is
//! one implementation ([`LocalSurface`]); a running hub reached over HTTP is the other
//! ([`crate::bridge::RemoteSurface`]), so `capa mcp` serves the same front either way.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use capa_config::ExposureMode;
use capa_core::{CallContext, CallError, CallToolResult, Hub, JsonObject, ProgressSink, Tool};
use rmcp::model::{CallToolResponse, ContentBlock, ErrorData, InputResponses};
use rmcp::service::{Peer, RoleServer};

pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

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
}

/// Server instructions when every tool is its own MCP tool.
pub const EXPOSE_ALL_INSTRUCTIONS: &str =
    "Capabilities hub: tools of the user's sources, named `namespace.tool`.";

/// The surface the hub's exposure mode asks for.
pub fn surface_for(hub: Arc<Hub>) -> Arc<dyn Surface> {
    match hub.config().exposure.mode {
        ExposureMode::Code => Arc::new(crate::code::CodeSurface::new(hub)),
        ExposureMode::Search => Arc::new(crate::modes::MetaSurface::new(
            hub,
            crate::modes::Meta::Search,
        )),
        ExposureMode::OnDemand => Arc::new(crate::modes::MetaSurface::new(
            hub,
            crate::modes::Meta::OnDemand,
        )),
        ExposureMode::None => Arc::new(crate::modes::NoneSurface),
        ExposureMode::ExposeAll => Arc::new(LocalSurface::new(hub)),
    }
}

/// Signals that a tool list changed. Each listener owns one: a shared watch receiver that is
/// cloned per wait would never mark a change as seen, and would fire forever.
pub trait ToolChanges: Send {
    /// Resolves at the next change; `false` when no further change can come.
    fn next(&mut self) -> BoxFuture<'_, bool>;
}

impl<T: Send + Sync> ToolChanges for tokio::sync::watch::Receiver<T> {
    fn next(&mut self) -> BoxFuture<'_, bool> {
        Box::pin(async move { self.changed().await.is_ok() })
    }
}

/// The hub running in this process.
#[derive(Debug, Clone)]
pub struct LocalSurface {
    hub: Arc<Hub>,
}

impl LocalSurface {
    pub fn new(hub: Arc<Hub>) -> Self {
        Self { hub }
    }
}

impl Surface for LocalSurface {
    fn list_tools(&self) -> BoxFuture<'_, Result<Vec<Tool>, ErrorData>> {
        Box::pin(async move {
            self.hub.startup_done().await;
            // Tools the policy denies are not offered at all.
            let policy = self.hub.policy();
            Ok(self
                .hub
                .catalog()
                .tools()
                .iter()
                .filter(|t| policy.verdict(t, None).decision != capa_core::Decision::Deny)
                .map(|t| t.definition.clone())
                .collect())
        })
    }

    fn call_tool(
        &self,
        address: String,
        arguments: Option<JsonObject>,
        client: Option<String>,
        progress: Option<ProgressSink>,
    ) -> BoxFuture<'_, Result<CallToolResult, ErrorData>> {
        Box::pin(async move {
            let asked =
                self.call_tool_asking(address, arguments, client, progress, Asking::default());
            match asked.await? {
                CallToolResponse::Complete(result) => Ok(result),
                // Only code mode's `execute` answers `input_required`.
                _ => Ok(typed_error_result(
                    "internal",
                    "an approval round reached a client that cannot answer it",
                    false,
                )),
            }
        })
    }

    fn call_tool_asking(
        &self,
        address: String,
        arguments: Option<JsonObject>,
        client: Option<String>,
        progress: Option<ProgressSink>,
        asking: Asking,
    ) -> BoxFuture<'_, Result<CallToolResponse, ErrorData>> {
        Box::pin(async move {
            let authorized = crate::approvals::authorize_direct_call(
                &self.hub,
                &address,
                arguments.as_ref(),
                client.as_deref(),
                &asking,
            )
            .await;
            let permit = match authorized {
                Ok(permit) => permit,
                Err(refused) => return Ok(CallToolResponse::Complete(refused)),
            };
            let context = CallContext { client, progress };
            // Every failure, an unknown tool included, is a tool result with `isError`: the model
            // reads it (with the closest tool names) and can correct itself, where a JSON-RPC
            // error is often hidden from it by the client.
            let result = match self.hub.call(permit, arguments, &context).await {
                Ok(result) => result,
                Err(e) => error_result(&e),
            };
            // At most `inlineResultBytes` reach the client, as in every mode (crate::inline).
            let budget = self.hub.run_limits().inline_result_bytes;
            Ok(CallToolResponse::Complete(crate::inline::fit(
                result, budget,
            )))
        })
    }

    fn tool_changes(&self) -> Box<dyn ToolChanges> {
        let mut changes = self.hub.watch_catalog();
        changes.mark_unchanged();
        Box::new(changes)
    }
}

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
