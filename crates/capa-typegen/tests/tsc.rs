//! Every schema of every catalog must yield declarations that the real TypeScript compiler
//! accepts under `--strict`: each namespace described in full (a budget so large that nothing
//! is dropped) and at the default budget; so must the hand-written constructs and the hostile
//! schemas (`common/hostile.rs`), whose cut parts are `unknown` with a note.
//!
//! Budgeted output refers to types it does not declare (`github.CreateIssueInputLabels`). To
//! check it soundly, each budget file also gets `declare_types(not_shown, exclude = declared)`:
//! the full declarations of exactly the types the output references without declaring, plus
//! the named types they use that the output did not already declare. The two parts merge into
//! one `declare namespace`, so a reference that resolves nowhere, or a type declared twice,
//! still fails.
//!
//! tsc runs once over all files (`common/tsc.rs`).

#[path = "common/catalogs.rs"]
mod catalogs;
#[path = "common/constructs.rs"]
mod constructs;
#[path = "common/hostile.rs"]
mod hostile;
#[path = "common/tsc.rs"]
mod tsc;

use std::fmt::Write as _;
use std::time::Instant;

use capa_typegen::{DEFAULT_BUDGET, ToolSpec, declare_types, describe};

/// Large enough that no namespace of the catalogs is shortened.
const UNLIMITED: usize = 10_000_000;

#[test]
fn every_catalog_schema_compiles_with_tsc() {
    let Some(mut project) = tsc::Project::new() else {
        return;
    };
    let started = Instant::now();
    let mut tools_checked = 0;
    for file in catalogs::FILES {
        let tools = catalogs::load(file);
        let specs = catalogs::specs(&tools);
        tools_checked += specs.len();
        // Each namespace on its own: its declarations depend on nothing else (no catalog has
        // namespaces whose global names clash), and debug builds stay fast.
        for (i, specs) in catalogs::namespaces(&specs).into_iter().enumerate() {
            let ns = specs[0].namespace;
            add_namespace(
                &mut project,
                &format!("{file}/{i}"),
                specs,
                ns,
                DEFAULT_BUDGET,
            );
        }
    }
    // The hand-written constructs, in full and at a tight budget.
    let tools = constructs::constructs();
    add_namespace(
        &mut project,
        "constructs",
        &constructs::specs(&tools),
        "demo",
        600,
    );
    let tools = hostile::hostile();
    add_namespace(
        &mut project,
        "hostile",
        &hostile::specs(&tools),
        "hostile",
        600,
    );
    let generated = started.elapsed();
    let started = Instant::now();
    let files = project.files;
    let checked = project.check();
    eprintln!(
        "tsc checked {files} files for {tools_checked} tools (generated in {generated:.1?}, \
         tsc took {:.1?})",
        started.elapsed()
    );
    if !checked.errors.is_empty() {
        let shown: Vec<&str> = checked.errors.iter().take(30).map(String::as_str).collect();
        panic!(
            "tsc reported {} errors; the first {}:\n{}\n{}",
            checked.errors.len(),
            shown.len(),
            shown.join("\n"),
            checked.stderr
        );
    }
}

/// `<prefix>-full.ts`, the namespace described in full, and `<prefix>-budget.ts`, described
/// within `budget` and completed with the types it refers to but does not show.
fn add_namespace(
    project: &mut tsc::Project,
    prefix: &str,
    specs: &[ToolSpec],
    ns: &str,
    budget: usize,
) {
    let target = [ns.to_owned()];
    let full = describe(specs, &target, UNLIMITED).expect("full description");
    assert!(
        full.not_shown.is_empty(),
        "{ns}: unlimited output left types out"
    );
    project.add(&format!("{prefix}-full.ts"), &full.text);
    let short = describe(specs, &target, budget).expect("budget description");
    let mut text = short.text;
    if !short.not_shown.is_empty() {
        let rest = declare_types(specs, &short.not_shown, &short.declared)
            .expect("declarations of not-shown types");
        let _ = write!(text, "// Completion for the type check:\n{rest}");
    }
    project.add(&format!("{prefix}-budget.ts"), &text);
}
