//! The MCP tool of one operation: its description, schemas and annotations.

use std::sync::Arc;

use rmcp::model::{Tool, ToolAnnotations};
use serde_json::{Map, Value};

/// The longest description kept from the document (the hub cuts at 16 KiB anyway; a model
/// gains little from more than a few paragraphs).
const MAX_DESCRIPTION_CHARS: usize = 4000;

pub(crate) fn tool(
    name: &str,
    method: &http::Method,
    path: &str,
    op: &oas3::spec::Operation,
    input: Map<String, Value>,
    output: Option<Value>,
) -> Tool {
    let summary = op
        .summary
        .as_deref()
        .map(str::trim)
        .filter(|s| !s.is_empty());
    let details = op
        .description
        .as_deref()
        .map(str::trim)
        .filter(|s| !s.is_empty());
    let mut description = match (summary, details) {
        (Some(s), Some(d)) if !d.starts_with(s) => format!("{s}\n\n{d}"),
        (_, Some(d)) => d.to_owned(),
        (Some(s), None) => s.to_owned(),
        (None, None) => String::new(),
    };
    if description.chars().count() > MAX_DESCRIPTION_CHARS {
        description = description.chars().take(MAX_DESCRIPTION_CHARS).collect();
        description.push('…');
    }
    if op.deprecated == Some(true) {
        description.insert_str(0, "Deprecated. ");
    }
    // The request line helps a model (and search) tell similar operations apart.
    if !description.is_empty() {
        description.push_str("\n\n");
    }
    description.push_str(&format!("HTTP: {method} {path}"));
    let mut tool = Tool::new_with_raw(name.to_owned(), Some(description.into()), Arc::new(input))
        .with_annotations(annotations(method, summary));
    if let Some(title) = summary {
        tool = tool.with_title(title.to_owned());
    }
    if let Some(Value::Object(output)) = output {
        tool = tool.with_raw_output_schema(Arc::new(output));
    }
    tool
}

/// GET, HEAD and OPTIONS read; DELETE destroys; PUT, PATCH and POST write without being taken
/// for destructive (as MCP servers mark their create and update tools), PUT idempotently.
/// Every call reaches an outside service.
fn annotations(method: &http::Method, summary: Option<&str>) -> ToolAnnotations {
    let mut annotations = match summary {
        Some(title) => ToolAnnotations::with_title(title),
        None => ToolAnnotations::new(),
    };
    annotations = annotations.open_world(true);
    match *method {
        http::Method::GET | http::Method::HEAD | http::Method::OPTIONS => {
            annotations.read_only(true)
        }
        http::Method::DELETE => annotations.read_only(false).destructive(true),
        http::Method::PUT => annotations
            .read_only(false)
            .destructive(false)
            .idempotent(true),
        _ => annotations.read_only(false).destructive(false),
    }
}
