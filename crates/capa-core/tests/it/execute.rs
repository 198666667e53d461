//! `execute` through the hub: the spec's example against fixture sources named like it, real
//! upstreams (server-everything, server-filesystem) with `Promise.all`, code shapes, runs
//! recorded in SQLite, and limits reported by code.

use capa_core::ExecuteRequest;
use serde_json::{Value, json};

use crate::support::{
    TestHub, catalog_server_source, everything_js, execute_json, filesystem_js, installed,
    repo_root,
};

fn node() -> String {
    installed("node_modules/.bin/node")
}

/// A source of the spec example's fixture catalog (github.searchIssues, slack.postMessage).
fn fixture_source(id: &str, extra: &[&str]) -> String {
    let tools = repo_root().join("tests/fixtures/spec-example/tools.jsonl");
    let mut args = vec![
        tools.display().to_string(),
        "--source".to_owned(),
        id.to_owned(),
    ];
    args.extend(extra.iter().map(|s| (*s).to_owned()));
    catalog_server_source(id, &args)
}

async fn execute(hub: &TestHub, code: &str) -> Value {
    execute_json(hub, Some(code), None).await
}

const SPEC_EXAMPLE: &str = r##"const bugs = await github.searchIssues({ q: "repo:acme/app is:open label:bug" });
const top = bugs.items.slice(0, 3).map((i) => `• ${i.title} (#${i.number})`);
await slack.postMessage({ channel: "#eng", text: top.join("\n") });
return top;"##;

#[tokio::test]
async fn the_spec_example_runs_as_written() {
    let yaml = format!(
        "options:\n  demo: false\n  toolExposure: code\nservers:\n{}{}",
        fixture_source(
            "github",
            &["--respond", "searchIssues=spec-example/search-issues.json"]
        ),
        fixture_source("slack", &[]),
    );
    let hub = TestHub::start(&yaml).await;
    let envelope = execute(&hub, SPEC_EXAMPLE).await;
    assert_eq!(envelope["status"], "completed", "{envelope:#}");
    assert_eq!(
        envelope["result"],
        json!([
            "• Crash on start (#101)",
            "• Login loops (#97)",
            "• Slow search (#93)"
        ])
    );
    let calls: Vec<(&str, bool)> = envelope["calls"]
        .as_array()
        .expect("calls")
        .iter()
        .map(|c| (c["address"].as_str().unwrap_or(""), c["ok"] == true))
        .collect();
    assert_eq!(
        calls,
        [("github.searchIssues", true), ("slack.postMessage", true)]
    );
    // The run and its journal are in SQLite: the message slack received is what the code built.
    let run_id = envelope["runId"].as_str().expect("run id");
    let run = hub.store().run(run_id).expect("read").expect("recorded");
    assert_eq!(run.status.as_str(), "completed");
    assert_eq!(run.code, SPEC_EXAMPLE);
    let journal = hub.store().journal(run_id).expect("journal");
    assert_eq!(journal.len(), 2);
    let posted: Value = serde_json::from_str(&journal[1].arguments).expect("arguments");
    assert_eq!(
        posted["text"],
        "• Crash on start (#101)\n• Login loops (#97)\n• Slow search (#93)"
    );
    // Resuming an ended run answers with its envelope again.
    let again = hub
        .hub
        .execute(ExecuteRequest {
            resume: Some(run_id.to_owned()),
            ..ExecuteRequest::default()
        })
        .await
        .expect("resume");
    assert_eq!(serde_json::to_value(again).expect("json"), envelope);
}

/// Two real servers answer calls made together in one `Promise.all`; that such calls overlap
/// at the upstream is `concurrency.rs`.
#[tokio::test]
async fn real_upstreams_answer_calls_made_together() {
    let files = tempfile::tempdir().expect("dir");
    std::fs::write(files.path().join("a.txt"), "alpha").expect("write");
    std::fs::write(files.path().join("b.txt"), "beta").expect("write");
    let yaml = format!(
        "options:\n  demo: false\n  toolExposure: code\nservers:\n  - id: everything\n    type: mcp\n    def: {{ command: {node:?}, args: [{everything:?}, \"stdio\"] }}\n  - id: files\n    type: mcp\n    def: {{ command: {node:?}, args: [{filesystem:?}, {dir:?}] }}\n",
        node = node(),
        everything = everything_js(),
        filesystem = filesystem_js(),
        dir = files
            .path()
            .canonicalize()
            .expect("dir")
            .display()
            .to_string(),
    );
    let hub = TestHub::start(&yaml).await;
    let dir = files
        .path()
        .canonicalize()
        .expect("dir")
        .display()
        .to_string();
    let code = format!(
        r#"const [sum, echo, a, b] = await Promise.all([
  everything.get_sum({{ a: 2, b: 40 }}),
  everything.echo({{ message: "hi" }}),
  files.read_text_file({{ path: {a:?} }}),
  files.read_text_file({{ path: {b:?} }}),
]);
return {{ sum, echo, a, b }};"#,
        a = format!("{dir}/a.txt"),
        b = format!("{dir}/b.txt"),
    );
    let envelope = execute(&hub, &code).await;
    assert_eq!(envelope["status"], "completed", "{envelope:#}");
    let result = envelope["result"].to_string();
    assert!(result.contains("42"), "{result}");
    assert!(result.contains("hi"), "{result}");
    assert!(
        result.contains("alpha") && result.contains("beta"),
        "{result}"
    );
    assert_eq!(envelope["calls"].as_array().map(Vec::len), Some(4));
}

#[tokio::test]
async fn code_shapes_typescript_and_errors() {
    let hub = TestHub::start("options:\n  toolExposure: code\n").await;
    // TypeScript with a final expression.
    let envelope = execute(
        &hub,
        "const r: { text: string } = await demo.echo({ text: 'ok' });\nconst n: number = 1;\nn + 1",
    )
    .await;
    assert_eq!(envelope["status"], "completed", "{envelope:#}");
    assert_eq!(envelope["result"], 2);
    assert_eq!(
        envelope["notices"],
        json!(["Returned the value of the last expression."])
    );
    // A syntax error points into the model's code.
    let envelope = execute(&hub, "const a = 1;\nreturn (a +;").await;
    assert_eq!(envelope["status"], "failed");
    assert_eq!(envelope["error"]["code"], "syntax_error");
    assert!(
        envelope["error"]["message"]
            .as_str()
            .is_some_and(|m| m.starts_with("syntax error at line 2, column 12")),
        "{envelope:#}"
    );
    // An unknown tool is a TypeError naming the closest ones.
    let envelope = execute(&hub, "return await demo.ech({ text: 'x' });").await;
    assert_eq!(envelope["status"], "failed");
    assert!(
        envelope["error"]["message"]
            .to_string()
            .contains("demo.echo"),
        "{envelope:#}"
    );
    // hub.search from inside code.
    let envelope = execute(&hub, "return await hub.search('add two numbers');").await;
    assert!(
        envelope["result"]
            .as_str()
            .is_some_and(|t| t.contains("demo.add(")),
        "{envelope:#}"
    );
    // An infinite loop stops at the compute limit and the hub serves the next run.
    let envelope = execute(&hub, "while (true) {}").await;
    assert_eq!(envelope["error"]["code"], "compute_limit", "{envelope:#}");
    let envelope = execute(&hub, "return 7;").await;
    assert_eq!(envelope["result"], 7);
    // Exactly one of code and resume.
    let refused = hub.hub.execute(ExecuteRequest::default()).await;
    assert!(refused.is_err());
}
