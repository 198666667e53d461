//! Hostile schemas (see `common/hostile.rs`): each is cut at its bound into `unknown` with a note
//! saying why, quickly, and the other tools of the namespace read exactly as without it.

use capa_typegen::{DEFAULT_BUDGET, ToolSpec, describe, signature_line};
use serde_json::Value;

use crate::constructs::{self, constructs};
use crate::hostile::{self, hostile};

/// The renderer's bound per method or declaration (`MAX_ITEM_BYTES`, docs/limits.md), plus the
/// indentation and punctuation it does not count.
const ITEM_BOUND: usize = 256 * 1024 * 3 / 2;

fn describe_hostile(tool: &str) -> String {
    let tools = hostile();
    let specs = hostile::specs(&tools);
    match describe(&specs, &[format!("hostile.{tool}")], 100_000_000) {
        Ok(description) => description.text,
        Err(e) => panic!("{tool}: {e}"),
    }
}

#[test]
fn each_hostile_schema_is_cut_at_its_bound_with_a_note() {
    for (tool, note) in [
        (
            "wide_deep",
            "unsupported schema: schema has over 5000 parts",
        ),
        (
            "ref_chain",
            "unsupported schema: nested deeper than 32 levels",
        ),
        ("ref_cycle", "unsupported schema: circular alias"),
        ("alias_fan_out", "unsupported schema: alias too complex"),
        ("huge", "too large to show: over 256 KiB of declarations"),
    ] {
        let text = describe_hostile(tool);
        assert!(text.contains(&format!("unknown /* {note} */")), "{tool}");
    }
    // Cut for size, the object stays valid: the properties not written are admitted by an index.
    let huge = describe_hostile("huge");
    assert!(huge.contains("\t[key: string]: unknown /* too large to show"));
    assert!(huge.contains("\tp0: string;\n"));
    // The input is cut; the result is a declaration of its own, cut the same way.
    assert!(huge.contains("}, options?: CallOptions): Promise<hostile.HugeResult>;\n"));
    assert!(huge.contains("\tinterface HugeResult {\n"));
    assert_eq!(huge.matches("too large to show").count(), 2);
    assert!(
        huge.len() < 2 * ITEM_BOUND,
        "input and result: {}",
        huge.len()
    );
}

#[test]
fn an_index_that_would_repeat_its_children_does_not_double_per_level() {
    // Thirty levels once wrote the innermost object 2^30 times; now each object once: 16 of
    // them (two schema levels each, up to the bound of 32) in the input and 16 in the result.
    let text = describe_hostile("doubling");
    assert!(text.len() < 20_000, "{} bytes", text.len());
    assert_eq!(text.matches("a?: {").count(), 2 * 16, "{text}");
    assert!(!text.contains("too large to show"), "{text}");
}

#[test]
fn every_hostile_tool_describes_and_signs_within_bounds_at_any_budget() {
    let tools = hostile();
    let specs = hostile::specs(&tools);
    for spec in &specs {
        let target = [format!("hostile.{}", spec.name)];
        let full = describe(&specs, &target, 100_000_000).expect("full");
        // A method and a result type, each bounded, plus the named types they use.
        let items = 2 + full.declared.len();
        assert!(full.text.len() <= items * ITEM_BOUND, "{}", spec.name);
        if let Ok(short) = describe(&specs, &target, DEFAULT_BUDGET) {
            assert!(short.tokens <= DEFAULT_BUDGET);
        }
        let line = signature_line(spec, 220);
        assert!(line.chars().count() <= 220, "{line}");
    }
}

#[test]
fn other_tools_of_the_namespace_are_unchanged() {
    // The construct tools first, the hostile ones after them in the same namespace.
    let good = constructs();
    let bad = hostile();
    let alone = constructs::specs(&good);
    let mut mixed = alone.clone();
    mixed.extend(hostile::specs(&bad).into_iter().map(|spec| ToolSpec {
        namespace: "demo",
        ..spec
    }));
    for spec in &alone {
        let target = [format!("demo.{}", spec.name)];
        let expected = describe(&alone, &target, 100_000_000).expect("alone");
        let got = describe(&mixed, &target, 100_000_000).expect("mixed");
        assert_eq!(got.text, expected.text, "{}", spec.name);
    }
}

#[test]
fn a_schema_nested_a_hundred_thousand_levels_is_described_on_a_small_stack() {
    // serde_json's own `Drop` of such a value recurses: it is built and dropped on a thread
    // with a large stack, and described on one with tokio's default worker stack (2 MiB).
    let big_stack = std::thread::Builder::new().stack_size(512 << 20);
    let outcome = big_stack.spawn(|| {
        let mut deep = serde_json::json!({"type": "string"});
        for i in 0..100_000 {
            // Not `json!`, which copies (recursively) the value it is given.
            let key = ["properties", "items", "anyOf"][i % 3];
            let inner = match key {
                "properties" => Value::Object([("x".to_owned(), deep)].into_iter().collect()),
                "anyOf" => Value::Array(vec![deep]),
                _ => deep,
            };
            let mut map = serde_json::Map::new();
            map.insert(key.to_owned(), inner);
            map.insert("default".to_owned(), Value::Null);
            deep = Value::Object(map);
        }
        let worker = std::thread::Builder::new().stack_size(2 << 20);
        let described = worker.spawn(move || {
            let spec = ToolSpec {
                namespace: "deep",
                name: "t",
                description: None,
                input_schema: &deep,
                output_schema: Some(&deep),
            };
            let text = describe(&[spec], &["deep".to_owned()], 100_000_000).map(|d| d.text);
            let line = signature_line(&spec, 220);
            (text, line, deep)
        });
        described.map(|t| t.join().map(|(text, line, _deep)| (text, line)))
    });
    let (text, line) = outcome
        .expect("spawn")
        .join()
        .expect("join")
        .expect("spawn")
        .expect("no stack overflow");
    let text = text.expect("describe");
    assert!(text.contains("unsupported schema: nested deeper than 32 levels"));
    assert!(line.starts_with("deep.t(input"), "{line}");
}
