//! The edge between the MCP wire type of a tool (rmcp's `Tool`) and the domain's
//! [`ToolDefinition`]: tools enter the core as definitions and leave it as `Tool`s again, with
//! every member kept.

use capa_domain::ToolDefinition;
use capa_upstream::Tool;

/// The domain's view of a tool a source advertised. A definition that does not convert (it
/// cannot: both sides read the same JSON) keeps its name and schema.
pub fn definition_of(tool: &Tool) -> ToolDefinition {
    serde_json::to_value(tool)
        .and_then(serde_json::from_value)
        .unwrap_or_else(|_| {
            ToolDefinition::new(tool.name.to_string(), (*tool.input_schema).clone())
        })
}

/// The wire form of a definition, to list it to a client.
pub fn tool_of(definition: &ToolDefinition) -> Tool {
    serde_json::to_value(definition)
        .and_then(serde_json::from_value)
        .unwrap_or_else(|_| {
            Tool::new(
                definition.name.clone(),
                definition.description.clone().unwrap_or_default(),
                definition.input_schema.clone(),
            )
        })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn a_tool_survives_the_trip_into_the_domain_and_back() {
        let wire = json!({
            "name": "demo.add",
            "title": "Add",
            "description": "Adds \"a\" and \\b",
            "inputSchema": {"type": "object", "properties": {"a": {"type": "number"}}},
            "outputSchema": {"type": "object"},
            "annotations": {"readOnlyHint": true, "openWorldHint": false},
            "icons": [{"src": "https://example.com/a.png", "mimeType": "image/png"}],
            "_meta": {"x": {"y": [1, 2]}},
        });
        let tool: Tool = serde_json::from_value(wire.clone()).expect("tool");
        let definition = definition_of(&tool);
        assert_eq!(definition.read_only_hint(), Some(true));
        assert_eq!(serde_json::to_value(&definition).expect("json"), wire);
        assert_eq!(tool_of(&definition), tool);
    }
}
