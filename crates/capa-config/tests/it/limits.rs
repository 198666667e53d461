//! Input built to exhaust the reader: nesting 100,000 deep and aliases that expand
//! exponentially ("billion laughs"). Each must end in one clear problem with its line, quickly,
//! without overflowing the stack (which would abort the test binary) or filling memory.

use std::path::Path;

use capa_config::{ConfigError, parse_policy_str, parse_str};

const DEEP: usize = 100_000;

fn error_of(text: &str) -> ConfigError {
    match parse_str(Path::new("/p/capabilities.yaml"), text) {
        Ok(_) => panic!("parsed, expected a problem"),
        Err(e) => e,
    }
}

fn assert_too_deep(err: &ConfigError, line: u64) {
    let issues = err.issues();
    assert_eq!(issues.len(), 1, "{err}");
    assert_eq!(issues[0].position.line, line, "{err}");
    assert!(
        issues[0]
            .message
            .contains("nested deeper than 32 levels of lists and maps"),
        "{err}"
    );
}

#[test]
fn lists_nested_100000_deep_are_refused_at_their_line() {
    let text = format!(
        "servers:\n  - id: a\n    type: mcp\n    def:\n      command: x\n      args: {}{}\n",
        "[".repeat(DEEP),
        "]".repeat(DEEP)
    );
    assert_too_deep(&error_of(&text), 6);
}

#[test]
fn maps_nested_100000_deep_are_refused_at_their_line() {
    let text = format!("options: {}1{}\n", "{a: ".repeat(DEEP), "}".repeat(DEEP));
    assert_too_deep(&error_of(&text), 1);
    // The policy file is read by the same reader.
    let policy = format!(
        "rules:\n  - match: {}x{}\n",
        "{a: ".repeat(DEEP),
        "}".repeat(DEEP)
    );
    let err = parse_policy_str(Path::new("/cfg/policy.yaml"), &policy).expect_err("too deep");
    assert_too_deep(&err, 2);
}

#[test]
fn block_nesting_past_the_limit_is_refused_and_just_under_it_is_read() {
    // Block style needs its indentation, so 100,000 levels would be gigabytes; the limit is
    // the same for both styles.
    let deep = (0..40)
        .map(|level| format!("{}a:\n", " ".repeat(level * 2)))
        .collect::<String>();
    assert_too_deep(&error_of(&deep), 33);
    // 32 levels are read: the file is then refused for what it says, not for its depth.
    let at_limit = format!("tools: {}{}\n", "[".repeat(31), "]".repeat(31));
    let err = error_of(&at_limit);
    assert!(
        err.to_string()
            .contains("`tools[0]`: expected a map, found a list"),
        "{err}"
    );
}

#[test]
fn an_alias_referring_to_itself_is_refused() {
    // An anchor is defined once its value ends, so an alias inside it refers to nothing yet.
    let err = error_of("servers: &a [*a]\n");
    assert_eq!(err.issues().len(), 1, "{err}");
    assert!(
        err.issues()[0].message.contains("would contain itself"),
        "{err}"
    );
}

/// Nine levels of nine aliases: 9^9 (387 million) strings once expanded.
fn billion_laughs(key: &str) -> String {
    let mut text = String::from("x:\n  - &l0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n");
    for level in 1..9 {
        let p = level - 1;
        let refs = vec![format!("*l{p}"); 9].join(", ");
        text.push_str(&format!("  - &l{level} [{refs}]\n"));
    }
    text.push_str(&format!("{key}: *l8\n"));
    text
}

#[test]
fn billion_laughs_expands_to_too_much_and_says_where() {
    let text = billion_laughs("servers");
    let err = error_of(&text);
    let issues = err.issues();
    assert_eq!(issues.len(), 1, "{err}");
    let issue = &issues[0];
    // Expansion stops at the first alias that would cross the limit, well before the last line.
    assert!(
        issue.position.line >= 2 && issue.position.line <= 11,
        "{err}"
    );
    assert!(
        issue
            .message
            .starts_with("the YAML expands to too much here"),
        "{err}"
    );
    assert!(issue.message.contains("100000 values"), "{err}");
    assert!(issue.fix.is_some(), "{err}");
    let policy = parse_policy_str(Path::new("/cfg/policy.yaml"), &billion_laughs("rules"))
        .expect_err("too much");
    assert!(
        policy.to_string().contains("expands to too much"),
        "{policy}"
    );
}

#[test]
fn a_modest_anchor_used_many_times_is_read() {
    // Real files reuse a block a few dozen times; that stays far below the limit.
    let mut text =
        String::from("x-defaults: &local\n  command: npx\n  env: { LEVEL: warn }\nservers:\n");
    for i in 0..50 {
        text.push_str(&format!(
            "  - id: s{i}\n    type: mcp\n    def:\n      <<: *local\n      args: [server-{i}]\n"
        ));
    }
    let err = error_of(&text);
    // Only the made-up top-level key is wrong.
    assert_eq!(err.issues().len(), 1, "{err}");
    assert!(
        err.to_string()
            .contains("unknown field `x-defaults` in the file"),
        "{err}"
    );
}

#[test]
fn a_file_larger_than_the_reader_takes_is_refused_without_reading_it_all() {
    let dir = tempfile::tempdir().expect("tempdir");
    let file = dir.path().join("capabilities.yaml");
    // 17 MiB of comment: valid YAML, just too much of it.
    let line = format!("#{}\n", "x".repeat(1023));
    std::fs::write(&file, line.repeat(17 * 1024)).expect("write");
    let err = capa_config::load_file(&file).expect_err("too large");
    assert_eq!(err.issues().len(), 1, "{err}");
    assert!(
        err.issues()[0].message.starts_with("the file is too large"),
        "{err}"
    );
}
