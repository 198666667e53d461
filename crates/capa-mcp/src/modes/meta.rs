//! `search` + `call_tool` and `setup_tools` + `call_tool`: two meta-tools instead of every tool.

use std::collections::BTreeSet;
use std::fmt::Write as _;
use std::sync::Arc;

use capa_core::exposure::{
    DEFAULT_MATCHES, MAX_MATCHES, check_arguments, compact_signature, match_tools,
};
use capa_core::{
    CallToolResult, CatalogTool, Decision, Hub, JsonObject, Profile, ProgressSink, Tool,
};
use rmcp::model::{CallToolResponse, ContentBlock, ErrorData, ToolAnnotations};
use serde_json::{Value, json};

use super::sessions::Sessions;
use crate::surface::{Asking, BoxFuture, Surface, ToolChanges};
use crate::tool_error::typed_error_result;

/// Which meta mode.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Meta {
    Search,
    OnDemand,
}

/// Most bytes of an upstream's message about invalid arguments shown beside the schema.
const PROBLEM_BYTES: usize = 4 * 1024;

const SEARCH_INSTRUCTIONS: &str = "Capabilities hub: find the user's tools with `search('<what you need to do>')`, then run one with `call_tool(name, data)`. Found tools stay callable for this session.";
const ON_DEMAND_INSTRUCTIONS: &str = "Capabilities hub: activate tools with `setup_tools(['<skill>'])` or `setup_tools(['@<server>'])`, then run one with `call_tool(name, data)`.";
const SEARCH_DESCRIPTION: &str = "Find the user's tools by what you want to do, e.g. search('open a pull request'). Matches tool ids, names, servers, groups and descriptions; returns compact signatures. Matches become callable with call_tool. An empty query lists tools alphabetically.";
const CALL_DESCRIPTION: &str = "Run one tool found with search (or activated with setup_tools): call_tool({ name: '<id>', data: { …arguments } }). Wrong arguments return the tool's full input schema.";

/// The meta-tool surface of one hub, shared by all its sessions.
#[derive(Debug)]
pub struct MetaSurface {
    hub: Arc<Hub>,
    meta: Meta,
    /// The profile its clients come through (`None`: the hub's own).
    profile: Option<Profile>,
    /// The sources' prompts and resources, through the same profile.
    relay: crate::relay::HubRelay,
    sessions: Sessions,
}

impl MetaSurface {
    pub fn new(hub: Arc<Hub>, meta: Meta, profile: Option<Profile>) -> Self {
        let relay = crate::relay::HubRelay::new(hub.clone(), profile.clone());
        Self {
            hub,
            meta,
            profile,
            relay,
            sessions: Sessions::default(),
        }
    }

    /// Catalog tools a model may see: every one the policy does not deny.
    fn visible(&self) -> Vec<CatalogTool> {
        let policy = self.hub.policy_in(self.profile.as_ref());
        self.hub
            .catalog()
            .tools()
            .iter()
            .filter(|t| !policy.hides(t))
            .cloned()
            .collect()
    }

    /// The active skills this surface's clients are served.
    fn skills(&self) -> Vec<capa_config::SkillConfig> {
        self.hub
            .skills()
            .iter()
            .filter(|s| s.active && self.profile.as_ref().is_none_or(|p| p.serves_skill(s)))
            .cloned()
            .collect()
    }

    fn setup_description(&self) -> String {
        let mut text = "Activate tools for this session, then run them with call_tool. Pass skill names or `@server` for all of a server's tools, e.g. setup_tools({ names: ['@demo'] }). Answers compact signatures.".to_owned();
        let skills: Vec<String> = self
            .skills()
            .iter()
            .map(|s| format!("{} ({})", s.id, s.description))
            .collect();
        if !skills.is_empty() {
            let _ = write!(text, " Skills: {}.", skills.join("; "));
        }
        let servers: BTreeSet<String> = self
            .visible()
            .iter()
            .map(|t| format!("@{}", t.address.namespace))
            .collect();
        if !servers.is_empty() {
            let _ = write!(
                text,
                " Servers: {}.",
                servers.into_iter().collect::<Vec<_>>().join(", ")
            );
        }
        text
    }

