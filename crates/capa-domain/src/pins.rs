//! Pinned tool definitions (the rug-pull guard, docs/pinning.md): what a person approved of a
//! tool is the definition the hub saw when it first listed the tool from a source the person
//! confirmed — its title, description, input and output schema and annotations. A later
//! listing that changes them does not change what the person approved: the policy judges such
//! a tool by the stricter of its pinned and its new definition, and asks a person at every call
//! (or refuses it, when the person blocked it) until the person reviews the change.
//!
//! This module holds the data; `capa-core` keeps the pins in the store and tells the policy
//! which tools differ from theirs ([`ChangedTools`]).

use std::collections::HashMap;
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::tool::{JsonObject, ToolDefinition, ToolHints};

/// The parts of a tool's definition that are pinned: everything the source says of it but its
/// name (the tool's identity). What a person or a model reads and what a verdict is drawn from
/// have their own fields; the members the hub only relays (`_meta`, `icons`, `execution`, …)
/// are pinned too, since a client in expose-all reads them as sent.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PinnedDefinition {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    pub input_schema: Value,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_schema: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<Value>,
    /// Every other member, as sent.
    #[serde(default, skip_serializing_if = "JsonObject::is_empty")]
    pub other: JsonObject,
}

/// One part of a definition, as a change names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum DefinitionPart {
    Title,
    Description,
    InputSchema,
    OutputSchema,
    Annotations,
    /// `_meta`, `icons`, `execution` and the like.
    Other,
}

impl DefinitionPart {
    /// The words a person reads.
    pub fn words(self) -> &'static str {
        match self {
            Self::Title => "title",
            Self::Description => "description",
            Self::InputSchema => "input schema",
            Self::OutputSchema => "output schema",
            Self::Annotations => "annotations",
            Self::Other => "other members",
        }
    }
}

impl PinnedDefinition {
    /// The pinned parts of `definition`.
    pub fn of(definition: &ToolDefinition) -> Self {
        Self {
            title: definition.title.clone(),
            description: definition.description.clone(),
            input_schema: Value::Object((*definition.input_schema).clone()),
            output_schema: definition
                .output_schema
                .as_ref()
                .map(|s| Value::Object((**s).clone())),
            annotations: definition
                .annotations
                .as_ref()
                .and_then(|a| serde_json::to_value(a).ok()),
            other: definition.other.clone(),
        }
    }

    /// The text a digest is taken of: compact JSON with every object's keys sorted, so that a
    /// source that only reorders keys changes nothing.
    pub fn canonical_json(&self) -> String {
        let value = serde_json::to_value(self).unwrap_or(Value::Null);
        let mut text = String::new();
        write_canonical(&value, &mut text);
        text
    }

    /// `definition` with these parts in place of its own (for the verdict of what was pinned).
    pub fn applied_to(&self, definition: &ToolDefinition) -> ToolDefinition {
        let object = |v: &Value| match v {
            Value::Object(map) => map.clone(),
            _ => JsonObject::new(),
        };
        ToolDefinition {
            title: self.title.clone(),
            description: self.description.clone(),
            input_schema: Arc::new(object(&self.input_schema)),
            output_schema: self.output_schema.as_ref().map(|s| Arc::new(object(s))),
            annotations: self
                .annotations
                .as_ref()
                .and_then(|a| serde_json::from_value::<ToolHints>(a.clone()).ok()),
            other: self.other.clone(),
            ..definition.clone()
        }
    }

    /// The parts that differ between `self` (pinned) and `now`.
    pub fn differences(&self, now: &Self) -> Vec<DefinitionPart> {
        let canonical = |v: &Value| {
            let mut text = String::new();
            write_canonical(v, &mut text);
            text
        };
        let same = |a: Option<&Value>, b: Option<&Value>| a.map(canonical) == b.map(canonical);
        let mut parts = Vec::new();
        if self.title != now.title {
            parts.push(DefinitionPart::Title);
        }
        if self.description != now.description {
            parts.push(DefinitionPart::Description);
        }
        if !same(Some(&self.input_schema), Some(&now.input_schema)) {
            parts.push(DefinitionPart::InputSchema);
        }
        if !same(self.output_schema.as_ref(), now.output_schema.as_ref()) {
            parts.push(DefinitionPart::OutputSchema);
        }
        if !same(self.annotations.as_ref(), now.annotations.as_ref()) {
            parts.push(DefinitionPart::Annotations);
        }
        let others = |o: &JsonObject| canonical(&Value::Object(o.clone()));
        if others(&self.other) != others(&now.other) {
            parts.push(DefinitionPart::Other);
        }
        parts
    }
}

fn write_canonical(value: &Value, out: &mut String) {
    match value {
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            out.push('{');
            for (i, key) in keys.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                out.push_str(&Value::String(key.clone()).to_string());
                out.push(':');
                write_canonical(&map[key], out);
            }
            out.push('}');
        }
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_canonical(item, out);
            }
            out.push(']');
        }
        other => out.push_str(&other.to_string()),
    }
}

/// What the policy must know of a tool whose definition is not the one a person approved.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DefinitionChange {
    /// What was pinned (the verdict is the stricter of this one's and the live one's).
    pub pinned: PinnedDefinition,
    /// The parts that changed (empty for a tool the person blocked that did not change).
    pub parts: Vec<DefinitionPart>,
    /// The person blocked the tool: it is denied until they accept it.
    pub blocked: bool,
}

/// The tools (by address) whose live definition differs from the pinned one, or that a person
/// blocked. Empty when every tool is as approved.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ChangedTools {
    by_address: HashMap<String, DefinitionChange>,
}

impl ChangedTools {
    pub fn new(by_address: HashMap<String, DefinitionChange>) -> Self {
        Self { by_address }
    }

    pub fn get(&self, address: &str) -> Option<&DefinitionChange> {
        self.by_address.get(address)
    }

    pub fn is_empty(&self) -> bool {
        self.by_address.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn definition(value: Value) -> ToolDefinition {
        serde_json::from_value(value).expect("tool")
    }

    #[test]
    fn reordered_keys_are_the_same_definition() {
        let a = definition(
            json!({"name": "w", "inputSchema": {"type": "object", "properties": {"a": {"type": "string"}}}}),
        );
        let b = definition(
            json!({"name": "w", "inputSchema": {"properties": {"a": {"type": "string"}}, "type": "object"}}),
        );
        let (a, b) = (PinnedDefinition::of(&a), PinnedDefinition::of(&b));
        assert_eq!(a.canonical_json(), b.canonical_json());
        assert!(a.differences(&b).is_empty());
    }

    #[test]
    fn differences_name_each_changed_part() {
        let before = PinnedDefinition::of(&definition(json!({
            "name": "wipe", "description": "Deletes everything.",
            "inputSchema": {"type": "object"}, "annotations": {"destructiveHint": true}
        })));
        let after = PinnedDefinition::of(&definition(json!({
            "name": "wipe", "description": "Reads a file.",
            "inputSchema": {"type": "object", "properties": {"path": {"type": "string"}}},
            "annotations": {"readOnlyHint": true}
        })));
        assert_eq!(
            before.differences(&after),
            vec![
                DefinitionPart::Description,
                DefinitionPart::InputSchema,
                DefinitionPart::Annotations
            ]
        );
        let live = definition(
            json!({"name": "x.wipe", "inputSchema": {}, "annotations": {"readOnlyHint": true}}),
        );
        let pinned = before.applied_to(&live);
        assert_eq!(pinned.name, "x.wipe");
        assert_eq!(
            pinned.annotations.and_then(|a| a.destructive_hint),
            Some(true)
        );
    }
}
