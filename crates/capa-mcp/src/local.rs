//! The `expose-all` surface: the hub running in this process, every tool the policy does not
//! deny served as its own MCP tool named `namespace.tool`.

use std::sync::Arc;

use capa_core::{CallContext, CallToolResult, Hub, JsonObject, Profile, ProgressSink, Tool};
use rmcp::model::{CallToolResponse, ErrorData};

use crate::surface::{Asking, BoxFuture, Surface, ToolChanges};
use crate::tool_error::{error_result, typed_error_result};

/// The hub running in this process.
#[derive(Debug, Clone)]
pub struct LocalSurface {
    hub: Arc<Hub>,
    /// The profile its clients come through (`None`: the hub's own).
    profile: Option<Profile>,
    /// The sources' prompts and resources, through the same profile.
    relay: crate::relay::HubRelay,
}

impl LocalSurface {
    pub fn new(hub: Arc<Hub>, profile: Option<Profile>) -> Self {
        let relay = crate::relay::HubRelay::new(hub.clone(), profile.clone());
        Self {
            hub,
            profile,
            relay,
        }
    }
}

/// `tool` as a client may list it: MCP's `outputSchema` describes an object, and clients
/// (the TypeScript SDK 1.x among them) refuse a whole tool list holding one that is not. A
/// schema that is a reference to an object in its own `$defs` (as OpenAPI sources' results
/// are, so that `describe` names the type once) is given with that object at its root; any
/// other (an operation answering an array) is left out, and the results are plain content.
fn listable(mut tool: Tool) -> Tool {
    let Some(schema) = tool.output_schema.take() else {
        return tool;
    };
    let is_object = |s: &serde_json::Map<String, serde_json::Value>| {
        s.get("type").and_then(serde_json::Value::as_str) == Some("object")
    };
    if is_object(&schema) {
        tool.output_schema = Some(schema);
        return tool;
    }
    let target = schema
        .get("$ref")
        .and_then(serde_json::Value::as_str)
        .and_then(|r| r.strip_prefix("#/$defs/"))
        .and_then(|name| schema.get("$defs")?.get(name)?.as_object());
    if let Some(target) = target.filter(|t| is_object(t)) {
        let mut root = target.clone();
        if let Some(defs) = schema.get("$defs") {
            root.insert("$defs".to_owned(), defs.clone());
        }
        tool.output_schema = Some(std::sync::Arc::new(root));
    }
    tool
}

impl Surface for LocalSurface {
    fn relay(&self) -> &dyn crate::relay::Relay {
        &self.relay
    }

    fn skills(&self) -> BoxFuture<'_, Result<Vec<capa_core::SkillFile>, ErrorData>> {
        Box::pin(async move { Ok(self.hub.skill_files_in(self.profile.as_ref())) })
    }

    fn list_tools(&self) -> BoxFuture<'_, Result<Vec<Tool>, ErrorData>> {
        Box::pin(async move {
            self.hub.startup_done().await;
            // Tools the policy denies are not offered at all.
            let policy = self.hub.policy_in(self.profile.as_ref());
            let mut tools: Vec<Tool> = self
                .hub
                .catalog()
                .tools()
                .iter()
                .filter(|t| policy.verdict(t, None).decision != capa_core::Decision::Deny)
                .map(|t| listable(capa_core::tool_of(&t.definition)))
                .collect();
            if crate::read_result::enabled(self.profile.as_ref()) {
                tools.push(crate::read_result::tool());
            }
            Ok(tools)
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
            let keeps = crate::read_result::enabled(self.profile.as_ref());
            let budget = self
                .hub
                .run_limits_in(self.profile.as_ref())
                .inline_result_bytes;
            if keeps && address == crate::read_result::READ_RESULT {
                let read = crate::read_result::call(&self.hub, client, arguments, budget).await;
                return Ok(CallToolResponse::Complete(read));
            }
            let authorized = crate::approvals::authorize_direct_call(
                &self.hub,
                self.profile.as_ref(),
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
            let caller = client.clone();
            let context = CallContext { client, progress };
            // Every failure, an unknown tool included, is a tool result with `isError`: the model
            // reads it (with the closest tool names) and can correct itself, where a JSON-RPC
            // error is often hidden from it by the client.
            let result = match self.hub.call(permit, arguments, &context).await {
                Ok(result) => result,
                Err(e) => error_result(&e),
            };
            // At most `inlineResultBytes` reach the client, as in every mode (crate::inline);
            // a direct profile keeps the whole of a larger one for `read_result`.
            let fitted =
                crate::read_result::fit(&self.hub, keeps, caller.as_deref(), result, budget).await;
            Ok(CallToolResponse::Complete(fitted))
        })
    }

    fn tool_changes(&self) -> Box<dyn ToolChanges> {
        let mut changes = self.hub.watch_catalog();
        changes.mark_unchanged();
        Box::new(changes)
    }
}