    /// `search(query, limit)`: matches become callable in the session.
    fn search(&self, arguments: &JsonObject, session: &str) -> CallToolResult {
        let query = match arguments.get("query") {
            None | Some(Value::Null) => String::new(),
            Some(Value::String(q)) => q.clone(),
            Some(_) => return invalid("query must be a string"),
        };
        let limit = match arguments.get("limit") {
            None | Some(Value::Null) => DEFAULT_MATCHES,
            Some(v) => match v.as_u64().and_then(|n| usize::try_from(n).ok()) {
                Some(n) if (1..=MAX_MATCHES).contains(&n) => n,
                _ => return invalid(&format!("limit must be an integer from 1 to {MAX_MATCHES}")),
            },
        };
        let visible = self.visible();
        let skills = self.skills();
        let groups = |tool: &CatalogTool| {
            skills
                .iter()
                .filter(|s| {
                    self.hub
                        .skill_tools(&s.id)
                        .is_some_and(|tools| tools.contains(&tool.address))
                })
                .map(|s| s.id.clone())
                .collect()
        };
        let found = match_tools(visible.iter(), &query, limit, groups);
        self.sessions
            .allow(session, found.iter().map(|t| t.address.to_string()));
        if found.is_empty() {
            return text_result(format!(
                "No tool matches \"{query}\". Try other words, or search('') to list tools."
            ));
        }
        let header = if query.trim().is_empty() {
            format!("{} tools, alphabetically:", found.len())
        } else {
            format!("{} matching tools, best first:", found.len())
        };
        text_result(self.signatures(&header, &found))
    }

    /// `setup_tools(names)`: skills and `@server`s activated in the session.
    fn setup_tools(&self, arguments: &JsonObject, session: &str) -> CallToolResult {
        if self.meta == Meta::Search {
            return typed_error_result(
                "unknown_tool",
                "setup_tools is not available in search mode: use search('<what you need to do>') to find tools, then call_tool(name, data)",
                false,
            );
        }
        let names: Vec<String> = match arguments.get("names") {
            Some(Value::Array(items)) if !items.is_empty() => {
                match items
                    .iter()
                    .map(|i| i.as_str().map(str::to_owned))
                    .collect()
                {
                    Some(names) => names,
                    None => return invalid("names must be a list of skill names or `@server`"),
                }
            }
            Some(Value::String(one)) => vec![one.clone()],
            _ => return invalid("names must be a non-empty list of skill names or `@server`"),
        };
        let visible = self.visible();
        let mut activated: Vec<&CatalogTool> = Vec::new();
        for name in &names {
            let addresses: Vec<String> = match name.strip_prefix('@') {
                Some(server) => visible
                    .iter()
                    .filter(|t| t.address.namespace == server)
                    .map(|t| t.address.to_string())
                    .collect(),
                None => match self.skills().iter().find(|s| s.id == *name) {
                    Some(skill) => self
                        .hub
                        .skill_tools(&skill.id)
                        .unwrap_or_default()
                        .iter()
                        .map(ToString::to_string)
                        .collect(),
                    None => Vec::new(),
                },
            };
            if addresses.is_empty() {
                return typed_error_result(
                    "unknown_skill",
                    &format!(
                        "no skill or server `{name}` with tools; see setup_tools' description for the skills and servers of this project"
                    ),
                    false,
                );
            }
            for tool in visible
                .iter()
                .filter(|t| addresses.contains(&t.address.to_string()))
            {
                if !activated.iter().any(|a| a.address == tool.address) {
                    activated.push(tool);
                }
            }
        }
        self.sessions
            .allow(session, activated.iter().map(|t| t.address.to_string()));
        let header = format!(
            "Activated {} tools; run them with call_tool(name, data):",
            activated.len()
        );
        text_result(self.signatures(&header, &activated))
    }

    fn signatures(&self, header: &str, tools: &[&CatalogTool]) -> String {
        let mut out = format!("{header}\n");
        let policy = self.hub.policy_in(self.profile.as_ref());
        for tool in tools {
            let verdict = policy.verdict(tool, None);
            let asks = if verdict.decision == Decision::Ask {
                "   [asks]"
            } else {
                ""
            };
            let signature = compact_signature(tool);
            let (first, rest) = signature.split_once('\n').unwrap_or((&signature, ""));
            let _ = writeln!(out, "{first}{asks}");
            if !rest.is_empty() {
                let _ = writeln!(out, "{rest}");
            }
        }
        out
    }

