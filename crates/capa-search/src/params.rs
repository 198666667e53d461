//! Parameter names of a tool's input schema, the third field of the index.

use serde_json::Value;

/// How deep nested objects are searched for names: `input.filter.state` is still a parameter a
/// person might name; deeper ones are structure.
const MAX_DEPTH: usize = 3;
/// Enough for any real tool; guards against hostile schemas.
const MAX_NAMES: usize = 200;

/// Property names of `schema`, nested objects and array items included, first-seen order,
/// without duplicates. Anything that is not a schema yields nothing.
pub fn parameter_names(schema: &Value) -> Vec<String> {
    let mut names = Vec::new();
    collect(schema, 0, &mut names);
    names
}

fn collect(schema: &Value, depth: usize, names: &mut Vec<String>) {
    if depth >= MAX_DEPTH || names.len() >= MAX_NAMES {
        return;
    }
    let Some(object) = schema.as_object() else {
        return;
    };
    if let Some(properties) = object.get("properties").and_then(Value::as_object) {
        for (name, property) in properties {
            if names.len() >= MAX_NAMES {
                return;
            }
            if !names.contains(name) {
                names.push(name.clone());
            }
            collect(property, depth + 1, names);
        }
    }
    if let Some(items) = object.get("items") {
        collect(items, depth, names);
    }
    for key in ["anyOf", "oneOf", "allOf"] {
        for branch in object
            .get(key)
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            collect(branch, depth, names);
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn nested_names_in_order_without_duplicates() {
        let schema = json!({"type": "object", "properties": {
            "owner": {"type": "string"},
            "filter": {"type": "object", "properties": {"state": {}, "owner": {}}},
            "labels": {"type": "array", "items": {"properties": {"color": {}}}},
            "choice": {"anyOf": [{"properties": {"left": {}}}, true]}
        }});
        assert_eq!(
            parameter_names(&schema),
            [
                "owner", "filter", "state", "labels", "color", "choice", "left"
            ]
        );
        assert!(parameter_names(&json!("nonsense")).is_empty());
    }
}
