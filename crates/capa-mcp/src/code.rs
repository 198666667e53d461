//! The code-mode surface: three tools instead of every tool of every source. The model finds
//! tools with `search`, reads their exact types with `describe` and runs code that calls them
//! with `execute` (mcp-surface.md). The descriptions below are the spec's wording: they are the whole fixed
//! cost of the surface, so every word is paid for in each client's context.

use std::sync::Arc;

use capa_core::{
    CallToolResult, ExecuteRequest, Hub, JsonObject, LookupError, Profile, ProgressSink,
    SearchRequest, Tool,
};
use rmcp::model::{CallToolResponse, ContentBlock, ErrorData, ToolAnnotations};
use serde_json::{Value, json};

use crate::approvals::{Answer, Approvals};
use crate::surface::{Asking, BoxFuture, Surface, ToolChanges};

/// Server instructions in code mode.
pub const CODE_INSTRUCTIONS: &str = "Capabilities hub. The user's tools are reached in code mode: `search` finds them by task, `describe` gives their exact TypeScript types, `execute` runs code that calls them.";

const SEARCH_DESCRIPTION: &str = "Find the user's tools and skills by what you want to do, for example \"create a GitHub issue\" or \"recent Slack messages\". Returns tool addresses with one-line TypeScript signatures, best match first. Read full types with `describe` before writing code. Pass `namespace` to search or list one source.";

const EXECUTE_DESCRIPTION: &str = "Run JavaScript in a sandbox where each of the user's sources is a global object of async functions: `await github.createIssue({ owner, repo, title })`. TypeScript annotations are allowed and stripped. Write the body of an async function and `return` what you need; run independent calls in parallel with `Promise.all`. There is no network or filesystem besides these functions. If a call needs the user's approval or a connection, the result says so and a page opens on the user's screen; tell the user, then continue with `{ \"resume\": \"<runId>\" }` after they decide. Never ask the user for passwords or tokens in chat.";

const DESCRIBE_DESCRIPTION: &str = "Get exact TypeScript declarations for tools: an address (`github.createIssue`), a whole namespace (`github`, budget permitting), or a type named in an earlier declaration (`github.Issue`). Write `execute` code against these types.";

/// `search`, `describe` and `execute` over the hub in this process.
#[derive(Debug, Clone)]
pub struct CodeSurface {
    hub: Arc<Hub>,
    approvals: Arc<Approvals>,
    /// The profile its clients come through (`None`: the hub's own).
    profile: Option<Profile>,
    /// The sources' prompts and resources, through the same profile.
    relay: crate::relay::HubRelay,
}

impl CodeSurface {
    pub fn new(hub: Arc<Hub>, profile: Option<Profile>) -> Self {
        let approvals = Arc::new(Approvals::new(hub.clone(), profile.clone()));
        let relay = crate::relay::HubRelay::new(hub.clone(), profile.clone());
        Self {
            hub,
            approvals,
            profile,
            relay,
        }
    }
}

/// The tools of the code-mode surface, as MCP definitions.
pub fn code_tools() -> Vec<Tool> {
    let mut execute = Tool::new(
        "execute",
        EXECUTE_DESCRIPTION,
        Arc::new(object(json!({
            "type": "object",
            "properties": {
                "code": {"type": "string", "maxLength": 65536},
                "resume": {"type": "string"}
            }
        }))),
    )
    .annotate(ToolAnnotations::new().read_only(false).open_world(true));
    execute.output_schema = Some(Arc::new(object(envelope_schema())));
    vec![
        lookup_tool(
            "search",
            SEARCH_DESCRIPTION,
            json!({
                "type": "object",
                "properties": {
                    "query": {"type": "string", "maxLength": 200, "description": "What you want to do. Empty lists a namespace."},
                    "namespace": {"type": "string"},
                    "limit": {"type": "integer", "minimum": 1, "maximum": 25, "default": 8}
                },
                "required": ["query"]
            }),
        ),
        lookup_tool(
            "describe",
            DESCRIBE_DESCRIPTION,
            json!({
                "type": "object",
                "properties": {
                    "targets": {"type": "array", "items": {"type": "string"}, "minItems": 1, "maxItems": 10}
                },
                "required": ["targets"]
            }),
        ),
        execute,
    ]
}

