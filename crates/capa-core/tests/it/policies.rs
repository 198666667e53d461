//! Expose policies applied to a live server's tools.

use crate::support::{TestHub, everything_js};

fn server(extra: &str) -> String {
    format!(
        "options: {{ demo: false }}\nservers:\n  - id: ev\n    type: mcp\n{extra}    def: {{ command: node, args: [\"{}\", stdio] }}\n",
        everything_js()
    )
}

#[tokio::test]
async fn exactly_exposes_only_the_listed_remote_names() {
    let t = TestHub::start(&server(
        "    expose: exactly\n    tools: [echo, get-sum, not-a-tool]\n",
    ))
    .await;
    assert_eq!(t.addresses(), vec!["ev.echo", "ev.get-sum"]);
    assert_eq!(
        t.hub.catalog().warnings,
        vec!["source `ev` does not advertise a tool named `not-a-tool`"]
    );
}

#[tokio::test]
async fn except_hides_the_listed_remote_names() {
    let t = TestHub::start(&server("    expose: except\n    tools: [get-env]\n")).await;
    let addresses = t.addresses();
    assert!(addresses.contains(&"ev.echo".to_owned()));
    assert!(!addresses.contains(&"ev.get-env".to_owned()));
}

#[tokio::test]
async fn none_exposes_nothing_and_tool_entries_replace_the_policy() {
    let t = TestHub::start(&server("    expose: none\n")).await;
    assert!(t.addresses().is_empty());
    let yaml = format!(
        "{}tools:\n  - {{ server: ev, tool: get-sum, id: sum, description: Adds. }}\n",
        server("    expose: all\n")
    );
    let t = TestHub::start(&yaml).await;
    assert_eq!(t.addresses(), vec!["ev.sum"]);
    let tool = t.hub.catalog().get("ev.sum").cloned().expect("present");
    assert_eq!(tool.remote_name, "get-sum");
    assert_eq!(tool.definition.description.as_deref(), Some("Adds."));
    let sum = t
        .call("ev.sum", serde_json::json!({"a": 1, "b": 2}))
        .await
        .expect("call");
    assert!(crate::support::text(&sum).contains('3'));
}
