//! Every schema of every catalog must yield declarations that the real TypeScript compiler
//! accepts under `--strict`: each namespace described in full (a budget so large that nothing
//! is dropped) and at the default budget.
//!
//! Budgeted output refers to types it does not declare (`github.CreateIssueInputLabels`). To
//! check it soundly, each budget file also gets `declare_types(not_shown, exclude = declared)`:
//! the full declarations of exactly the types the output references without declaring, plus
//! the named types they use that the output did not already declare. The two parts merge into
//! one `declare namespace`, so a reference that resolves nowhere, or a type declared twice,
//! still fails.
//!
//! Each file is a module (`export {};`), so namespaces of the same name in different files do
//! not clash, and `CallOptions` is declared once per file. tsc runs once over all files.
//!
//! tsc: `CAPA_TSC` (path to the binary), else `<repo>/node_modules/.bin/tsc`; missing tsc fails
//! the test unless `CAPA_SKIP_TSC=1`.

#[path = "common/catalogs.rs"]
mod catalogs;
#[path = "common/constructs.rs"]
mod constructs;

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use capa_typegen::{DEFAULT_BUDGET, declare_types, describe};

/// Large enough that no namespace of the catalogs is shortened.
const UNLIMITED: usize = 10_000_000;

fn tsc_path() -> Option<PathBuf> {
    if let Some(path) = std::env::var_os("CAPA_TSC") {
        return Some(PathBuf::from(path));
    }
    let repo = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let local = repo.join("node_modules/.bin/tsc");
    local.exists().then_some(local)
}

#[test]
fn every_catalog_schema_compiles_with_tsc() {
    if std::env::var("CAPA_SKIP_TSC").as_deref() == Ok("1") {
        eprintln!("CAPA_SKIP_TSC=1: not type-checking the generated declarations");
        return;
    }
    let Some(tsc) = tsc_path() else {
        panic!(
            "tsc not found: set CAPA_TSC to a tsc binary or `npm install` typescript in the \
             repository (node_modules/.bin/tsc); CAPA_SKIP_TSC=1 skips this test"
        );
    };
    let dir = tempfile::tempdir().expect("temp dir");
    let started = Instant::now();
    let (mut files, mut tools_checked) = (0, 0);
    for file in catalogs::FILES {
        let tools = catalogs::load(file);
        let specs = catalogs::specs(&tools);
        tools_checked += specs.len();
        let out = dir.path().join(file);
        std::fs::create_dir_all(&out).expect("catalog dir");
        // Each namespace on its own: its declarations depend on nothing else (no catalog has
        // namespaces whose global names clash), and debug builds stay fast.
        for (i, specs) in catalogs::namespaces(&specs).into_iter().enumerate() {
            let ns = specs[0].namespace;
            let target = [ns.to_owned()];
            let full = describe(specs, &target, UNLIMITED).expect("full description");
            assert!(
                full.not_shown.is_empty(),
                "{ns}: unlimited output left types out"
            );
            write(&out.join(format!("full{i}.ts")), &full.text);

            let short = describe(specs, &target, DEFAULT_BUDGET).expect("budget description");
            let mut text = short.text;
            if !short.not_shown.is_empty() {
                let rest = declare_types(specs, &short.not_shown, &short.declared)
                    .expect("declarations of not-shown types");
                let _ = write!(text, "// Completion for the type check:\n{rest}");
            }
            write(&out.join(format!("budget{i}.ts")), &text);
            files += 2;
        }
    }
    // The hand-written constructs, in full and at a tight budget.
    let tools = constructs::constructs();
    let specs = constructs::specs(&tools);
    let target = ["demo".to_owned()];
    let full = describe(&specs, &target, UNLIMITED).expect("constructs");
    write(&dir.path().join("constructs.ts"), &full.text);
    let short = describe(&specs, &target, 600).expect("constructs at 600 tokens");
    let rest = declare_types(&specs, &short.not_shown, &short.declared).expect("completion");
    write(
        &dir.path().join("constructs-short.ts"),
        &format!("{}{rest}", short.text),
    );
    files += 2;
    // A strict-only error (implicit any) proves tsc ran over these files in strict mode.
    write(
        &dir.path().join("canary.ts"),
        "export function canary(a) { return a; }\n",
    );
    let generated = started.elapsed();
    std::fs::write(
        dir.path().join("tsconfig.json"),
        r#"{
  "compilerOptions": {
    "strict": true,
    "noEmit": true,
    "skipLibCheck": false,
    "target": "ES2022",
    "lib": ["es2022"],
    "types": []
  },
  "include": ["**/*.ts"]
}
"#,
    )
    .expect("tsconfig");
    let started = Instant::now();
    let output = Command::new(&tsc)
        .current_dir(dir.path())
        .arg("-p")
        .arg(".")
        .arg("--pretty")
        .arg("false")
        .output()
        .unwrap_or_else(|e| panic!("cannot run {}: {e}", tsc.display()));
    let stdout = String::from_utf8_lossy(&output.stdout);
    eprintln!(
        "tsc checked {files} files for {tools_checked} tools (generated in {generated:.1?}, \
         tsc took {:.1?})",
        started.elapsed()
    );
    let errors: Vec<&str> = stdout
        .lines()
        .filter(|l| l.contains("error TS") && !l.starts_with("canary.ts("))
        .collect();
    assert!(
        stdout
            .lines()
            .any(|l| l.starts_with("canary.ts(") && l.contains("TS7006")),
        "tsc did not report the canary's implicit any; did it check the files?\n{stdout}"
    );
    if !errors.is_empty() {
        let shown: Vec<&str> = errors.iter().take(30).copied().collect();
        // Keep the files for a look when asked.
        if std::env::var_os("CAPA_KEEP_TSC_DIR").is_some() {
            eprintln!("files kept in {}", dir.keep().display());
        }
        panic!(
            "tsc reported {} errors; the first {}:\n{}\n{}",
            errors.len(),
            shown.len(),
            shown.join("\n"),
            String::from_utf8_lossy(&output.stderr)
        );
    }
}

fn write(path: &Path, text: &str) {
    std::fs::write(path, format!("export {{}};\n{text}")).expect("write generated file");
}
