//! JSON Schemas of tools from the document's schemas: `components.schemas` become `$defs`
//! (only those a tool reaches), so recursive and shared types keep their names in `describe`.

use std::collections::{BTreeSet, HashMap};

use serde_json::{Map, Value, json};

const COMPONENT_PREFIX: &str = "#/components/schemas/";

/// The document's named schemas, each once as JSON with its references rewritten to
/// `#/$defs/<name>`, and the names each refers to.
pub(crate) struct Defs {
    schemas: HashMap<String, (Value, BTreeSet<String>)>,
}

impl Defs {
    pub(crate) fn new(spec: &oas3::Spec) -> Self {
        let mut schemas = HashMap::new();
        if let Some(components) = &spec.components {
            for (name, schema) in &components.schemas {
                let mut value = to_json(schema);
                let refs = rewrite_refs(&mut value);
                schemas.insert(name.clone(), (value, refs));
            }
        }
        Self { schemas }
    }

    /// The `$defs` that `roots` reach, directly or through each other; unknown names are left
    /// out (their `$ref`s then name nothing, which `describe` shows as `unknown`).
    pub(crate) fn reached(&self, roots: &BTreeSet<String>) -> Map<String, Value> {
        let mut seen = BTreeSet::new();
        let mut stack: Vec<&String> = roots.iter().collect();
        while let Some(name) = stack.pop() {
            if seen.contains(name) {
                continue;
            }
            if let Some((_, refs)) = self.schemas.get(name) {
                seen.insert(name.clone());
                stack.extend(refs.iter());
            }
        }
        seen.into_iter()
            .filter_map(|name| {
                let (value, _) = self.schemas.get(&name)?;
                Some((name, value.clone()))
            })
            .collect()
    }
}

/// A schema of the document as JSON, references rewritten; the names it refers to are added
/// to `refs`.
pub(crate) fn schema_json(schema: &oas3::spec::Schema, refs: &mut BTreeSet<String>) -> Value {
    let mut value = to_json(schema);
    refs.extend(rewrite_refs(&mut value));
    value
}

fn to_json(schema: &oas3::spec::Schema) -> Value {
    serde_json::to_value(schema).unwrap_or_else(|_| json!({}))
}

/// Rewrites `#/components/schemas/X` to `#/$defs/X` throughout `value` and returns the names.
/// Any other reference (another file, a pointer into a schema) cannot be followed here: it is
/// dropped, leaving a schema that accepts anything, with a note in its description.
fn rewrite_refs(value: &mut Value) -> BTreeSet<String> {
    let mut names = BTreeSet::new();
    let mut stack = vec![value];
    while let Some(value) = stack.pop() {
        match value {
            Value::Object(map) => {
                if let Some(Value::String(target)) = map.get("$ref") {
                    match target.strip_prefix(COMPONENT_PREFIX) {
                        Some(name) if !name.contains('/') => {
                            let name = name.to_owned();
                            map.insert("$ref".into(), Value::String(format!("#/$defs/{name}")));
                            names.insert(name);
                        }
                        _ => {
                            let note = format!("(a reference the hub cannot follow: {target})");
                            map.remove("$ref");
                            map.entry("description")
                                .or_insert_with(|| Value::String(String::new()));
                            if let Some(Value::String(d)) = map.get_mut("description") {
                                if !d.is_empty() {
                                    d.push(' ');
                                }
                                d.push_str(&note);
                            }
                        }
                    }
                }
                stack.extend(map.values_mut());
            }
            Value::Array(items) => stack.extend(items.iter_mut()),
            _ => {}
        }
    }
    names
}

/// `schema` with `description` added when it has none.
pub(crate) fn described(mut schema: Value, description: Option<&str>) -> Value {
    if let (Some(text), Value::Object(map)) = (description, &mut schema)
        && !text.trim().is_empty()
        && !map.contains_key("description")
    {
        map.insert("description".into(), Value::String(text.trim().to_owned()));
    }
    schema
}

/// A root schema with the `$defs` it needs (a boolean schema needs none).
pub(crate) fn with_defs(mut root: Value, defs: &Defs, refs: &BTreeSet<String>) -> Value {
    if let Value::Object(map) = &mut root {
        add_defs(map, defs, refs);
    }
    root
}

/// Adds the `$defs` that `refs` reach to `root`.
pub(crate) fn add_defs(root: &mut Map<String, Value>, defs: &Defs, refs: &BTreeSet<String>) {
    let reached = defs.reached(refs);
    if !reached.is_empty() {
        root.insert("$defs".into(), Value::Object(reached));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn component_refs_become_defs_and_others_are_dropped_with_a_note() {
        let mut value = json!({
            "properties": {
                "a": {"$ref": "#/components/schemas/Task"},
                "b": {"items": {"$ref": "#/components/schemas/Tag"}},
                "c": {"$ref": "other.yaml#/Thing"}
            }
        });
        let names = rewrite_refs(&mut value);
        assert_eq!(names, BTreeSet::from(["Task".to_owned(), "Tag".to_owned()]));
        assert_eq!(value["properties"]["a"]["$ref"], "#/$defs/Task");
        assert_eq!(value["properties"]["b"]["items"]["$ref"], "#/$defs/Tag");
        assert!(value["properties"]["c"].get("$ref").is_none());
        assert!(
            value["properties"]["c"]["description"]
                .as_str()
                .is_some_and(|d| d.contains("other.yaml#/Thing"))
        );
    }
}
