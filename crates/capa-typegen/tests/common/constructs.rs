//! Small hand-written schemas, one JSON Schema construct each, shared by the unit tests (which
//! snapshot their declarations) and the tsc test (which compiles them).

use serde_json::{Value, json};

/// `(tool name, input schema, output schema)` of the `demo` namespace, in catalog order.
#[expect(
    clippy::too_many_lines,
    reason = "a table of schemas, one entry per construct"
)]
pub(crate) fn constructs() -> Vec<(&'static str, Value, Option<Value>)> {
    vec![
        (
            "basic",
            json!({
                "type": "object",
                "properties": {
                    "page": {"type": "integer", "description": "Page size.", "default": 30, "minimum": 1, "maximum": 100},
                    "q": {"type": "string", "description": "Search query, GitHub syntax."},
                    "foo-bar": {"type": "boolean"},
                    "default": {"type": "string", "format": "date-time", "pattern": "^\\d+*/$"}
                },
                "required": ["q"]
            }),
            None,
        ),
        (
            "get-sum",
            json!({"type": "object", "properties": {}}),
            Some(json!({
                "title": "SumResult", "type": "object",
                "properties": {"sum": {"type": "number"}}, "required": ["sum"]
            })),
        ),
        (
            "get_sum",
            json!({"type": "object"}),
            Some(json!({"type": "integer"})),
        ),
        ("tool.with.dots", json!({"type": "string"}), None),
        ("delete", json!(true), None),
        ("2fa", json!({}), None),
        (
            "enums",
            json!({
                "type": "object",
                "properties": {
                    "state": {"enum": ["open", "closed", "say \"hi\"\n", 1, true, null]},
                    "kind": {"const": "issue"},
                    "many": {"type": "string", "enum": (0..40).map(|i| format!("v{i}")).collect::<Vec<_>>()},
                    "both": {"type": ["string", "null"]},
                    "nullable": {"type": "integer", "nullable": true}
                }
            }),
            None,
        ),
        (
            "combinators",
            json!({
                "type": "object",
                "properties": {
                    "any": {"anyOf": [{"type": "string"}, {"type": "object", "properties": {"id": {"type": "number"}}}]},
                    "one": {"oneOf": [{"const": "a"}, {"const": "b"}]},
                    "all": {"allOf": [
                        {"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"]},
                        {"type": "object", "properties": {"b": {"type": "number"}}}
                    ]},
                    "extended": {"type": "object", "properties": {"x": {"type": "string"}},
                        "anyOf": [{"required": ["x"]}, {"required": ["y"]}]}
                }
            }),
            None,
        ),
        (
            "maps",
            json!({
                "type": "object",
                "properties": {
                    "labels": {"type": "object", "additionalProperties": {"type": "string"}},
                    "mixed": {"type": "object", "properties": {"count": {"type": "number"}},
                        "additionalProperties": {"type": "string"}},
                    "wide": {"type": "object",
                        "properties": {"a": {"type": "number"}, "b": {"type": "boolean"}, "c": {"type": "object", "properties": {"d": {"type": "string"}}}},
                        "required": ["a", "b", "c"],
                        "additionalProperties": {"type": "string"}},
                    "patterns": {"type": "object", "patternProperties": {"^x-": {"type": "number"}},
                        "additionalProperties": false},
                    "closed": {"type": "object", "properties": {"k": {"type": "string"}}, "additionalProperties": false}
                }
            }),
            None,
        ),
        (
            "arrays",
            json!({
                "type": "object",
                "properties": {
                    "tags": {"type": "array", "items": {"type": "string"}, "minItems": 1, "maxItems": 5},
                    "pair": {"type": "array", "items": [{"type": "string"}, {"type": "number"}], "additionalItems": false},
                    "prefixed": {"type": "array", "prefixItems": [{"type": "boolean"}], "items": {"type": "string"}},
                    "anything": {"type": "array"},
                    "unions": {"type": "array", "items": {"type": ["string", "number"]}},
                    "objects": {"type": "array", "items": {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}}
                },
                "required": ["tags"]
            }),
            None,
        ),
        (
            "booleans",
            json!({
                "type": "object",
                "properties": {"yes": true, "no": false, "empty": {}},
                "required": ["yes"]
            }),
            None,
        ),
        (
            "recursive",
            json!({
                "type": "object",
                "properties": {"root": {"$ref": "#/$defs/Node"}, "tree": {"$ref": "#/definitions/tree~1node"}},
                "$defs": {"Node": {"type": "object", "description": "A tree node.", "properties": {
                    "value": {"type": "string"},
                    "children": {"type": "array", "items": {"$ref": "#/$defs/Node"}}
                }, "required": ["value"]}},
                "definitions": {"tree/node": {"anyOf": [{"type": "string"}, {"type": "array", "items": {"$ref": "#/definitions/tree~1node"}}]}}
            }),
            None,
        ),
        (
            "self_ref",
            json!({
                "type": "object",
                "properties": {"name": {"type": "string"}, "next": {"$ref": "#"}, "encoded": {"$ref": "#/%24defs/Leaf"}},
                "$defs": {"Leaf": {"type": "number"}}
            }),
            None,
        ),
        (
            "cycle",
            json!({
                "type": "object",
                "properties": {"a": {"$ref": "#/$defs/A"}},
                "$defs": {"A": {"anyOf": [{"$ref": "#/$defs/B"}, {"type": "string"}]}, "B": {"allOf": [{"$ref": "#/$defs/A"}]}}
            }),
            None,
        ),
        (
            "invalid",
            json!({
                "type": "object",
                "properties": {
                    "dangling": {"$ref": "#/$defs/Missing"},
                    "external": {"$ref": "https://example.com/schema.json"},
                    "anchor": {"$ref": "#node"},
                    "not_schema": "object",
                    "bad_type": {"type": 5},
                    "bad_type_name": {"type": "any"},
                    "weird": {"type": "strin"},
                    "bad_enum": {"enum": "a"},
                    "bad_list": {"anyOf": {"type": "string"}},
                    "comment": {"description": "Ends a comment */ early", "type": "string", "enum": ["*/"]}
                },
                "required": "yes"
            }),
            None,
        ),
        (
            "deep",
            json!({
                "type": "object",
                "properties": {"level1": {"type": "object", "description": "One down.", "properties": {
                    "level2": {"type": "object", "properties": {"leaf": {"type": "string"}, "more": {"type": "number"}}}
                }}}
            }),
            None,
        ),
        ("not_object_input", json!([1, 2]), None),
    ]
}

pub(crate) fn specs<'a>(
    tools: &'a [(&'static str, Value, Option<Value>)],
) -> Vec<capa_typegen::ToolSpec<'a>> {
    tools
        .iter()
        .map(|(name, input, output)| capa_typegen::ToolSpec {
            namespace: "demo",
            name,
            description: Some("Does one thing.\nSecond line of the description."),
            input_schema: input,
            output_schema: output.as_ref(),
        })
        .collect()
}
