//! The code-mode surface: `search`/`describe` over MCP (its fixed cost in tokens is tested in
//! capa-mcp).

mod support;

use rmcp::model::CallToolRequestParams;
use rmcp::service::ServiceExt;
use support::{Served, repo_file, serve_hub};

fn call(name: &str, arguments: serde_json::Value) -> CallToolRequestParams {
    let mut params = CallToolRequestParams::new(name.to_owned());
    params.arguments = match arguments {
        serde_json::Value::Object(object) => Some(object),
        _ => None,
    };
    params
}

#[tokio::test]
async fn a_client_finds_and_describes_tools_over_http() {
    // GitHub's tools among 1,400 others, each catalog served by the catalog fixture server.
    let node = repo_file("node_modules/.bin/node");
    let server = repo_file("tests/fixtures/catalog-server.mjs");
    let mut yaml = "options: { demo: true, toolExposure: code }\nservers:\n".to_owned();
    for (id, catalog) in [
        ("github", "github"),
        ("registry", "docker-registry"),
        ("live", "livemcpbench"),
    ] {
        yaml.push_str(&format!(
            "  - id: {id}\n    type: mcp\n    def: {{ command: {node:?}, args: [{server:?}, {catalog:?}] }}\n"
        ));
    }
    let Served {
        _dir,
        hub,
        server,
        token,
    } = serve_hub(&yaml).await;
    let transport = rmcp::transport::StreamableHttpClientTransport::from_config(
        rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig::with_uri(
            server.mcp_url(),
        )
        .auth_header(token),
    );
    let client = ().serve(transport).await.expect("client");
    let info = client.peer_info().expect("server info");
    assert_eq!(
        info.instructions.as_deref(),
        Some(capa_server::CODE_INSTRUCTIONS)
    );
    let tools = client.list_all_tools().await.expect("list");
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
    assert_eq!(names, ["search", "describe", "execute"]);
    for tool in &tools[..2] {
        let annotations = tool.annotations.as_ref().expect("annotations");
        assert_eq!(annotations.read_only_hint, Some(true));
        assert_eq!(annotations.idempotent_hint, Some(true));
    }
    let text = |result: &rmcp::model::CallToolResult| {
        result.content[0]
            .as_text()
            .map(|t| t.text.clone())
            .unwrap_or_default()
    };
    let found = client
        .call_tool(call(
            "search",
            serde_json::json!({"query": "open a bug report on a repo"}),
        ))
        .await
        .expect("search");
    assert_ne!(found.is_error, Some(true));
    let found = text(&found);
    assert!(
        found.starts_with("github\n  github.create_issue("),
        "{found}"
    );
    let described = client
        .call_tool(call(
            "describe",
            serde_json::json!({"targets": ["github.create_issue", "demo"]}),
        ))
        .await
        .expect("describe");
    let described = text(&described);
    assert!(described.contains("declare const github"), "{described}");
    assert!(described.contains("declare const demo"), "{described}");
    let refused = client
        .call_tool(call(
            "search",
            serde_json::json!({"query": "x", "limit": 99}),
        ))
        .await
        .expect("answered");
    assert_eq!(refused.is_error, Some(true));
    assert!(text(&refused).contains("1 to 25"), "{}", text(&refused));
    let unknown = client
        .call_tool(call("github.create_issue", serde_json::json!({})))
        .await
        .expect("answered");
    assert_eq!(unknown.is_error, Some(true));
    client.cancel().await.expect("close");
    server.shutdown().await;
    hub.shutdown().await;
}