    /// `call_tool(name, data)`: a tool the session found or activated, arguments checked first.
    async fn call(
        &self,
        arguments: &JsonObject,
        client: Option<String>,
        progress: Option<ProgressSink>,
        asking: &Asking,
    ) -> CallToolResult {
        let Some(Value::String(name)) = arguments.get("name") else {
            return invalid("call_tool takes { name: '<tool id>', data: { …arguments } }");
        };
        let how = match self.meta {
            Meta::Search => "find it with search first",
            Meta::OnDemand => "activate it with setup_tools first",
        };
        let catalog = self.hub.catalog();
        // Sources outside the profile are not there: neither found nor suggested.
        let policy = self.hub.policy_in(self.profile.as_ref());
        let served = |address: &str| {
            address
                .split_once('.')
                .is_none_or(|(source, _)| policy.serves_source(source))
        };
        let Some(tool) = catalog.get(name).filter(|_| served(name)) else {
            let mut suggestions = catalog.suggest(name);
            suggestions.retain(|s| served(s));
            let hint = if suggestions.is_empty() {
                String::new()
            } else {
                format!("; did you mean {}?", suggestions.join(", "))
            };
            return typed_error_result(
                "unknown_tool",
                &format!("unknown tool `{name}`{hint} ({how})"),
                false,
            );
        };
        if !self.sessions.allows(&asking.session, name) {
            return typed_error_result(
                "not_activated",
                &format!("`{name}` is not callable in this session yet: {how}"),
                false,
            );
        }
        let data = arguments.get("data").cloned().unwrap_or(Value::Null);
        if let Err(problems) = check_arguments(&tool.definition.input_schema, &data) {
            return with_schema(name, &problems, tool);
        }
        let data = match data {
            Value::Object(map) => Some(map),
            _ => None,
        };
        let authorized = crate::approvals::authorize_direct_call(
            &self.hub,
            self.profile.as_ref(),
            name,
            data.as_ref(),
            client.as_deref(),
            asking,
        )
        .await;
        let permit = match authorized {
            Ok(permit) => permit,
            Err(refused) => return refused,
        };
        let context = capa_core::CallContext {
            client,
            progress,
            asker: None,
        };
        // The tool's answer is bounded like expose-all's (crate::inline); an upstream's own
        // words about wrong arguments are cut so that the schema after them still fits.
        let budget = self
            .hub
            .run_limits_in(self.profile.as_ref())
            .inline_result_bytes;
        match self.hub.call(permit, data, &context).await {
            Ok(result) if rejected_arguments(&result) => {
                let text = result
                    .content
                    .iter()
                    .filter_map(|b| b.as_text().map(|t| t.text.as_str()))
                    .collect::<Vec<_>>()
                    .join(" ");
                with_schema(name, &[crate::inline::cut_str(&text, PROBLEM_BYTES)], tool)
            }
            Ok(result) => crate::inline::fit(result, budget),
            Err(capa_core::CallError::Upstream(capa_upstream_error))
                if capa_upstream_error.is_invalid_params() =>
            {
                let problem = capa_upstream_error.to_string();
                with_schema(
                    name,
                    &[crate::inline::cut_str(&problem, PROBLEM_BYTES)],
                    tool,
                )
            }
            Err(e) => crate::inline::fit(crate::tool_error::error_result(&e), budget),
        }
    }
}

/// Whether an upstream's error result says the arguments were invalid (JSON-RPC's
/// `-32602`, which SDK servers also report as an `isError` text): then the model gets the
/// schema too.
fn rejected_arguments(result: &CallToolResult) -> bool {
    result.is_error == Some(true)
        && result.content.iter().any(|b| {
            b.as_text().is_some_and(|t| {
                let text = t.text.to_lowercase();
                text.contains("-32602") || text.contains("invalid arguments")
            })
        })
}

/// Invalid `call_tool` arguments: what is wrong, and the tool's full input schema to retry with.
fn with_schema(name: &str, problems: &[String], tool: &CatalogTool) -> CallToolResult {
    let schema = Value::Object((*tool.definition.input_schema).clone());
    let message = format!(
        "invalid arguments for {name}: {}. Its input schema:\n{}",
        problems.join("; "),
        serde_json::to_string_pretty(&schema).unwrap_or_default()
    );
    let mut result = typed_error_result("invalid_arguments", &message, false);
    if let Some(meta) = result.meta.as_mut()
        && let Some(Value::Object(error)) = meta.0.get_mut(crate::tool_error::ERROR_META_KEY)
    {
        error.insert("inputSchema".to_owned(), schema);
    }
    result
}

fn invalid(message: &str) -> CallToolResult {
    typed_error_result("invalid_arguments", message, false)
}

fn text_result(text: String) -> CallToolResult {
    CallToolResult::success(vec![ContentBlock::text(text)])
}

fn object(value: Value) -> JsonObject {
    match value {
        Value::Object(object) => object,
        _ => JsonObject::default(),
    }
}

