//! The policy file: every mistake named by line and column with its fix, and what capa writes
//! reads back as the same rules.

use std::path::Path;

use capa_config::{
    PolicyDecision, PolicyRule, load_policy_file, parse_policy_str, render_policy,
    reset_all_policy_rules, reset_policy_rule, set_policy_rule,
};

fn error_of(text: &str) -> String {
    parse_policy_str(Path::new("/cfg/policy.yaml"), text)
        .expect_err("refused")
        .to_string()
}

fn rule(pattern: &str, connection: Option<&str>, decision: PolicyDecision) -> PolicyRule {
    PolicyRule {
        pattern: pattern.to_owned(),
        connection: connection.map(str::to_owned),
        decision,
    }
}

#[test]
fn an_unknown_decision_names_its_line_and_the_values() {
    assert_eq!(
        error_of("rules:\n  - match: github.delete_*\n    decision: maybe\n"),
        "/cfg/policy.yaml:3:15: unknown decision `maybe`\n  fix: use allow, ask or deny"
    );
}

#[test]
fn bad_patterns_and_connections_are_each_reported() {
    let text = "rules:\n  - match: ''\n    decision: deny\n  - match: GitHub.x\n    decision: ask\n  - match: github.\n    decision: ask\n  - match: github\n    connection: Work\n    decision: ask\n";
    assert_eq!(
        error_of(text),
        "/cfg/policy.yaml:2:12: the pattern is empty\n  \
         fix: write a tool address (`github.create_issue`), a source (`github` or `github.*`), a glob (`github.delete_*`) or `*`\n\
         /cfg/policy.yaml:4:12: `GitHub.x` is not a valid policy pattern: the source part takes lower-case letters, digits, `-`, `_` and `*`, starting with a letter or `*`\n  \
         fix: write a tool address (`github.create_issue`), a source (`github` or `github.*`), a glob (`github.delete_*`) or `*`\n\
         /cfg/policy.yaml:6:12: `github.` is not a valid policy pattern: nothing follows the `.`\n  \
         fix: write a tool address (`github.create_issue`), a source (`github` or `github.*`), a glob (`github.delete_*`) or `*`\n\
         /cfg/policy.yaml:9:17: `Work` is not a valid connection name\n  \
         fix: use lower-case letters, digits, `-` and `_` (at most 64 characters), as `capa connections list` shows them"
    );
}

#[test]
fn a_source_written_twice_is_a_duplicate_but_another_connection_is_not() {
    let text = "rules:\n  - match: github\n    decision: ask\n  - match: github\n    connection: work\n    decision: deny\n  - match: github.*\n    decision: allow\n";
    assert_eq!(
        error_of(text),
        "/cfg/policy.yaml:7:12: a rule for `github.*` is already on line 2\n  fix: keep one rule per pattern and connection"
    );
}

#[test]
fn shape_errors_point_at_the_policy_docs() {
    let unknown = error_of("rules:\n  - match: github\n    decison: ask\n");
    assert!(unknown.starts_with("/cfg/policy.yaml:3:"), "{unknown}");
    assert!(unknown.contains("unknown field"), "{unknown}");
    assert!(unknown.contains("docs/policies.md"), "{unknown}");
    let star = error_of("rules:\n  - match: *\n    decision: deny\n");
    assert!(star.starts_with("/cfg/policy.yaml:2:"), "{star}");
    assert!(star.contains("must be quoted: `match: '*'`"), "{star}");
}

#[test]
fn a_missing_or_empty_file_has_no_rules() {
    let dir = tempfile::tempdir().expect("tempdir");
    let file = dir.path().join("policy.yaml");
    assert_eq!(load_policy_file(&file).expect("missing is fine"), vec![]);
    for text in ["", "# only a comment\n", "rules:\n", "rules: []\n"] {
        assert_eq!(
            parse_policy_str(&file, text).expect(text),
            vec![],
            "{text:?}"
        );
    }
}

#[test]
fn what_capa_writes_reads_back_as_the_same_rules() {
    let rules = vec![
        rule("github.delete_*", None, PolicyDecision::Deny),
        rule("slack.post_message", Some("work"), PolicyDecision::Ask),
        rule("*", None, PolicyDecision::Ask),
        rule("null", Some("2fa"), PolicyDecision::Allow),
        rule("*.create_*", None, PolicyDecision::Allow),
    ];
    let text = render_policy(&rules);
    assert_eq!(
        text,
        "# Capabilities policy: allow | ask | deny per tool address, source or glob. `capa policy` edits this file.\n\
         # Precedence and defaults: docs/policies.md. capa rewrites this file; comments other than this header are not kept.\n\
         rules:\n  - match: github.delete_*\n    decision: deny\n  - match: slack.post_message\n    connection: work\n    decision: ask\n  \
         - match: '*'\n    decision: ask\n  - match: 'null'\n    connection: '2fa'\n    decision: allow\n  - match: '*.create_*'\n    decision: allow\n"
    );
    assert_eq!(
        parse_policy_str(Path::new("policy.yaml"), &text).expect("reads back"),
        rules
    );
}

#[test]
fn set_and_reset_edit_one_rule_of_the_file() {
    let dir = tempfile::tempdir().expect("tempdir");
    let file = dir.path().join("sub/policy.yaml");
    let set = |r| set_policy_rule(&file, r).expect("set");
    assert_eq!(set(rule("github", None, PolicyDecision::Ask)), None);
    assert_eq!(
        set(rule("github.*", None, PolicyDecision::Deny)),
        Some(PolicyDecision::Ask)
    );
    assert_eq!(
        set(rule("github", Some("work"), PolicyDecision::Allow)),
        None
    );
    assert_eq!(
        load_policy_file(&file).expect("load"),
        vec![
            rule("github.*", None, PolicyDecision::Deny),
            rule("github", Some("work"), PolicyDecision::Allow),
        ]
    );
    assert!(reset_policy_rule(&file, "github", None).expect("reset"));
    assert!(!reset_policy_rule(&file, "github", None).expect("reset again"));
    assert_eq!(reset_all_policy_rules(&file).expect("all"), 1);
    assert_eq!(load_policy_file(&file).expect("load"), vec![]);
    let bad = set_policy_rule(&file, rule("a b", None, PolicyDecision::Deny))
        .expect_err("invalid pattern")
        .to_string();
    assert!(bad.contains("`a b` is not a valid policy pattern"), "{bad}");
}

#[test]
fn a_broken_file_is_not_overwritten_by_an_edit() {
    let dir = tempfile::tempdir().expect("tempdir");
    let file = dir.path().join("policy.yaml");
    std::fs::write(&file, "rules:\n  - match: x\n    decision: nope\n").expect("write");
    let e = set_policy_rule(&file, rule("y", None, PolicyDecision::Deny))
        .expect_err("broken")
        .to_string();
    assert!(
        e.contains("policy.yaml:3:15: unknown decision `nope`"),
        "{e}"
    );
    assert!(
        std::fs::read_to_string(&file)
            .expect("read")
            .contains("nope")
    );
}
