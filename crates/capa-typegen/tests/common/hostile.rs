//! Schemas that try to make the converter recurse, expand or write without bound, one way each,
//! shared by the integration tests (which check each bound and that neighbours are unaffected)
//! and the tsc test (which compiles what they become).

use serde_json::{Map, Value, json};

/// `(tool name, input schema)` of the `hostile` namespace, in catalog order.
pub(crate) fn hostile() -> Vec<(&'static str, Value)> {
    vec![
        ("doubling", doubling(30)),
        ("wide_deep", wide_deep(4, 7)),
        ("ref_chain", ref_chain(100)),
        ("ref_cycle", ref_cycle()),
        ("alias_fan_out", alias_fan_out(300)),
        ("huge", huge(3_000)),
        ("odd_names", odd_names()),
    ]
}

/// An object whose index signature admits its property, an array of the next such object: the
/// index once repeated the array's object, so the text doubled per level (2^30 here).
pub(crate) fn doubling(levels: usize) -> Value {
    let mut schema = json!({"type": "string"});
    for _ in 0..levels {
        schema = json!({
            "type": "object",
            "properties": {"a": {"type": "array", "items": schema}},
            "additionalProperties": {"type": "string"}
        });
    }
    schema
}

/// `anyOf` of `width` branches, `depth` times: width^depth schema nodes (16,384 here), each
/// branch an object so nothing collapses.
pub(crate) fn wide_deep(width: usize, depth: usize) -> Value {
    let mut schema = json!({"type": "string"});
    for level in 0..depth {
        let branches: Vec<Value> = (0..width)
            .map(|i| {
                json!({"type": "object", "properties": {format!("l{level}b{i}"): schema.clone()}})
            })
            .collect();
        schema = json!({"anyOf": branches});
    }
    json!({"type": "object", "properties": {"x": schema}})
}

/// `$defs` `D0` … `D{n-1}`, each an object whose `next` and `also` refer to the next one (the
/// last to the first): 2^n paths if `$ref`s were expanded.
pub(crate) fn ref_chain(n: usize) -> Value {
    let defs: Map<String, Value> = (0..n)
        .map(|i| {
            let next = json!({"$ref": format!("#/$defs/D{}", (i + 1) % n)});
            let def = json!({"type": "object", "properties": {"next": next, "also": next, "n": {"const": i}}});
            (format!("D{i}"), def)
        })
        .collect();
    json!({"type": "object", "properties": {"start": {"$ref": "#/$defs/D0"}}, "$defs": defs})
}

/// Aliases that refer to each other only through unions and intersections, and a `$ref` to the
/// root inside `allOf`.
pub(crate) fn ref_cycle() -> Value {
    json!({
        "type": "object",
        "properties": {
            "a": {"$ref": "#/$defs/A"},
            "again": {"allOf": [{"$ref": "#"}, {"$ref": "#/$defs/C"}]}
        },
        "$defs": {
            "A": {"anyOf": [{"$ref": "#/$defs/B"}, {"type": "string"}]},
            "B": {"oneOf": [{"$ref": "#/$defs/C"}, {"$ref": "#/$defs/A"}]},
            "C": {"allOf": [{"$ref": "#/$defs/A"}, {"$ref": "#/$defs/C"}]}
        }
    })
}

/// One alias that is a union of `n` other aliases: its cycle check would visit all of them.
pub(crate) fn alias_fan_out(n: usize) -> Value {
    let mut defs = Map::new();
    let refs: Vec<Value> = (0..n)
        .map(|i| json!({"$ref": format!("#/$defs/V{i}")}))
        .collect();
    defs.insert("Any".to_owned(), json!({"anyOf": refs}));
    for i in 0..n {
        defs.insert(
            format!("V{i}"),
            json!({"anyOf": [{"const": i}, {"const": -1}]}),
        );
    }
    json!({"type": "object", "properties": {"v": {"$ref": "#/$defs/Any"}}, "$defs": defs})
}

/// `n` properties with long descriptions: more text than one declaration may take.
pub(crate) fn huge(n: usize) -> Value {
    let properties: Map<String, Value> = (0..n)
        .map(|i| {
            let description = format!("Property {i}. {}", "Long words to document. ".repeat(4));
            let schema = json!({"type": "string", "description": description});
            (format!("p{i}"), schema)
        })
        .collect();
    let required: Vec<String> = (0..n).map(|i| format!("p{i}")).collect();
    json!({"type": "object", "properties": properties, "required": required})
}

/// Keys, enum strings and docs that a careless writer would turn into broken TypeScript.
pub(crate) fn odd_names() -> Value {
    let odd = [
        "",
        "\"",
        "\\",
        "*/",
        "/*",
        "a b",
        "1st",
        "\u{2028}",
        "\u{0}",
        "é",
        "😀",
        "__proto__",
        "constructor",
        "default",
        "`${x}`",
        "</script>",
        "\\u0041",
    ];
    let properties: Map<String, Value> = odd
        .iter()
        .map(|key| {
            let schema = json!({"description": format!("Key {key} */ ends"), "enum": odd});
            ((*key).to_owned(), schema)
        })
        .collect();
    json!({"type": "object", "properties": properties, "required": ["*/", "\\"]})
}

pub(crate) fn specs<'a>(tools: &'a [(&'static str, Value)]) -> Vec<capa_typegen::ToolSpec<'a>> {
    tools
        .iter()
        .map(|(name, input)| capa_typegen::ToolSpec {
            namespace: "hostile",
            name,
            description: Some("A hostile schema. */ Not the end."),
            input_schema: input,
            output_schema: Some(input),
        })
        .collect()
}