fn object(value: Value) -> JsonObject {
    match value {
        Value::Object(map) => map,
        _ => JsonObject::new(),
    }
}

/// The JSON Schema of `ExecuteEnvelope` (mcp-surface.md), kept terse: it is part of the fixed
/// surface every client loads.
fn envelope_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "runId": {"type": "string"},
            "status": {"enum": ["completed", "failed", "awaiting_approval", "awaiting_connection", "cancelled"]},
            "result": {},
            "error": {"type": "object", "properties": {"code": {"type": "string"}, "message": {"type": "string"}, "hint": {"type": "string"}}, "required": ["code", "message"]},
            "logs": {"type": "array", "items": {"type": "string"}},
            "calls": {"type": "array", "items": {"type": "object", "properties": {"address": {"type": "string"}, "ok": {"type": "boolean"}, "ms": {"type": "number"}}, "required": ["address", "ok", "ms"]}},
            "pending": {"type": "array", "items": {"type": "object"}},
            "truncated": {"type": "object", "properties": {"result": {"type": "boolean"}, "logs": {"type": "boolean"}}},
            "handles": {"type": "array", "items": {"type": "object", "properties": {"handle": {"type": "string"}, "of": {"enum": ["result", "logs"]}, "bytes": {"type": "number"}, "type": {"type": "string"}, "preview": {"type": "string"}}, "required": ["handle", "of", "bytes", "type", "preview"]}},
            "notices": {"type": "array", "items": {"type": "string"}}
        },
        "required": ["runId", "status", "calls"]
    })
}

fn lookup_tool(name: &'static str, description: &'static str, schema: Value) -> Tool {
    let schema = object(schema);
    let annotations = ToolAnnotations::new().read_only(true).idempotent(true);
    Tool::new(name, description, Arc::new(schema)).annotate(annotations)
}

impl Surface for CodeSurface {
    fn relay(&self) -> &dyn crate::relay::Relay {
        &self.relay
    }

    fn list_tools(&self) -> BoxFuture<'_, Result<Vec<Tool>, ErrorData>> {
        Box::pin(async { Ok(code_tools()) })
    }

    fn call_tool(
        &self,
        name: String,
        arguments: Option<JsonObject>,
        client: Option<String>,
        _progress: Option<ProgressSink>,
    ) -> BoxFuture<'_, Result<CallToolResult, ErrorData>> {
        Box::pin(async move {
            let arguments = arguments.unwrap_or_default();
            let answer = match name.as_str() {
                "search" => match search_request(&arguments) {
                    Ok(request) => self.hub.search_in(&request, self.profile.as_ref()).await,
                    Err(e) => Err(e),
                },
                "describe" => match targets(&arguments) {
                    Ok(targets) => self.hub.describe_in(&targets, self.profile.as_ref()).await,
                    Err(e) => Err(e),
                },
                "execute" => {
                    return Ok(self.execute(&arguments, client, Asking::default()).await);
                }
                other => Err(LookupError::InvalidArguments(format!(
                    "unknown tool `{other}`: this hub serves `search`, `describe` and `execute`; find tools with search and call them from code in execute"
                ))),
            };
            Ok(match answer {
                Ok(text) => CallToolResult::success(vec![ContentBlock::text(text)]),
                Err(e) => lookup_error_result(&e),
            })
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
            if name != "execute" {
                return self
                    .call_tool(name, arguments, client, progress)
                    .await
                    .map(CallToolResponse::Complete);
            }
            let arguments = arguments.unwrap_or_default();
            Ok(self.execute_asking(&arguments, client, asking).await)
        })
    }

    fn tool_changes(&self) -> Box<dyn ToolChanges> {
        // The fixed tools never change; search answers from the live catalog.
        Box::new(NoChanges)
    }

    fn instructions(&self) -> String {
        CODE_INSTRUCTIONS.to_owned()
    }

    fn skills(&self) -> BoxFuture<'_, Result<Vec<capa_core::SkillFile>, ErrorData>> {
        Box::pin(async move { Ok(self.hub.skill_files_in(self.profile.as_ref())) })
    }
}

