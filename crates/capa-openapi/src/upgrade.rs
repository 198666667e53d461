//! OpenAPI 3.0 schemas in 3.1's form, so that one typed reader (`oas3`, which follows 3.1)
//! takes both. 3.1 made schemas JSON Schema 2020-12; the differences that matter here:
//!
//! - `nullable: true` becomes `null` among the types (`type: [string, "null"]`), or an
//!   `anyOf` with `{type: "null"}` for a schema without a `type` (a `$ref`, a composition);
//! - `exclusiveMaximum: true` beside `maximum: n` becomes `exclusiveMaximum: n` (and the same
//!   for minimum); `false` is dropped.
//!
//! Only keys whose value has 3.0's boolean form are touched, so a property *named* `nullable`
//! (whose value is a schema object) is left alone.

use serde_json::{Map, Value, json};

/// Rewrites every schema in `document` from 3.0's form to 3.1's.
pub(crate) fn to_3_1(document: &mut Value) {
    // An explicit stack: a hostile document may nest far deeper than the call stack allows.
    let mut stack: Vec<&mut Value> = vec![document];
    while let Some(value) = stack.pop() {
        match value {
            Value::Object(map) => {
                upgrade_schema(map);
                stack.extend(map.values_mut());
            }
            Value::Array(items) => stack.extend(items.iter_mut()),
            _ => {}
        }
    }
}

fn upgrade_schema(map: &mut Map<String, Value>) {
    for (exclusive, bound) in [
        ("exclusiveMaximum", "maximum"),
        ("exclusiveMinimum", "minimum"),
    ] {
        if let Some(Value::Bool(flag)) = map.get(exclusive) {
            let flag = *flag;
            map.remove(exclusive);
            if flag && let Some(limit) = map.remove(bound) {
                map.insert(exclusive.to_owned(), limit);
            }
        }
    }
    let Some(Value::Bool(nullable)) = map.get("nullable") else {
        return;
    };
    let nullable = *nullable;
    map.remove("nullable");
    if !nullable {
        return;
    }
    if let Some(Value::Array(values)) = map.get_mut("enum")
        && !values.contains(&Value::Null)
    {
        values.push(Value::Null);
    }
    match map.get_mut("type") {
        Some(Value::String(single)) => {
            let single = std::mem::take(single);
            map.insert("type".into(), json!([single, "null"]));
        }
        Some(Value::Array(types)) => {
            if !types.iter().any(|t| t == "null") {
                types.push(json!("null"));
            }
        }
        _ => {
            // No `type`: the schema is a `$ref` or a composition. Keep what it says (without
            // the annotations, which stay outside) as one branch, null as the other.
            let mut inner = Map::new();
            for key in ["$ref", "allOf", "oneOf", "anyOf", "properties", "items"] {
                if let Some(v) = map.remove(key) {
                    inner.insert(key.to_owned(), v);
                }
            }
            if !inner.is_empty() {
                map.insert(
                    "anyOf".into(),
                    json!([Value::Object(inner), {"type": "null"}]),
                );
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nullable_types_refs_and_bounds_take_the_3_1_form() {
        let mut doc = json!({
            "a": {"type": "string", "nullable": true},
            "b": {"$ref": "#/components/schemas/X", "nullable": true, "description": "d"},
            "c": {"type": "integer", "maximum": 5, "exclusiveMaximum": true, "minimum": 1, "exclusiveMinimum": false},
            "d": {"enum": ["x"], "type": "string", "nullable": true},
            "props": {"properties": {"nullable": {"type": "boolean"}}}
        });
        to_3_1(&mut doc);
        assert_eq!(doc["a"], json!({"type": ["string", "null"]}));
        assert_eq!(
            doc["b"],
            json!({"description": "d", "anyOf": [{"$ref": "#/components/schemas/X"}, {"type": "null"}]})
        );
        assert_eq!(
            doc["c"],
            json!({"type": "integer", "exclusiveMaximum": 5, "minimum": 1})
        );
        assert_eq!(
            doc["d"],
            json!({"enum": ["x", null], "type": ["string", "null"]})
        );
        assert_eq!(
            doc["props"],
            json!({"properties": {"nullable": {"type": "boolean"}}})
        );
    }
}
