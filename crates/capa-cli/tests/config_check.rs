//! `capa config check FILE` prints every problem of a file at once, in the project's words, and
//! refuses input built to exhaust the reader with one clear line instead of crashing.

mod support;

use std::path::Path;
use std::process::Output;

fn check(dir: &Path, file: &Path) -> Output {
    support::in_dir(env!("CARGO_BIN_EXE_capa"), dir)
        .args(["config", "check"])
        .arg(file)
        .output()
        .expect("capa runs")
}

#[test]
fn config_check_prints_every_problem_of_the_file() {
    let dir = tempfile::tempdir().expect("tempdir");
    let file = dir.path().join("capabilities.yaml");
    std::fs::write(
        &file,
        "\
servers:
  - id: github
    type: mcp
    def:
      url: https://api.example.com/mcp
      headers:
        Authorization: \"Bearer ${secret:tok en}\"
  - id: files
    type: mcp
    def: npx server
    disabled: maybe
options:
  toolExposure: everything
  demo: false
  demo: true
  upstreamTimeoutMs: 60000
",
    )
    .expect("write");
    let out = check(dir.path(), &file);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("invalid configuration:"), "{err}");
    let shown = file.display();
    for expected in [
        format!("{shown}:5:7: bad secret placeholder"),
        format!("{shown}:10:10: `servers[1].def`: expected a map, found the text `npx server`"),
        format!("{shown}:11:15: `servers[1].disabled`: expected `true` or `false`"),
        format!("{shown}:13:17: `options.toolExposure`: `everything` is not a known value"),
        format!("{shown}:15:3: `options.demo` is defined twice (lines 14 and 15); keep one"),
        format!("{shown}:16:22: upstreamTimeoutMs is 60000, outside 1 to 30000"),
    ] {
        assert!(err.contains(&expected), "missing {expected:?} in:\n{err}");
    }
    assert_eq!(err.matches("  fix: ").count(), 6, "{err}");
    for word in [
        "DuplicateKeyPolicy",
        "Options",
        "mapping start",
        "invalid type",
        "serde",
    ] {
        assert!(!err.contains(word), "{word:?} in:\n{err}");
    }
}

#[test]
fn config_check_refuses_deep_nesting_with_one_line() {
    let dir = tempfile::tempdir().expect("tempdir");
    let file = dir.path().join("capabilities.yaml");
    let deep = 100_000;
    std::fs::write(
        &file,
        format!("tools: {}{}\n", "[".repeat(deep), "]".repeat(deep)),
    )
    .expect("write");
    let out = check(dir.path(), &file);
    let err = String::from_utf8_lossy(&out.stderr);
    // Exit code 1 is capa's own error; a stack overflow would be a signal (no code).
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains(&format!(
            "{}:1:40: the YAML here is nested deeper than 32 levels",
            file.display()
        )),
        "{err}"
    );
}
