//! Property tests of the schema → TypeScript converter over generated schemas (`common/arb.rs`).
//!
//! For any schema: `describe` and `signature_line` return (no panic, no stack overflow) text
//! within the renderer's bounds, a neighbouring tool reads exactly as without it, and, for a
//! sample, everything compiles under `tsc --strict` in one tsc run. 256 cases per property (a few
//! seconds); `PROPTEST_CASES` raises it. Failures are kept in `proptest-regressions/` and
//! replayed first; a tsc failure prints the schemas it came from.

#[path = "common/arb.rs"]
mod arb;
#[path = "common/tsc.rs"]
mod tsc;

use std::fmt::Write as _;

use capa_typegen::{
    DEFAULT_BUDGET, DescribeError, ToolSpec, declare_types, describe, signature_line,
};
use proptest::prelude::*;
use proptest::strategy::ValueTree;
use proptest::test_runner::{Config, FileFailurePersistence, TestRunner};
use serde_json::{Value, json};

/// The renderer's bound per method or declaration (`MAX_ITEM_BYTES`, docs/limits.md), plus the
/// indentation and punctuation it does not count.
const ITEM_BOUND: usize = 256 * 1024 * 3 / 2;
const UNLIMITED: usize = 100_000_000;

fn cases() -> u32 {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(256)
}

fn config() -> Config {
    Config {
        cases: cases(),
        // Proptest's default looks for the crate's lib.rs beside the test, which an integration
        // test has not.
        failure_persistence: Some(Box::new(FileFailurePersistence::Direct(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/proptest-regressions/props.txt"
        )))),
        ..Config::default()
    }
}

/// A tool with a known schema, listed before the generated one.
fn neighbour_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "q": {"type": "string", "description": "Query."},
            "page": {"type": "object", "properties": {"size": {"type": "integer"}}},
            "kind": {"$ref": "#/$defs/Kind"}
        },
        "required": ["q"],
        "$defs": {"Kind": {"enum": ["a", "b"]}}
    })
}

fn specs<'a>(neighbour: &'a Value, input: &'a Value, output: &'a Value) -> [ToolSpec<'a>; 2] {
    [
        ToolSpec {
            namespace: "gen",
            name: "neighbour",
            description: Some("A tool that is not generated."),
            input_schema: neighbour,
            output_schema: None,
        },
        ToolSpec {
            namespace: "gen",
            name: "generated",
            description: Some("Generated. */ Not the end."),
            input_schema: input,
            output_schema: Some(output),
        },
    ]
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn any_schema_describes_within_bounds_and_leaves_its_neighbour_alone(
        input in arb::document(),
        output in arb::document(),
    ) {
        let neighbour = neighbour_schema();
        let specs = specs(&neighbour, &input, &output);
        let full = describe(&specs, &["gen".to_owned()], UNLIMITED)
            .map_err(|e| TestCaseError::fail(e.to_string()))?;
        // Two methods, a result type, and the named types they use: each item bounded.
        let items = 3 + full.declared.len();
        prop_assert!(full.text.len() <= items * ITEM_BOUND, "{} bytes", full.text.len());
        prop_assert!(full.not_shown.is_empty());
        match describe(&specs, &["gen.generated".to_owned()], DEFAULT_BUDGET) {
            Ok(short) => prop_assert!(short.tokens <= DEFAULT_BUDGET),
            Err(DescribeError::BudgetTooSmall { .. }) => {}
            Err(e) => prop_assert!(false, "{}", e),
        }
        let line = signature_line(&specs[1], 220);
        prop_assert!(line.chars().count() <= 220, "{}", line);
        prop_assert!(line.starts_with("gen.generated("), "{}", line);
        // The neighbour comes first in catalog order: its text cannot depend on the other tool.
        let target = ["gen.neighbour".to_owned()];
        let alone = describe(&specs[..1], &target, UNLIMITED).map_err(|e| TestCaseError::fail(e.to_string()))?;
        let beside = describe(&specs, &target, UNLIMITED).map_err(|e| TestCaseError::fail(e.to_string()))?;
        prop_assert_eq!(alone.text, beside.text);
    }
}

/// How many generated namespaces go into the one tsc run.
fn tsc_sample() -> usize {
    (cases() as usize / 4).max(8)
}

#[test]
fn a_sample_of_generated_schemas_compiles_with_tsc() {
    let Some(mut project) = tsc::Project::new() else {
        return;
    };
    let mut runner = TestRunner::new(Config::default());
    let strategy = (arb::document(), arb::document());
    let neighbour = neighbour_schema();
    let mut schemas = Vec::new();
    for i in 0..tsc_sample() {
        let (input, output) = strategy
            .new_tree(&mut runner)
            .expect("generate a schema")
            .current();
        let specs = specs(&neighbour, &input, &output);
        let target = ["gen".to_owned()];
        let full = describe(&specs, &target, UNLIMITED).expect("full description");
        project.add(&format!("s{i}-full.ts"), &full.text);
        // The budgeted form, completed with the types it refers to but does not show.
        if let Ok(short) = describe(&specs, &target, 600) {
            let mut text = short.text;
            let rest = declare_types(&specs, &short.not_shown, &short.declared)
                .expect("declarations of not-shown types");
            let _ = write!(text, "// Completion for the type check:\n{rest}");
            project.add(&format!("s{i}-budget.ts"), &text);
        }
        schemas.push((input, output));
    }
    let checked = project.check();
    if checked.errors.is_empty() {
        return;
    }
    // Name the schemas of the failing files, so a failure can be turned into a fixed case.
    let mut report = String::new();
    for error in checked.errors.iter().take(20) {
        let _ = writeln!(report, "{error}");
    }
    let mut failing: Vec<usize> = checked
        .errors
        .iter()
        .filter_map(|e| e.strip_prefix('s')?.split('-').next()?.parse().ok())
        .collect();
    failing.dedup();
    for i in failing.into_iter().take(3) {
        let (input, output) = &schemas[i];
        let _ = writeln!(report, "s{i}: input {input}\n     output {output}");
    }
    panic!(
        "tsc reported {} errors:\n{report}{}",
        checked.errors.len(),
        checked.stderr
    );
}
