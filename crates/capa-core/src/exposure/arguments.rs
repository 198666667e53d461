//! A first check of `call_tool` arguments against the tool's input schema, before the upstream
//! sees them: an object, required properties present, known properties of the right JSON type,
//! no unknown properties where the schema forbids them. Only what the schema states plainly is
//! checked (no `$ref`, `oneOf` or formats); the upstream remains the judge of the rest.

use serde_json::{Map, Value};

/// `Ok` when nothing plainly wrong was found, else one line per problem.
pub fn check_arguments(schema: &Map<String, Value>, data: &Value) -> Result<(), Vec<String>> {
    let empty = Map::new();
    let object = match data {
        Value::Object(map) => map,
        Value::Null => &empty,
        other => {
            return Err(vec![format!(
                "`data` must be an object, not {}",
                kind(other)
            )]);
        }
    };
    let mut problems = Vec::new();
    let properties = schema.get("properties").and_then(Value::as_object);
    if let Some(required) = schema.get("required").and_then(Value::as_array) {
        for name in required.iter().filter_map(Value::as_str) {
            if !object.contains_key(name) {
                problems.push(format!("`{name}` is required"));
            }
        }
    }
    for (name, value) in object {
        match properties.and_then(|p| p.get(name)) {
            Some(property) => {
                if let Some(expected) = mismatch(property, value) {
                    problems.push(format!("`{name}` must be {expected}, not {}", kind(value)));
                }
            }
            None if schema.get("additionalProperties") == Some(&Value::Bool(false)) => {
                problems.push(format!("`{name}` is not a parameter of this tool"));
            }
            None => {}
        }
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(problems)
    }
}

fn kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(n) if n.is_i64() || n.is_u64() => "an integer",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// What the property's `type` asks for, when `value` is none of it.
fn mismatch(property: &Value, value: &Value) -> Option<String> {
    let types: Vec<&str> = match property.get("type")? {
        Value::String(t) => vec![t.as_str()],
        Value::Array(list) => list.iter().filter_map(Value::as_str).collect(),
        _ => return None,
    };
    let fits = |t: &str| match (t, value) {
        ("string", Value::String(_))
        | ("boolean", Value::Bool(_))
        | ("array", Value::Array(_))
        | ("object", Value::Object(_))
        | ("null", Value::Null)
        | ("number", Value::Number(_)) => true,
        ("integer", Value::Number(n)) => {
            n.is_i64() || n.is_u64() || n.as_f64().is_some_and(|f| f.fract() == 0.0)
        }
        _ => false,
    };
    if types.is_empty() || types.iter().any(|t| fits(t)) {
        return None;
    }
    Some(
        types
            .iter()
            .map(|t| match *t {
                "integer" => "an integer".to_owned(),
                "array" | "object" => format!("an {t}"),
                other => format!("a {other}"),
            })
            .collect::<Vec<_>>()
            .join(" or "),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn schema(value: Value) -> Map<String, Value> {
        match value {
            Value::Object(map) => map,
            _ => Map::new(),
        }
    }

    #[test]
    fn plain_mistakes_are_found_and_the_rest_passes() {
        let s = schema(json!({
            "type": "object",
            "properties": {"a": {"type": "number"}, "b": {"type": "integer"}, "tag": {"type": ["string", "null"]}},
            "required": ["a", "b"],
            "additionalProperties": false
        }));
        assert_eq!(check_arguments(&s, &json!({"a": 1.5, "b": 2})), Ok(()));
        assert_eq!(
            check_arguments(&s, &json!({"a": 1, "b": 2.0, "tag": null})),
            Ok(())
        );
        assert_eq!(
            check_arguments(&s, &json!({"a": "1", "c": true})),
            Err(vec![
                "`b` is required".to_owned(),
                "`a` must be a number, not a string".to_owned(),
                "`c` is not a parameter of this tool".to_owned(),
            ])
        );
        assert_eq!(
            check_arguments(&s, &json!([1])),
            Err(vec!["`data` must be an object, not an array".to_owned()])
        );
        let open = schema(json!({"type": "object"}));
        assert_eq!(check_arguments(&open, &json!({"anything": 1})), Ok(()));
    }
}