fn call_tool_definition() -> Tool {
    Tool::new(
        "call_tool",
        CALL_DESCRIPTION,
        Arc::new(object(json!({
            "type": "object",
            "properties": {
                "name": {"type": "string", "description": "The tool's id, e.g. github.create_issue"},
                "data": {"type": "object", "description": "The tool's arguments"}
            },
            "required": ["name"]
        }))),
    )
    .annotate(ToolAnnotations::new().read_only(false).open_world(true))
}

impl Surface for MetaSurface {
    fn relay(&self) -> &dyn crate::relay::Relay {
        &self.relay
    }

    fn list_tools(&self) -> BoxFuture<'_, Result<Vec<Tool>, ErrorData>> {
        Box::pin(async move {
            self.hub.startup_done().await;
            let lookup = ToolAnnotations::new().read_only(true).idempotent(true);
            let first = match self.meta {
                Meta::Search => Tool::new(
                    "search",
                    SEARCH_DESCRIPTION,
                    Arc::new(object(json!({
                        "type": "object",
                        "properties": {
                            "query": {"type": "string", "description": "What you want to do; empty lists tools"},
                            "limit": {"type": "integer", "minimum": 1, "maximum": MAX_MATCHES, "default": DEFAULT_MATCHES}
                        },
                        "required": ["query"]
                    }))),
                ),
                Meta::OnDemand => Tool::new(
                    "setup_tools",
                    self.setup_description(),
                    Arc::new(object(json!({
                        "type": "object",
                        "properties": {
                            "names": {"type": "array", "items": {"type": "string"}, "minItems": 1, "description": "Skill names, or @server"}
                        },
                        "required": ["names"]
                    }))),
                ),
            };
            Ok(vec![first.annotate(lookup), call_tool_definition()])
        })
    }

    fn call_tool(
        &self,
        name: String,
        arguments: Option<JsonObject>,
        client: Option<String>,
        progress: Option<ProgressSink>,
    ) -> BoxFuture<'_, Result<CallToolResult, ErrorData>> {
        let asking = Asking {
            session: "api".to_owned(),
            ..Asking::default()
        };
        Box::pin(async move {
            match self
                .call_tool_asking(name, arguments, client, progress, asking)
                .await?
            {
                CallToolResponse::Complete(result) => Ok(result),
                _ => Ok(invalid("this tool has no multi-round answers")),
            }
        })
    }

    fn call_tool_asking(
        &self,
        name: String,
        arguments: Option<JsonObject>,
        client: Option<String>,
        progress: Option<ProgressSink>,
        asking: Asking,
    ) -> BoxFuture<'_, Result<CallToolResponse, ErrorData>> {
        Box::pin(async move {
            self.hub.startup_done().await;
            let arguments = arguments.unwrap_or_default();
            let result = match (name.as_str(), self.meta) {
                ("search", Meta::Search) => self.search(&arguments, &asking.session),
                ("search", Meta::OnDemand) => typed_error_result(
                    "unknown_tool",
                    "search is not available in on-demand mode: activate tools with setup_tools(['<skill>']) or setup_tools(['@<server>']), then call_tool(name, data)",
                    false,
                ),
                ("setup_tools", _) => self.setup_tools(&arguments, &asking.session),
                ("call_tool", _) => self.call(&arguments, client, progress, &asking).await,
                (other, _) => typed_error_result(
                    "unknown_tool",
                    &format!(
                        "unknown tool `{other}`: this hub serves {} and call_tool",
                        match self.meta {
                            Meta::Search => "search",
                            Meta::OnDemand => "setup_tools",
                        }
                    ),
                    false,
                ),
            };
            Ok(CallToolResponse::Complete(result))
        })
    }

    fn tool_changes(&self) -> Box<dyn ToolChanges> {
        match self.meta {
            // search's tools never change; setup_tools' description lists skills and servers.
            Meta::Search => Box::new(super::Never),
            Meta::OnDemand => {
                let mut changes = self.hub.watch_catalog();
                changes.mark_unchanged();
                Box::new(changes)
            }
        }
    }

    fn skills(&self) -> BoxFuture<'_, Result<Vec<capa_core::SkillFile>, ErrorData>> {
        Box::pin(async move { Ok(self.hub.skill_files_in(self.profile.as_ref())) })
    }

    fn instructions(&self) -> String {
        match self.meta {
            Meta::Search => SEARCH_INSTRUCTIONS,
            Meta::OnDemand => ON_DEMAND_INSTRUCTIONS,
        }
        .to_owned()
    }
}
