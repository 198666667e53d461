//! The `expose-all` surface: the hub running in this process, every tool the policy does not
//! deny served as its own MCP tool named `namespace.tool` (or by the server's own name, for a
//! source with `namespace: false` served alone).

use std::sync::Arc;

use capa_core::{
    CallContext, CallError, CallToolResult, Hub, JsonObject, Naming, Profile, ProgressSink, Tool,
    UpstreamError,
};
use rmcp::model::{CallToolResponse, ErrorData};

use crate::folded::{self, Folding, Round};
use crate::surface::{Asking, BoxFuture, Surface, ToolChanges};
use crate::tasks::Called;
use crate::tool_error::{error_result, typed_error_result};

/// The hub running in this process.
#[derive(Debug, Clone)]
pub struct LocalSurface {
    hub: Arc<Hub>,
    /// The profile its clients come through (`None`: the hub's own).
    profile: Option<Profile>,
    /// The sources' prompts and resources, through the same profile.
    relay: crate::relay::HubRelay,
    /// Direct calls of 2026-07-28 clients waiting for their answers to a source's requests.
    folding: Arc<Folding<Called>>,
    /// The tasks given to its clients (`crate::tasks`).
    tasks: crate::task_store::TaskStore,
}

impl LocalSurface {
    pub fn new(hub: Arc<Hub>, profile: Option<Profile>) -> Self {
        let relay = crate::relay::HubRelay::new(hub.clone(), profile.clone());
        let folding = Arc::new(Folding::new(hub.clone()));
        // The store keeps each surface's tasks apart: a task id reaches only its own surface.
        let surface = profile
            .as_ref()
            .map_or_else(|| "hub".to_owned(), |p| format!("profile:{}", p.name()));
        let tasks = crate::task_store::TaskStore::kept_by(crate::kept_tasks::Keeper::new(
            hub.clone(),
            surface,
        ));
        Self {
            hub,
            profile,
            relay,
            folding,
            tasks,
        }
    }
}

/// How a direct call's result reaches the client.
struct Fit {
    /// The profile keeps a larger result whole for `read_result`.
    keeps: bool,
    budget: usize,
    caller: Option<String>,
}

/// Runs a permitted call and fits its result to the client's budget. Every failure, an unknown
/// tool included, is a tool result with `isError`: the model reads it (with the closest tool
/// names) and can correct itself, where a JSON-RPC error is often hidden from it by the client.
/// But one: a source that needs a capability the client did not declare (`-32021`) says so
/// to the client, which alone can change it, as the error it is.
async fn call_and_fit(
    hub: &Arc<Hub>,
    permit: capa_core::Permit,
    arguments: Option<JsonObject>,
    context: &CallContext,
    fit: Fit,
) -> Called {
    let (result, source_error) = match hub.call(permit, arguments, context).await {
        Ok(result) => (result, None),
        Err(CallError::Upstream(UpstreamError::ClientLacks { required, .. })) => {
            return Called {
                answer: Err(ErrorData::missing_required_client_capability(*required)),
                source_error: None,
            };
        }
        Err(e) => (error_result(&e), source_error(&e)),
    };
    // At most `inlineResultBytes` reach the client, as in every mode (crate::inline); a direct
    // profile keeps the whole of a larger one for `read_result`.
    let fitted =
        crate::read_result::fit(hub, fit.keeps, fit.caller.as_deref(), result, fit.budget).await;
    Called {
        answer: Ok(fitted),
        source_error,
    }
}

/// The JSON-RPC error a source failed a call with, as the hub tells it (redacted).
fn source_error(error: &CallError) -> Option<ErrorData> {
    match error {
        CallError::Upstream(UpstreamError::Protocol {
            code: Some(code),
            message,
            ..
        }) => Some(ErrorData::new(
            rmcp::model::ErrorCode(*code),
            message.clone(),
            None,
        )),
        _ => None,
    }
}

