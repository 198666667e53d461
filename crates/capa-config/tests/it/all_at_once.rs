//! Every problem of a file in one error, each at its line, in the project's words: what the
//! reader finds in the shape (unknown fields, wrong types, bad values, keys written twice) and
//! what the rules find (secret references, ids) come together.

use std::path::Path;

use capa_config::{ConfigError, parse_policy_str, parse_str};

const FILE: &str = "/home/me/project/capabilities.yaml";

fn error_of(text: &str) -> ConfigError {
    match parse_str(Path::new(FILE), text) {
        Ok(_) => panic!("parsed, expected problems:\n{text}"),
        Err(e) => e,
    }
}

/// Words of serde, serde-saphyr or Rust types that must never reach a person.
const LIBRARY_WORDS: &[&str] = &[
    "DuplicateKeyPolicy",
    "Options",
    "from_str",
    "Option<",
    "u64",
    "i64",
    "mapping start",
    "sequence start",
    "scalar",
    "variant",
    "serde",
    "struct ",
    "deserializ",
    "budget",
];

fn assert_project_words(shown: &str) {
    for word in LIBRARY_WORDS {
        assert!(!shown.contains(word), "library word {word:?} in:\n{shown}");
    }
}

#[test]
fn five_different_problems_come_in_one_error_each_at_its_line() {
    let text = "\
servers:
  - id: github
    type: mcp
    def:
      url: https://api.example.com/mcp
      headers:
        Authorization: \"Bearer ${secret:tok en}\"
  - id: files
    type: mcp
    def:
      command: npx
      comand: npx
    disabled: maybe
options:
  toolExposure: everything
  demo: false
  demo: true
";
    let err = error_of(text);
    let shown = err.to_string();
    let found: Vec<(u64, &str)> = err
        .issues()
        .iter()
        .map(|i| (i.position.line, i.message.as_str()))
        .collect();
    let expected: &[(u64, &str)] = &[
        (5, "bad secret placeholder: secret name \"tok en\""),
        (12, "unknown field `comand` in `servers[1].def`"),
        (
            13,
            "`servers[1].disabled`: expected `true` or `false`, found the text `maybe`",
        ),
        (
            15,
            "`options.toolExposure`: `everything` is not a known value",
        ),
        (
            17,
            "`options.demo` is defined twice (lines 16 and 17); keep one",
        ),
    ];
    assert_eq!(found.len(), expected.len(), "{shown}");
    for ((line, message), (want_line, want)) in found.iter().zip(expected) {
        assert_eq!(line, want_line, "{shown}");
        assert!(
            message.starts_with(want),
            "{message:?} should start with {want:?}"
        );
    }
    assert!(
        err.issues().iter().all(|i| i.fix.is_some()),
        "each has a fix: {shown}"
    );
    // One value whose Display lists them all, each as file:line:column.
    for (line, _) in expected {
        assert!(shown.contains(&format!("{FILE}:{line}:")), "{shown}");
    }
    assert_project_words(&shown);
}

#[test]
fn a_key_written_twice_names_its_path_and_both_lines() {
    let text = "servers:\n  - id: a\n    type: mcp\n    def:\n      command: x\n      env:\n        TOKEN: one\n        LEVEL: warn\n        TOKEN: two\n";
    let err = error_of(text);
    assert_eq!(
        err.to_string(),
        format!(
            "{FILE}:9:9: `servers[0].def.env.TOKEN` is defined twice (lines 7 and 9); keep one\n  \
             fix: delete one of the two: a key holds one value, and YAML does not say which one wins"
        )
    );
    let top = error_of("servers: []\noptions: {}\nservers: []\n");
    assert!(
        top.to_string()
            .contains(":3:1: `servers` is defined twice (lines 1 and 3); keep one"),
        "{top}"
    );
}

#[test]
fn a_type_error_says_what_was_expected_and_found_without_a_syntax_hint() {
    let err = error_of("servers:\n  - id: a\n    type: mcp\n    def: npx server\n");
    let shown = err.to_string();
    assert_eq!(
        err.issues().len(),
        1,
        "the empty stand-in adds nothing: {shown}"
    );
    let issue = &err.issues()[0];
    assert_eq!((issue.position.line, issue.position.column), (4, 10));
    assert_eq!(
        issue.message,
        "`servers[0].def`: expected a map, found the text `npx server`"
    );
    let fix = issue.fix.as_deref().unwrap_or_default();
    assert!(
        fix.contains("write the fields of `def` on the lines below it"),
        "{fix}"
    );
    for hint in ["syntax", "quote", "bracket"] {
        assert!(!fix.contains(hint), "a type error has no YAML hint: {fix}");
    }

    let list = error_of("servers: npx\n");
    assert!(
        list.to_string()
            .contains(":1:10: `servers`: expected a list, found the text `npx`"),
        "{list}"
    );
    let nothing = error_of("servers:\n");
    assert!(
        nothing
            .to_string()
            .contains("`servers`: expected a list, found nothing"),
        "{nothing}"
    );
}

