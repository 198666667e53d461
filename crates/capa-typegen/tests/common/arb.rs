//! Generated JSON Schemas for the property tests: random nesting of every keyword the converter
//! reads (objects, arrays and tuples, `anyOf`/`oneOf`/`allOf`, `$ref`s to `$defs` that exist or
//! not, to the root and outside), values of the wrong type, enums and keys with odd strings
//! (quotes, backslashes, `*/`, line separators, NUL, emoji), and chains nested past the
//! converter's bound.

use proptest::prelude::*;
use proptest::sample::select;
use serde_json::{Map, Value, json};

/// `$defs` keys the generated documents define (some) and refer to (others).
const DEF_NAMES: &[&str] = &["A", "Node", "a b", "x/y", "*/", "0", "Missing"];
/// How many of [`DEF_NAMES`] a document may define (`Missing` never).
const DEFINED: usize = 6;

pub(crate) fn odd_string() -> impl Strategy<Value = String> {
    let odd = select(vec![
        "",
        "\"",
        "\\",
        "*/",
        "/*",
        "a b",
        "1st",
        "\u{2028}",
        "\u{2029}",
        "\u{0}",
        "\r\n",
        "é",
        "😀",
        "__proto__",
        "constructor",
        "default",
        "`${x}`",
        "$ref",
        "type",
        "a-b",
        "class",
        "</script>",
        "\\u0041",
        "x*/y",
        "@param",
    ]);
    prop_oneof![
        3 => odd.prop_map(str::to_owned),
        2 => "[a-zA-Z_$][a-zA-Z0-9_$]{0,5}",
        1 => prop::collection::vec(any::<char>(), 0..5).prop_map(String::from_iter),
    ]
}

fn scalar() -> impl Strategy<Value = Value> {
    prop_oneof![
        odd_string().prop_map(Value::String),
        any::<i64>().prop_map(Value::from),
        any::<f64>().prop_map(Value::from),
        any::<bool>().prop_map(Value::Bool),
        Just(Value::Null),
        Just(json!([1, "a"])),
        Just(json!({"a": {"b": [null]}})),
    ]
}

/// `#/$defs/<name>` with the name escaped as a JSON pointer, sometimes percent-encoded.
fn def_ref() -> impl Strategy<Value = Value> {
    (select(DEF_NAMES.to_vec()), any::<bool>()).prop_map(|(name, encode)| {
        let pointer = name.replace('~', "~0").replace('/', "~1");
        let pointer = if encode {
            pointer.replace(' ', "%20").replace('$', "%24")
        } else {
            pointer
        };
        json!({"$ref": format!("#/$defs/{pointer}")})
    })
}

fn leaf() -> impl Strategy<Value = Value> {
    let type_name = select(vec![
        "string", "number", "integer", "boolean", "null", "object", "array",
    ]);
    // Mostly valid parts: an invalid one makes its whole union `unknown`, which hides the rest.
    prop_oneof![
        12 => type_name.clone().prop_map(|t| json!({"type": t})),
        2 => prop::collection::vec(type_name, 0..3).prop_map(|t| json!({"type": t})),
        4 => prop::collection::vec(scalar(), 0..40).prop_map(|v| json!({"enum": v})),
        2 => scalar().prop_map(|v| json!({"const": v})),
        2 => any::<bool>().prop_map(Value::Bool),
        1 => Just(json!({})),
        6 => def_ref(),
        2 => Just(json!({"$ref": "#"})),
        1 => Just(json!({"$ref": "https://example.com/s.json"})),
        1 => odd_string().prop_map(|r| json!({"$ref": r})),
        1 => select(vec![json!(5), json!("object"), json!({"type": 7}), json!({"enum": "a"}),
            json!({"properties": [1]}), json!({"items": 5}), json!({"anyOf": {}}),
            json!({"type": "strin"}), json!({"type": "any"})]),
    ]
}

/// Keywords that only document: description, default, format, bounds, nullable.
fn decorate(schema: Value, extra: Vec<(u8, Value)>) -> Value {
    let Value::Object(mut map) = schema else {
        return schema;
    };
    for (which, value) in extra {
        let key = match which % 6 {
            0 => "description",
            1 => "default",
            2 => "format",
            3 => "minimum",
            4 => "pattern",
            _ => "nullable",
        };
        let value = match key {
            "nullable" => Value::Bool(value.is_string()),
            _ => value,
        };
        map.insert(key.to_owned(), value);
    }
    Value::Object(map)
}

