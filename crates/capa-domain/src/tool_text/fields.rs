//! The texts of a tool definition that a model reads as prose: its name, title, description,
//! the annotations' title, and the `description` / `title` of every schema node (parameters and
//! output fields), with each property's name; each with a label a person understands.

use serde_json::Value;

use crate::tool::{JsonObject, ToolDefinition};

/// Deeper schema nesting is not walked (a hostile schema can nest thousands deep; the hub
/// bounds definitions elsewhere, this keeps the walk itself bounded).
const MAX_DEPTH: usize = 64;

/// One text of a definition.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Field<'a> {
    /// Where it is, for a person: `description`, `parameter path: description`.
    pub(super) label: String,
    pub(super) text: &'a str,
    /// Prose a model reads (not a name): the phrase rules read these.
    pub(super) prose: bool,
}

/// Every text of `definition`, in a stable order.
pub(super) fn fields(definition: &ToolDefinition) -> Vec<Field<'_>> {
    let mut out = vec![Field {
        label: "name".to_owned(),
        text: &definition.name,
        prose: false,
    }];
    let prose = [
        ("title", definition.title.as_ref()),
        (
            "annotations title",
            definition
                .annotations
                .as_ref()
                .and_then(|a| a.title.as_ref()),
        ),
        ("description", definition.description.as_ref()),
    ];
    for (label, text) in prose {
        if let Some(text) = text {
            out.push(Field {
                label: label.to_owned(),
                text,
                prose: true,
            });
        }
    }
    schema_fields(&definition.input_schema, "", 0, &mut out);
    if let Some(output) = &definition.output_schema {
        schema_fields(output, "output ", 0, &mut out);
    }
    out
}

fn schema_fields<'a>(node: &'a JsonObject, path: &str, depth: usize, out: &mut Vec<Field<'a>>) {
    if depth > MAX_DEPTH {
        return;
    }
    let here = if path.is_empty() {
        "schema".to_owned()
    } else {
        format!("parameter {}", path.trim())
    };
    for key in ["title", "description"] {
        if let Some(Value::String(text)) = node.get(key) {
            out.push(Field {
                label: format!("{here} {key}"),
                text,
                prose: true,
            });
        }
    }
    for (key, value) in node {
        match (key.as_str(), value) {
            ("properties" | "patternProperties" | "$defs" | "definitions", Value::Object(map)) => {
                for (name, child) in map {
                    out.push(Field {
                        label: format!("{here}: property name"),
                        text: name,
                        prose: false,
                    });
                    if let Value::Object(child) = child {
                        schema_fields(child, &format!("{path}{name}."), depth + 1, out);
                    }
                }
            }
            (_, Value::Object(child)) => schema_fields(child, path, depth + 1, out),
            (_, Value::Array(items)) => {
                for item in items {
                    if let Value::Object(child) = item {
                        schema_fields(child, path, depth + 1, out);
                    }
                }
            }
            _ => {}
        }
    }
}

/// Replaces every prose text of `definition` (title, description, annotations title, schema
/// titles and descriptions) for which `needs` holds with `edit` of it. A schema is copied (it may
/// be shared) only when one of its texts needs it.
pub(super) fn edit_prose(
    definition: &mut ToolDefinition,
    needs: &dyn Fn(&str) -> bool,
    edit: &mut dyn FnMut(&str) -> String,
) {
    for text in [
        definition.title.as_mut(),
        definition.description.as_mut(),
        definition
            .annotations
            .as_mut()
            .and_then(|a| a.title.as_mut()),
    ]
    .into_iter()
    .flatten()
    {
        if needs(text) {
            *text = edit(text);
        }
    }
    if schema_needs(&definition.input_schema, needs, 0) {
        edit_schema(
            std::sync::Arc::make_mut(&mut definition.input_schema),
            needs,
            edit,
            0,
        );
    }
    if let Some(output) = definition.output_schema.as_mut()
        && schema_needs(output, needs, 0)
    {
        edit_schema(std::sync::Arc::make_mut(output), needs, edit, 0);
    }
}

/// Whether any prose of the schema `needs` an edit.
fn schema_needs(node: &JsonObject, needs: &dyn Fn(&str) -> bool, depth: usize) -> bool {
    if depth > MAX_DEPTH {
        return false;
    }
    node.iter().any(|(key, value)| match value {
        Value::String(text) => matches!(key.as_str(), "title" | "description") && needs(text),
        Value::Object(child) => schema_needs(child, needs, depth + 1),
        Value::Array(items) => items
            .iter()
            .any(|i| matches!(i, Value::Object(c) if schema_needs(c, needs, depth + 1))),
        _ => false,
    })
}

fn edit_schema(
    node: &mut JsonObject,
    needs: &dyn Fn(&str) -> bool,
    edit: &mut dyn FnMut(&str) -> String,
    depth: usize,
) {
    if depth > MAX_DEPTH {
        return;
    }
    for (key, value) in node.iter_mut() {
        match value {
            Value::String(text)
                if matches!(key.as_str(), "title" | "description") && needs(text) =>
            {
                *text = edit(text);
            }
            Value::Object(child) => edit_schema(child, needs, edit, depth + 1),
            Value::Array(items) => {
                for item in items {
                    if let Value::Object(child) = item {
                        edit_schema(child, needs, edit, depth + 1);
                    }
                }
            }
            _ => {}
        }
    }
}
