//! `search` and `describe` through the hub: real catalogs served by the catalog fixture server
//! (tests/fixtures/catalog-server.mjs) and snapshot tests of their output.

use std::collections::BTreeMap;
use std::sync::Arc;

use capa_config::ToolSelection;
use capa_core::lookup::{self, SearchRequest, ToolIndex};
use capa_core::policy::{Decision, Policy, Rule};
use capa_core::{Catalog, LookupError, SourceTools, ToolDefinition as Tool};

use crate::support::{TestHub, catalog_server_source, installed, repo_root};

fn catalog_source(id: &str, catalog: &str, extra: &[&str]) -> String {
    let mut args = vec![catalog.to_owned()];
    args.extend(extra.iter().map(|s| (*s).to_owned()));
    catalog_server_source(id, &args)
}

fn search(query: &str) -> SearchRequest {
    SearchRequest {
        query: query.to_owned(),
        ..SearchRequest::default()
    }
}

/// An index over catalog files, built without any server: what the snapshots read.
fn index_of(files: &[&str]) -> ToolIndex {
    let tools = capa_catalogs::load_all(files).expect("catalogs");
    let mut by_source: BTreeMap<String, Vec<Tool>> = BTreeMap::new();
    for tool in tools {
        let mut definition = serde_json::json!({
            "name": tool.name,
            "inputSchema": tool.input_schema,
        });
        if let Some(d) = &tool.description {
            definition["description"] = d.clone().into();
        }
        if let Some(a) = &tool.annotations {
            definition["annotations"] = a.clone();
        }
        let tool_def: Tool = serde_json::from_value(definition).expect("tool");
        by_source.entry(tool.source).or_default().push(tool_def);
    }
    let catalog = Catalog::build(by_source.iter().map(|(id, tools)| SourceTools {
        source_id: id,
        selection: &ToolSelection::All,
        tools,
    }));
    ToolIndex::build(Arc::new(catalog)).expect("index")
}

fn run_search(index: &ToolIndex, policy: &Policy, request: &SearchRequest) -> String {
    let connections = BTreeMap::from([(
        "github".to_owned(),
        vec!["personal*".to_owned(), "work".to_owned()],
    )]);
    lookup::search(index, policy, &connections, &BTreeMap::new(), request)
        .unwrap_or_else(|e| e.to_string())
}

#[test]
fn search_snapshots_over_real_catalogs() {
    let index = index_of(&["github", "docker-registry", "livemcpbench"]);
    let policy = Policy::new(vec![
        Rule {
            pattern: "github.delete_*".into(),
            connection: None,
            decision: Decision::Deny,
        },
        Rule {
            pattern: "github.create_*".into(),
            connection: None,
            decision: Decision::Ask,
        },
    ]);
    for (name, request) in [
        ("bug_report", search("open a bug report on a repo")),
        ("prefix", search("list_pull")),
        ("weather", search("what's the weather in paris tomorrow")),
        (
            "github_namespace_limit_3",
            SearchRequest {
                query: "delete or create a branch".into(),
                namespace: Some("github".into()),
                limit: Some(3),
            },
        ),
        (
            "list_namespace",
            SearchRequest {
                query: String::new(),
                namespace: Some("github".into()),
                limit: Some(5),
            },
        ),
        ("no_match", search("zzqx frobnicate")),
        (
            "unknown_namespace",
            SearchRequest {
                query: "issue".into(),
                namespace: Some("githb".into()),
                limit: None,
            },
        ),
    ] {
        insta::assert_snapshot!(
            format!("search_{name}"),
            run_search(&index, &policy, &request)
        );
    }
}

#[test]
fn describe_snapshots_over_real_catalogs() {
    let index = index_of(&["github"]);
    let policy = Policy::default();
    let describe = |targets: &[&str]| {
        let targets: Vec<String> = targets.iter().map(|t| (*t).to_owned()).collect();
        lookup::describe(&index, &policy, &targets).unwrap_or_else(|e| e.to_string())
    };
    insta::assert_snapshot!("describe_create_issue", describe(&["github.create_issue"]));
    insta::assert_snapshot!(
        "describe_two_tools",
        describe(&["github.search_issues", "github.get_me"])
    );
    insta::assert_snapshot!("describe_namespace", describe(&["github"]));
    insta::assert_snapshot!("describe_unknown", describe(&["github.creat_isue"]));
}

#[test]
fn bad_lookups_get_clear_errors() {
    let index = index_of(&["github"]);
    let policy = Policy::default();
    let fail = |request: SearchRequest| {
        lookup::search(
            &index,
            &policy,
            &BTreeMap::new(),
            &BTreeMap::new(),
            &request,
        )
        .expect_err("refused")
    };
    let long = fail(search(&"x".repeat(201)));
    assert!(matches!(long, LookupError::InvalidArguments(_)), "{long}");
    assert!(long.to_string().contains("200"), "{long}");
    for limit in [0, 26, -1] {
        let e = fail(SearchRequest {
            query: "issue".into(),
            namespace: None,
            limit: Some(limit),
        });
        assert!(e.to_string().contains("1 to 25"), "{e}");
    }
    let unknown = fail(SearchRequest {
        query: "issue".into(),
        namespace: Some("gihub".into()),
        limit: None,
    });
    assert_eq!(unknown.code(), "unknown_namespace");
    assert!(unknown.to_string().contains("github"), "{unknown}");
    let eleven: Vec<String> = (0..11).map(|i| format!("github.t{i}")).collect();
    let e = lookup::describe(&index, &policy, &eleven).expect_err("too many");
    assert!(e.to_string().contains("1 to 10"), "{e}");
    let e = lookup::describe(&index, &policy, &[]).expect_err("none");
    assert!(e.to_string().contains("1 to 10"), "{e}");
    let e =
        lookup::describe(&index, &policy, &["github.creat_issue".to_owned()]).expect_err("unknown");
    assert_eq!(e.code(), "unknown_target");
    assert!(e.to_string().contains("github.create_issue"), "{e}");
}

