//! Parameter names of a tool's input schema, the third field of the index.

use serde_json::Value;

/// How deep nested objects are searched for names: `input.filter.state` is still a parameter a
/// person might name; deeper ones are structure.
const MAX_DEPTH: usize = 3;
/// Enough for any real tool; guards against hostile schemas.
const MAX_NAMES: usize = 200;
/// Schema steps followed in all (`items` and `anyOf` chains do not deepen `MAX_DEPTH`), so the
/// walk's recursion is bounded whatever the schema.
const MAX_LEVEL: usize = 32;

/// Property names of `schema`, nested objects and array items included, first-seen order,
/// without duplicates. Anything that is not a schema yields nothing.
pub fn parameter_names(schema: &Value) -> Vec<String> {
    let mut names = Vec::new();
    collect(schema, 0, 0, &mut names);
    names
}

fn collect(schema: &Value, depth: usize, level: usize, names: &mut Vec<String>) {
    if depth >= MAX_DEPTH || level >= MAX_LEVEL || names.len() >= MAX_NAMES {
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
            collect(property, depth + 1, level + 1, names);
        }
    }
    if let Some(items) = object.get("items") {
        collect(items, depth, level + 1, names);
    }
    for key in ["anyOf", "oneOf", "allOf"] {
        for branch in object
            .get(key)
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            collect(branch, depth, level + 1, names);
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

    #[test]
    fn item_and_branch_chains_are_followed_a_bounded_way() {
        let mut near = json!({"properties": {"near": {}}});
        // 30 schema levels: within the bound.
        for _ in 0..15 {
            near = json!({"anyOf": [{"items": near}]});
        }
        assert_eq!(parameter_names(&near), ["near"]);
        // 100,000 levels, walked on a 256 KiB stack; built and dropped on a large one, as
        // serde_json's own Drop recurses.
        let on_big_stack = std::thread::Builder::new().stack_size(256 << 20);
        let walk = on_big_stack.spawn(|| {
            let mut deep = json!({"properties": {"deepest": {}}});
            for _ in 0..100_000 {
                // Not `json!`, which copies the value it is given (recursively).
                deep = Value::Object([("items".to_owned(), deep)].into_iter().collect());
            }
            let walker = std::thread::Builder::new().stack_size(256 << 10);
            let walked = walker.spawn(move || (parameter_names(&deep), deep));
            walked.map(|t| t.join().map(|(names, _deep)| names))
        });
        let names = walk.expect("spawn").join().expect("join").expect("spawn");
        assert!(names.expect("no stack overflow").is_empty());
    }
}
