//! Skills in the catalog (tool-exposure spec, expose-all): every tool an active skill requires is
//! listed, even one its server's `expose` policy hides; `@server` means the server's exposed set.

use serde_json::json;

use crate::support::{TestHub, everything_js, text};

fn addresses(t: &TestHub, skill: &str) -> Option<Vec<String>> {
    t.hub
        .skill_tools(skill)
        .map(|tools| tools.iter().map(ToString::to_string).collect())
}

fn everything_exactly_echo(options: &str) -> String {
    format!(
        r#"
servers:
  - id: ev
    type: mcp
    expose: exactly
    tools: [echo]
    def: {{ command: node, args: ["{}", stdio] }}
skills:
  - id: sums
    description: Adds numbers.
    requires: [ev.get-sum, ev.no-such-tool]
  - id: everything
    description: The whole exposed server.
    requires: ["@ev"]
options:
  demo: false
{options}"#,
        everything_js()
    )
}

#[tokio::test]
async fn a_skill_adds_a_tool_the_expose_policy_hides() {
    let t = TestHub::start(&everything_exactly_echo("")).await;
    assert_eq!(t.addresses(), vec!["ev.echo", "ev.get-sum"]);
    let sum = t
        .call("ev.get-sum", json!({"a": 2, "b": 3}))
        .await
        .expect("the skill's tool is callable");
    assert!(text(&sum).contains('5'), "{sum}");
    assert_eq!(addresses(&t, "sums"), Some(vec!["ev.get-sum".to_owned()]));
    // `@ev` is every catalog tool of the namespace.
    assert_eq!(
        addresses(&t, "everything"),
        Some(vec!["ev.echo".to_owned(), "ev.get-sum".to_owned()])
    );
    assert_eq!(
        t.hub.missing_skill_tools(),
        vec![("sums".to_owned(), "ev.no-such-tool".to_owned())]
    );
    let ids: Vec<&str> = t.hub.skills().iter().map(|s| s.id.as_str()).collect();
    assert_eq!(ids, vec!["sums", "everything"]);
    t.hub.shutdown().await;
}

#[tokio::test]
async fn skills_have_no_effect_in_search_mode() {
    let t = TestHub::start(&everything_exactly_echo("  toolExposure: search\n")).await;
    assert_eq!(t.addresses(), vec!["ev.echo"]);
    assert!(t.hub.missing_skill_tools().is_empty());
    t.hub.shutdown().await;
}

#[tokio::test]
async fn demo_skills_resolve_to_catalog_tools_and_disabled_ones_to_nothing() {
    let yaml = r#"
skills:
  - id: notes
    description: Keep notes.
    requires: [demo.write_note, demo.read_note, demo.write_note2]
  - id: all-demo
    description: Everything the demo source exposes.
    requires: [demo.echo, "@demo"]
  - id: off
    description: Not now.
    disabled: true
    requires: [demo.add, demo.gone]
"#;
    let t = TestHub::start(yaml).await;
    assert_eq!(
        t.addresses().len(),
        8,
        "skills add nothing to an `all` policy"
    );
    assert_eq!(
        addresses(&t, "notes"),
        Some(vec![
            "demo.read_note".to_owned(),
            "demo.write_note".to_owned()
        ]),
        "in catalog order"
    );
    assert_eq!(
        addresses(&t, "all-demo").map(|a| a.len()),
        Some(8),
        "`demo.echo` and `@demo` overlap: each tool once"
    );
    assert_eq!(addresses(&t, "off"), Some(Vec::new()));
    assert_eq!(addresses(&t, "nope"), None);
    assert_eq!(
        t.hub.missing_skill_tools(),
        vec![("notes".to_owned(), "demo.write_note2".to_owned())],
        "the disabled skill's `demo.gone` is not reported"
    );
    assert!(!t.hub.skills()[2].active);
}