#[test]
fn a_broken_entry_does_not_hide_the_next_ones() {
    // The first server is not a map and the second lacks `def`; the third's reserved id is still
    // found, and the stand-ins put in for the first two add no problems of their own.
    let text = "servers:\n  - just text\n  - id: b\n    type: mcp\n  - id: hub\n    type: mcp\n    def: { command: x }\nskills:\n  - id: s\n    requires: ['@b']\n";
    let err = error_of(text);
    let lines: Vec<(u64, &str)> = err
        .issues()
        .iter()
        .map(|i| (i.position.line, i.message.as_str()))
        .collect();
    assert_eq!(
        lines,
        [
            (
                2,
                "`servers[0]`: expected a map, found the text `just text`"
            ),
            (3, "missing field `def` in `servers[1]`"),
            (5, "server id `hub` is reserved by the hub"),
            (9, "missing field `description` in `skills[0]`"),
        ],
        "{err}"
    );
}

#[test]
fn a_misspelt_needed_field_is_one_problem_not_two() {
    let err = error_of("servers:\n  - id: a\n    typ: mcp\n    def: { command: x }\n");
    assert_eq!(err.issues().len(), 1, "{err}");
    assert!(err.to_string().contains("did you mean `type`?"), "{err}");
}

#[test]
fn an_unreadable_expose_does_not_make_up_a_tools_problem() {
    let err = error_of(
        "servers:\n  - id: a\n    type: mcp\n    expose: exept\n    tools: [x]\n    def: { command: x }\n",
    );
    assert_eq!(err.issues().len(), 1, "{err}");
    assert!(
        err.issues()[0]
            .fix
            .as_deref()
            .is_some_and(|f| f.contains("`all`, `except`, `exactly`, `none`")),
        "{err}"
    );
}

#[test]
fn yaml_that_cannot_be_read_reports_one_syntax_problem_with_its_line() {
    let cases: &[(&str, u64, &str)] = &[
        ("servers: [a, b\n", 1, "`[` is not closed"),
        ("servers:\n  - {id: a\n", 2, "`{` is not closed"),
        ("servers:\n\t- id: a\n", 2, "a tab is used to indent"),
        (
            "servers: []\n---\nservers: []\n",
            2,
            "a second YAML document starts here",
        ),
        (
            "servers: *missing\n",
            1,
            "an alias (`*name`) refers to no anchor",
        ),
        ("a: 'open\n", 1, "a quoted value is not closed"),
    ];
    for (text, line, message) in cases {
        let err = error_of(text);
        let shown = err.to_string();
        assert_eq!(err.issues().len(), 1, "{shown}");
        assert_eq!(err.issues()[0].position.line, *line, "{text:?}: {shown}");
        assert!(
            err.issues()[0].message.starts_with(message),
            "{text:?}: {shown}"
        );
        assert_project_words(&shown);
    }
}

#[test]
fn no_problem_the_reader_reports_uses_library_words() {
    let texts = [
        "servers:\n  - id: ~\n    type: mcp\n    def: { command: x }\n",
        "options:\n  upstreamTimeoutMs: -5\n",
        "options:\n  upstreamTimeoutMs: '20000'\n  approvalTtlMs: 1.5\n",
        "options:\n  demo: [true]\n",
        "servers:\n  - id: a\n    type: [mcp]\n    def: { command: x, args: [[x]], env: { A: { b: c } } }\n",
        "[a]: 1\n",
        "- a\n- b\n",
        "servers:\n  - <<: 5\n    id: a\n",
        "tools:\n  - server: a\n",
    ];
    for text in texts {
        let shown = error_of(text).to_string();
        assert_project_words(&shown);
        assert!(shown.contains("fix: "), "{shown}");
    }
}

#[test]
fn anchors_and_merges_work_as_yaml_defines_them() {
    let text = "\
servers:
  - id: a
    type: mcp
    def: &local
      command: npx
      env: { LEVEL: warn }
  - id: b
    type: mcp
    def:
      <<: *local
      args: [server-b]
";
    let checked = parse_str(Path::new(FILE), text).expect("valid");
    assert_eq!(checked.sources.len(), 2);
}

#[test]
fn the_policy_file_reports_all_its_problems_at_once_too() {
    let text = "rules:\n  - match: github\n    decision: maybe\n  - match: demo\n    decision: ask\n    when: always\n  - match: demo\n    decision: deny\n  - match: [a]\n    decision: ask\n";
    let err = parse_policy_str(Path::new("/cfg/policy.yaml"), text).expect_err("problems");
    let lines: Vec<u64> = err.issues().iter().map(|i| i.position.line).collect();
    assert_eq!(lines, [3, 6, 7, 9], "{err}");
    let shown = err.to_string();
    assert!(shown.contains("unknown decision `maybe`"), "{shown}");
    assert!(
        shown.contains("unknown field `when` in `rules[1]`"),
        "{shown}"
    );
    assert!(
        shown.contains("a rule for `demo` is already on line 4"),
        "{shown}"
    );
    assert!(
        shown.contains("`rules[3].match`: expected text, found a list"),
        "{shown}"
    );
    assert!(shown.contains("docs/policies.md"), "{shown}");
    assert_project_words(&shown);
}

#[test]
fn a_file_with_very_many_problems_lists_a_hundred_and_counts_the_rest() {
    let text: String = (0..150).map(|i| format!("field{i}: x\n")).collect();
    let err = error_of(&text);
    let issues = err.issues();
    assert_eq!(issues.len(), 101, "{err}");
    assert_eq!(issues[99].position.line, 100);
    assert_eq!(issues[100].message, "and 50 more problems");
}