/// The answer to a `tools/call` whose call was folded (`crate::folded`): a source's task
/// becomes one of the hub's (`crate::tasks`).
fn tool_response(round: Round<Called>) -> Result<CallToolResponse, ErrorData> {
    match round {
        Round::Done(called) => called.answer.map(CallToolResponse::Complete),
        Round::Asks(round) => Ok(CallToolResponse::InputRequired(round)),
        Round::Lost { code, message } => Ok(CallToolResponse::Complete(typed_error_result(
            code, message, false,
        ))),
        Round::Task(handed) => Ok(CallToolResponse::Task(crate::tasks::start(*handed))),
    }
}

impl LocalSurface {
    /// The tools this surface lists whose catalog entry `keep` keeps, by the names it lists
    /// them under. Tools the policy denies are not offered at all.
    fn listed(&self, keep: impl Fn(&capa_core::CatalogTool, &Naming) -> bool) -> Vec<Tool> {
        let policy = self.hub.policy_in(self.profile.as_ref());
        let naming = self.hub.naming_in(self.profile.as_ref());
        self.hub
            .catalog()
            .tools()
            .iter()
            .filter(|t| keep(t, &naming))
            .filter(|t| !policy.hides(t))
            .map(|t| {
                let mut tool = listable(capa_core::tool_of(&t.definition));
                if matches!(&naming, Naming::Bare(source) if *source == t.address.namespace) {
                    tool.name = t.remote_name.clone().into();
                }
                tool
            })
            .collect()
    }

    /// The address of the tool a client of this surface called `name`: under bare names
    /// (`namespace: false`), the served source's tool of that remote name; otherwise `name`.
    fn address_of(&self, name: String) -> String {
        let Naming::Bare(source) = self.hub.naming_in(self.profile.as_ref()) else {
            return name;
        };
        let catalog = self.hub.catalog();
        catalog
            .tools()
            .iter()
            .find(|t| t.address.namespace == source && t.remote_name == name)
            .map_or(name, |t| t.definition.name.clone())
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
            let mut tools = self.listed(|_, _| true);
            if crate::read_result::enabled(self.profile.as_ref()) {
                tools.push(crate::read_result::tool());
            }
            Ok(tools)
        })
    }

    fn listed_tool(&self, name: &str) -> Option<Tool> {
        let listed_as = |t: &capa_core::CatalogTool, naming: &Naming| match naming {
            Naming::Bare(source) if *source == t.address.namespace => t.remote_name == name,
            _ => t.definition.name == name,
        };
        self.listed(listed_as).into_iter().next()
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
            let address = self.address_of(address);
            let binding = folded::binding("tool", &asking.session, &address, arguments.as_ref());
            if asking.round_trips
                && let Some(state) = asking.request_state.as_deref()
                && crate::folded::owns(state)
            {
                let responses = asking.input_responses.clone();
                let cancel = asking.cancel.clone();
                let round = self
                    .folding
                    .resume(state, binding, responses, cancel)
                    .await?;
                return tool_response(round);
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
            let fit = Fit {
                keeps,
                budget,
                caller: client.clone(),
            };
            if !asking.round_trips {
                let context = CallContext {
                    client,
                    progress,
                    asker: crate::asker::asker_for(&asking),
                };
                let called = call_and_fit(&self.hub, permit, arguments, &context, fit).await;
                return called.answer.map(CallToolResponse::Complete);
            }
            // A 2026-07-28 client: the call runs on in the hub while the client answers what
            // its source asks (crate::folded).
            let hub = self.hub.clone();
            let running = folded::spawn(&self.hub, &asking, |asker| async move {
                let context = CallContext {
                    client,
                    progress,
                    asker: Some(asker),
                };
                call_and_fit(&hub, permit, arguments, &context, fit).await
            });
            let round = self
                .folding
                .wait(running, binding, asking.cancel.clone())
                .await;
            tool_response(round)
        })
    }

    fn tasks(&self) -> Option<&crate::task_store::TaskStore> {
        Some(&self.tasks)
    }

    fn tool_changes(&self) -> Box<dyn ToolChanges> {
        let mut changes = self.hub.watch_catalog();
        changes.mark_unchanged();
        Box::new(changes)
    }
}