fn schema_with(inner: BoxedStrategy<Value>) -> impl Strategy<Value = Value> {
    let properties = prop::collection::vec((odd_string(), inner.clone()), 0..5);
    let additional = prop_oneof![
        Just(None),
        any::<bool>().prop_map(|b| Some(Value::Bool(b))),
        inner.clone().prop_map(Some),
    ];
    let object = (
        properties,
        prop::collection::vec(odd_string(), 0..3),
        additional,
        prop::option::of(inner.clone()),
        any::<bool>(),
    )
        .prop_map(|(properties, required, additional, pattern, typed)| {
            let mut map = Map::new();
            if typed {
                map.insert("type".to_owned(), json!("object"));
            }
            let mut required = required;
            required.extend(properties.iter().take(2).map(|(k, _)| k.clone()));
            map.insert(
                "properties".to_owned(),
                Value::Object(properties.into_iter().collect()),
            );
            map.insert("required".to_owned(), json!(required));
            if let Some(additional) = additional {
                map.insert("additionalProperties".to_owned(), additional);
            }
            if let Some(pattern) = pattern {
                map.insert("patternProperties".to_owned(), json!({"^x-": pattern}));
            }
            Value::Object(map)
        });
    let array = prop_oneof![
        inner
            .clone()
            .prop_map(|items| json!({"type": "array", "items": items})),
        (prop::collection::vec(inner.clone(), 0..3), any::<bool>()).prop_map(
            |(items, more)| json!({"type": "array", "items": items, "additionalItems": more})
        ),
        (prop::collection::vec(inner.clone(), 0..3), inner.clone())
            .prop_map(|(prefix, items)| json!({"prefixItems": prefix, "items": items})),
    ];
    let combinator = (
        select(vec!["anyOf", "oneOf", "allOf"]),
        prop::collection::vec(inner, 0..4),
    )
        .prop_map(|(key, list)| single(key, Value::Array(list)));
    (
        prop_oneof![3 => object.boxed(), 2 => array.boxed(), 2 => combinator.boxed()],
        prop::collection::vec((any::<u8>(), scalar()), 0..3),
    )
        .prop_map(|(schema, extra)| decorate(schema, extra))
}

fn single(key: &str, value: Value) -> Value {
    Value::Object([(key.to_owned(), value)].into_iter().collect())
}

/// A schema of random shape, a few levels deep.
pub(crate) fn schema() -> impl Strategy<Value = Value> {
    leaf().prop_recursive(5, 48, 4, |inner| schema_with(inner).boxed())
}

/// A schema wrapped in up to 80 levels of single-child keywords (past the converter's bound of
/// 32), built iteratively.
fn chained() -> impl Strategy<Value = Value> {
    (
        schema(),
        prop::collection::vec(
            select(vec![
                "items",
                "properties",
                "anyOf",
                "allOf",
                "additionalProperties",
            ]),
            0..80,
        ),
    )
        .prop_map(|(mut schema, wrappers)| {
            for key in wrappers {
                schema = match key {
                    "properties" => json!({"type": "object", "properties": {"x": schema}}),
                    "anyOf" | "allOf" => single(key, json!([schema, {"type": "null"}])),
                    _ => single(key, schema),
                };
            }
            schema
        })
}

/// A whole document: a root object with properties and `$defs` from [`DEF_NAMES`].
pub(crate) fn document() -> impl Strategy<Value = Value> {
    let defs = prop::collection::vec(prop::option::weighted(0.8, schema()), DEFINED);
    (prop_oneof![2 => schema(), 1 => chained()], defs).prop_map(|(root, defs)| {
        let mut map = match root {
            Value::Object(map) => map,
            other => {
                let mut map = Map::new();
                map.insert("type".to_owned(), json!("object"));
                map.insert("properties".to_owned(), json!({ "value": other }));
                map
            }
        };
        let defs: Map<String, Value> = DEF_NAMES
            .iter()
            .zip(defs)
            .filter_map(|(name, schema)| Some(((*name).to_owned(), schema?)))
            .collect();
        map.insert("$defs".to_owned(), Value::Object(defs));
        Value::Object(map)
    })
}
