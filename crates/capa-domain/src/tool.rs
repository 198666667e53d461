//! A tool's definition as the hub holds it: the MCP `Tool` object's members the hub reads, typed,
//! and every other member kept as sent so that relaying a definition loses nothing.
//!
//! The wire type lives in rmcp; this one is the domain's own so that the catalog, policy and
//! search build without an MCP stack. `capa-core` converts between the two at the edge.

use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// A JSON object (a schema, `_meta`).
pub type JsonObject = Map<String, Value>;

/// One tool as a source advertises it (`tools/list`), or as the catalog renamed it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolDefinition {
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    pub input_schema: Arc<JsonObject>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_schema: Option<Arc<JsonObject>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<ToolHints>,
    /// Members the hub does not read (`icons`, `_meta`, `execution`, …), relayed as sent.
    #[serde(flatten)]
    pub other: JsonObject,
}

impl ToolDefinition {
    /// A definition with only a name and an input schema.
    pub fn new(name: impl Into<String>, input_schema: JsonObject) -> Self {
        Self {
            name: name.into(),
            title: None,
            description: None,
            input_schema: Arc::new(input_schema),
            output_schema: None,
            annotations: None,
            other: JsonObject::new(),
        }
    }

    /// The source's read-only hint (a hint, never trusted for a decision on its own).
    pub fn read_only_hint(&self) -> Option<bool> {
        self.annotations.as_ref()?.read_only_hint
    }
}

/// A tool's annotations (MCP `ToolAnnotations`): hints from the source, not promises.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolHints {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read_only_hint: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub destructive_hint: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub idempotent_hint: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub open_world_hint: Option<bool>,
    /// Hints a newer protocol adds, relayed as sent.
    #[serde(flatten)]
    pub other: JsonObject,
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn a_definition_round_trips_with_the_members_it_does_not_read() {
        let wire = json!({
            "name": "notes.add",
            "title": "Add a note",
            "description": "Adds \"one\" note \\ now",
            "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}},
            "outputSchema": {"type": "object"},
            "annotations": {"readOnlyHint": false, "destructiveHint": true, "futureHint": 3},
            "icons": [{"src": "https://example.com/i.png"}],
            "_meta": {"vendor": {"x": 1}},
        });
        let tool: ToolDefinition = serde_json::from_value(wire.clone()).expect("tool");
        assert_eq!(tool.read_only_hint(), Some(false));
        assert_eq!(
            tool.annotations.as_ref().and_then(|a| a.destructive_hint),
            Some(true)
        );
        assert_eq!(serde_json::to_value(&tool).expect("json"), wire);
    }

    #[test]
    fn a_bare_definition_serialises_without_empty_members() {
        let tool = ToolDefinition::new("a.b", JsonObject::new());
        assert_eq!(
            serde_json::to_value(&tool).expect("json"),
            json!({"name": "a.b", "inputSchema": {}})
        );
    }
}
