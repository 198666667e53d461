//! The expose-policy rules of the tool-exposure spec ("Server tool exposure"), as a table: which
//! combinations of `expose` and `tools` are accepted, and the exact message of each refusal.

use std::collections::BTreeSet;
use std::path::Path;

use capa_config::{ToolSelection, parse_str};

/// A server `a` with `expose` (omitted when empty) and `tools` (omitted when `None`).
fn server(expose: &str, tools: Option<&str>) -> String {
    let mut text = "servers:\n  - id: a\n    type: mcp\n".to_owned();
    if !expose.is_empty() {
        text.push_str(&format!("    expose: {expose}\n"));
    }
    if let Some(tools) = tools {
        text.push_str(&format!("    tools: {tools}\n"));
    }
    text.push_str("    def: { command: x }\n");
    text
}

fn names(list: &[&str]) -> BTreeSet<String> {
    list.iter().map(|s| (*s).to_owned()).collect()
}

#[test]
fn accepted_policies_select_tools() {
    let cases = [
        ("", None, ToolSelection::All),
        ("all", None, ToolSelection::All),
        ("none", None, ToolSelection::Nothing),
        (
            "except",
            Some("[delete_repo, force_push]"),
            ToolSelection::Except(names(&["delete_repo", "force_push"])),
        ),
        (
            "exactly",
            Some("[create_issue]"),
            ToolSelection::Exactly(names(&["create_issue"])),
        ),
    ];
    for (expose, tools, wanted) in cases {
        let checked = parse_str(Path::new("c.yaml"), &server(expose, tools))
            .unwrap_or_else(|e| panic!("expose {expose:?} with tools {tools:?} refused:\n{e}"));
        assert_eq!(
            checked.sources[0].selection, wanted,
            "expose {expose:?}, tools {tools:?}"
        );
        assert!(checked.warnings.is_empty(), "{:?}", checked.warnings);
    }
}

#[test]
fn refused_policies_say_what_is_wrong_and_how_to_fix_it() {
    let cases = [
        ("except", None),
        ("exactly", None),
        ("except", Some("[]")),
        ("exactly", Some("[]")),
        ("all", Some("[x]")),
        ("", Some("[x]")),
        ("none", Some("[x]")),
        ("exactly", Some("[x, x]")),
        ("except", Some("['']")),
    ];
    let mut shown = String::new();
    for (expose, tools) in cases {
        let text = server(expose, tools);
        let err = parse_str(Path::new("/p/capabilities.yaml"), &text)
            .expect_err("refused")
            .to_string();
        shown.push_str(&format!(
            "# expose: {}, tools: {}\n{err}\n",
            if expose.is_empty() {
                "(omitted)"
            } else {
                expose
            },
            tools.unwrap_or("(omitted)")
        ));
    }
    assert_eq!(
        shown,
        "\
# expose: except, tools: (omitted)
/p/capabilities.yaml:4:13: `expose: except` needs a `tools` list on server `a`
  fix: add `tools: [remote_tool_name, …]` to the server (remote tool names, not capa ids)
# expose: exactly, tools: (omitted)
/p/capabilities.yaml:4:13: `expose: exactly` needs a `tools` list on server `a`
  fix: add `tools: [remote_tool_name, …]` to the server (remote tool names, not capa ids)
# expose: except, tools: []
/p/capabilities.yaml:5:12: `expose: except` has an empty `tools` list on server `a`
  fix: name the remote tools to hide, or use `expose: all` (and no `tools`)
# expose: exactly, tools: []
/p/capabilities.yaml:5:12: `expose: exactly` has an empty `tools` list on server `a`
  fix: name the remote tools to expose, or use `expose: none` (and no `tools`)
# expose: all, tools: [x]
/p/capabilities.yaml:5:12: `tools` is not allowed with `expose: all` on server `a`
  fix: remove the server's `tools` list, or set `expose: except` or `expose: exactly`
# expose: (omitted), tools: [x]
/p/capabilities.yaml:4:12: `tools` is not allowed with `expose: all` on server `a`
  fix: remove the server's `tools` list, or set `expose: except` or `expose: exactly`
# expose: none, tools: [x]
/p/capabilities.yaml:5:12: `tools` is not allowed with `expose: none` on server `a`
  fix: remove the server's `tools` list, or set `expose: except` or `expose: exactly`
# expose: exactly, tools: [x, x]
/p/capabilities.yaml:5:12: `x` is listed twice in the `tools` of server `a`
  fix: list each remote tool name once
# expose: except, tools: ['']
/p/capabilities.yaml:5:12: empty tool name in the `tools` of server `a`
  fix: remove the empty entry
"
    );
}

#[test]
fn top_level_tool_entries_turn_the_policy_off_with_a_warning() {
    let text = format!(
        "{}tools:\n  - server: a\n    tool: create_issue\n",
        server("except", Some("[delete_repo]"))
    );
    let checked = parse_str(Path::new("/p/capabilities.yaml"), &text).expect("valid");
    assert!(matches!(
        &checked.sources[0].selection,
        ToolSelection::Explicit(tools) if tools.len() == 1
    ));
    assert_eq!(
        checked.warnings,
        vec![
            "/p/capabilities.yaml: server `a` has top-level `tools:` entries, so its `expose` is ignored"
        ]
    );
}
