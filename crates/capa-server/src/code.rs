//! The code-mode surface: a fixed handful of tools instead of every tool of every source. The
//! model finds tools with `search` and reads their exact types with `describe`
//! (mcp-surface.md). The descriptions below are the spec's wording: they are the whole fixed
//! cost of the surface, so every word is paid for in each client's context.

use std::sync::Arc;

use capa_core::{CallToolResult, Hub, JsonObject, LookupError, ProgressSink, SearchRequest, Tool};
use rmcp::model::{ContentBlock, ErrorData, ToolAnnotations};
use serde_json::{Value, json};

use crate::surface::{BoxFuture, Surface, ToolChanges};

/// Server instructions in code mode.
pub const CODE_INSTRUCTIONS: &str = "Capabilities hub. The user's tools are reached in code mode: `search` finds them by task, `describe` gives their exact TypeScript types.";

const SEARCH_DESCRIPTION: &str = "Find the user's tools and skills by what you want to do, for example \"create a GitHub issue\" or \"recent Slack messages\". Returns tool addresses with one-line TypeScript signatures, best match first. Read full types with `describe` before writing code. Pass `namespace` to search or list one source.";

const DESCRIBE_DESCRIPTION: &str = "Get exact TypeScript declarations for tools: an address (`github.createIssue`), a whole namespace (`github`, budget permitting), or a type named in an earlier declaration (`github.Issue`). Write `execute` code against these types.";

/// `search` and `describe` over the hub in this process.
#[derive(Debug, Clone)]
pub struct CodeSurface {
    hub: Arc<Hub>,
}

impl CodeSurface {
    pub fn new(hub: Arc<Hub>) -> Self {
        Self { hub }
    }
}

/// The tools of the code-mode surface, as MCP definitions.
pub fn code_tools() -> Vec<Tool> {
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
    ]
}

fn lookup_tool(name: &'static str, description: &'static str, schema: Value) -> Tool {
    let schema = match schema {
        Value::Object(map) => map,
        _ => JsonObject::new(),
    };
    let annotations = ToolAnnotations::new().read_only(true).idempotent(true);
    Tool::new(name, description, Arc::new(schema)).annotate(annotations)
}

impl Surface for CodeSurface {
    fn list_tools(&self) -> BoxFuture<'_, Result<Vec<Tool>, ErrorData>> {
        Box::pin(async { Ok(code_tools()) })
    }

    fn call_tool(
        &self,
        name: String,
        arguments: Option<JsonObject>,
        _client: Option<String>,
        _progress: Option<ProgressSink>,
    ) -> BoxFuture<'_, Result<CallToolResult, ErrorData>> {
        Box::pin(async move {
            let arguments = arguments.unwrap_or_default();
            let answer = match name.as_str() {
                "search" => match search_request(&arguments) {
                    Ok(request) => self.hub.search(&request).await,
                    Err(e) => Err(e),
                },
                "describe" => match targets(&arguments) {
                    Ok(targets) => self.hub.describe(&targets).await,
                    Err(e) => Err(e),
                },
                other => Err(LookupError::InvalidArguments(format!(
                    "unknown tool `{other}`: this hub serves `search` and `describe`; find tools with search and call them from code"
                ))),
            };
            Ok(match answer {
                Ok(text) => CallToolResult::success(vec![ContentBlock::text(text)]),
                Err(e) => lookup_error_result(&e),
            })
        })
    }

    fn tool_changes(&self) -> Box<dyn ToolChanges> {
        // The fixed tools never change; search answers from the live catalog.
        Box::new(NoChanges)
    }

    fn instructions(&self) -> String {
        CODE_INSTRUCTIONS.to_owned()
    }
}

struct NoChanges;

impl ToolChanges for NoChanges {
    fn next(&mut self) -> BoxFuture<'_, bool> {
        Box::pin(std::future::pending())
    }
}

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
    crate::surface::typed_error_result(error.code(), &error.to_string(), error.retryable())
}