impl CodeSurface {
    async fn execute(
        &self,
        arguments: &JsonObject,
        client: Option<String>,
        asking: Asking,
    ) -> CallToolResult {
        match self.execute_asking(arguments, client, asking).await {
            CallToolResponse::Complete(result) => result,
            // Only clients that can answer `input_required` are asked with it.
            _ => crate::tool_error::typed_error_result(
                "internal",
                "an approval round reached a client that cannot answer it",
                false,
            ),
        }
    }

    async fn execute_asking(
        &self,
        arguments: &JsonObject,
        client: Option<String>,
        asking: Asking,
    ) -> CallToolResponse {
        let text = |key: &str| match arguments.get(key) {
            Some(Value::String(s)) => Ok(Some(s.clone())),
            None | Some(Value::Null) => Ok(None),
            Some(_) => Err(invalid(&format!("{key} must be a string"))),
        };
        let request = match (text("code"), text("resume")) {
            (Ok(code), Ok(resume)) => ExecuteRequest {
                code,
                resume,
                client,
            },
            (Err(e), _) | (_, Err(e)) => return lookup_error_result(&e).into(),
        };
        match self.approvals.execute(arguments, request, asking).await {
            Answer::Envelope(envelope) => {
                let summary = envelope.summary();
                let structured = serde_json::to_value(&envelope).unwrap_or(Value::Null);
                let mut result = CallToolResult::structured(structured);
                result.content = vec![ContentBlock::text(summary)];
                result.into()
            }
            Answer::InputRequired(result) => CallToolResponse::InputRequired(result),
            Answer::Refused { code, message } => {
                crate::tool_error::typed_error_result(code, &message, false).into()
            }
        }
    }
}

struct NoChanges;

impl ToolChanges for NoChanges {
    fn next(&mut self) -> BoxFuture<'_, bool> {
        Box::pin(std::future::pending())
    }
}

#[expect(
    clippy::cast_possible_truncation,
    reason = "a whole-number float limit (`2.0`) becomes an i64; `as` saturates one out of range, which the search's own limit check then refuses"
)]
fn search_request(arguments: &JsonObject) -> Result<SearchRequest, LookupError> {
    let query = match arguments.get("query") {
        None | Some(Value::Null) => String::new(),
        Some(Value::String(q)) => q.clone(),
        Some(_) => return Err(invalid("query must be a string")),
    };
    let namespace = match arguments.get("namespace") {
        None | Some(Value::Null) => None,
        Some(Value::String(ns)) => Some(ns.clone()),
        Some(_) => {
            return Err(invalid(
                "namespace must be a string, a source name like `github`",
            ));
        }
    };
    let limit = match arguments.get("limit") {
        None | Some(Value::Null) => None,
        Some(v) => Some(
            v.as_i64()
                .or_else(|| v.as_f64().filter(|f| f.fract() == 0.0).map(|f| f as i64))
                .ok_or_else(|| invalid("limit must be an integer from 1 to 25"))?,
        ),
    };
    Ok(SearchRequest {
        query,
        namespace,
        limit,
    })
}

fn targets(arguments: &JsonObject) -> Result<Vec<String>, LookupError> {
    let wrong = || {
        invalid(
            "targets must be a list of 1 to 10 strings, e.g. [\"github.create_issue\", \"github\"]",
        )
    };
    match arguments.get("targets") {
        // A lone string is forgiven: it can only mean one target.
        Some(Value::String(one)) => Ok(vec![one.clone()]),
        Some(Value::Array(items)) => items
            .iter()
            .map(|item| item.as_str().map(str::to_owned).ok_or_else(wrong))
            .collect(),
        _ => Err(wrong()),
    }
}

fn invalid(message: &str) -> LookupError {
    LookupError::InvalidArguments(message.to_owned())
}

/// A lookup that could not be answered, as an `isError` result the model reads, with the
/// typed error in `_meta` like failed calls.
fn lookup_error_result(error: &LookupError) -> CallToolResult {
    crate::tool_error::typed_error_result(error.code(), &error.to_string(), error.retryable())
}