#[test]
fn denied_tools_are_hidden_and_counted() {
    let index = index_of(&["github"]);
    let policy = Policy::new(vec![Rule {
        pattern: "github.create_issue".into(),
        connection: None,
        decision: Decision::Deny,
    }]);
    let text = run_search(&index, &policy, &search("create issue"));
    assert!(!text.contains("github.create_issue("), "{text}");
    assert!(
        text.contains("1 matching tool is hidden by your policy."),
        "{text}"
    );
    let e =
        lookup::describe(&index, &policy, &["github.create_issue".to_owned()]).expect_err("hidden");
    assert_eq!(e.code(), "unknown_target");
}

/// The issue's "done when", through a running hub: GitHub's tools among 1,400 others (the
/// docker-registry and livemcpbench catalogs), each catalog served by a real MCP server.
#[tokio::test]
async fn a_hub_finds_and_describes_tools_of_a_real_server() {
    let yaml = format!(
        "options:\n  demo: false\n  toolExposure: code\nservers:\n{}{}{}",
        catalog_source("github", "github", &[]),
        catalog_source("registry", "docker-registry", &[]),
        catalog_source("live", "livemcpbench", &[]),
    );
    let hub = TestHub::start(&yaml).await;
    let text = hub
        .hub
        .search(&search("open a bug report on a repo"))
        .await
        .expect("search");
    let first_tool = text
        .lines()
        .find(|l| l.starts_with("  "))
        .unwrap_or_default();
    assert!(first_tool.contains("github.create_issue("), "{text}");
    let declarations = hub
        .hub
        .describe(&["github.create_issue".to_owned()])
        .await
        .expect("describe");
    assert!(
        declarations.contains("declare const github"),
        "{declarations}"
    );
    assert!(
        declarations.contains("create_issue(input: {"),
        "{declarations}"
    );
    // Calls still go through (the fixture echoes the arguments).
    let echoed = hub
        .call(
            "github.create_issue",
            serde_json::json!({"owner": "o", "repo": "r", "title": "t"}),
        )
        .await
        .expect("call");
    assert_eq!(echoed["structuredContent"]["arguments"]["title"], "t");
}

/// A source whose schemas are nonsense is still searchable and describable (as `unknown`),
/// and the other sources are untouched.
#[tokio::test]
async fn broken_schemas_do_not_break_the_catalog() {
    let broken = repo_root().join("tests/fixtures/broken-schemas.jsonl");
    let yaml = format!(
        "options:\n  demo: false\n  toolExposure: code\nservers:\n{}{}",
        catalog_source("broken", &broken.display().to_string(), &[]),
        catalog_source("github", "github", &[]),
    );
    let hub = TestHub::start(&yaml).await;
    let declarations = hub
        .hub
        .describe(&["broken".to_owned()])
        .await
        .expect("describe");
    assert!(
        declarations.contains("declare const broken"),
        "{declarations}"
    );
    let text = hub
        .hub
        .search(&search("dangling reference"))
        .await
        .expect("search");
    assert!(text.contains("broken."), "{text}");
    let text = hub
        .hub
        .search(&search("merge a pull request"))
        .await
        .expect("search");
    assert!(text.contains("github.merge_pull_request("), "{text}");
}

/// When a source's tools change, search sees the new tool (the index follows the catalog).
#[tokio::test]
async fn search_follows_tool_list_changes() {
    let python = installed("tests/.venv/bin/python");
    let script = installed("tests/fixtures/growing_server.py");
    let yaml = format!(
        "options:\n  demo: false\n  toolExposure: code\nservers:\n  - id: grow\n    type: mcp\n    def: {{ command: {python:?}, args: [{script:?}] }}\n"
    );
    let hub = TestHub::start(&yaml).await;
    let before = hub
        .hub
        .search(&search("zebra stripes"))
        .await
        .expect("search");
    assert!(before.starts_with("No tools match"), "{before}");
    hub.call("grow.grow", serde_json::json!({"name": "zebra_stripes"}))
        .await
        .expect("grow");
    let appeared = crate::support::eventually(std::time::Duration::from_secs(10), || {
        hub.hub.catalog().get("grow.zebra_stripes").is_some()
    })
    .await;
    assert!(appeared, "the new tool never reached the catalog");
    let after = hub
        .hub
        .search(&search("zebra stripes"))
        .await
        .expect("search");
    let first_tool = after
        .lines()
        .find(|l| l.starts_with("  "))
        .unwrap_or_default();
    assert!(first_tool.contains("grow.zebra_stripes("), "{after}");
}
