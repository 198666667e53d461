//! Direct tool calls return at most `inlineResultBytes` (24 KB) of result, cut validly and with a
//! notice (issue 16: a 10 MB result reached the client whole). Real upstreams — server-everything's
//! `echo` and the Python SDK fixture `sized_server.py` — behind a hub in each mode where a client
//! calls a source's tool directly (expose-all, search's and on-demand's `call_tool`), called by
//! rmcp's client over Streamable HTTP.

use rmcp::model::{CallToolRequestParams, CallToolResult, ContentBlock};
use rmcp::service::{RoleClient, RunningService, ServiceExt};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use serde_json::{Value, json};

mod support;

use support::{Served, node, repo_file, serve_hub};

/// The spec's default `inlineResultBytes`.
const BUDGET: usize = 24 * 1024;

/// A hub in `mode` with server-everything (`ev`) and the sized fixture (`sized`).
async fn hub(mode: &str) -> Served {
    let node = node();
    let yaml = format!(
        "options: {{ demo: false, toolExposure: {mode} }}\nservers:\n  - id: ev\n    type: mcp\n    def: {{ command: \"{node}\", args: [\"{}\", stdio] }}\n  - id: sized\n    type: mcp\n    def: {{ command: \"{}\", args: [\"{}\"] }}\n",
        repo_file("node_modules/@modelcontextprotocol/server-everything/dist/index.js"),
        repo_file("tests/.venv/bin/python"),
        repo_file("tests/fixtures/sized_server.py"),
    );
    serve_hub(&yaml).await
}

async fn connect(served: &Served) -> RunningService<RoleClient, ()> {
    let transport = StreamableHttpClientTransport::from_config(
        StreamableHttpClientTransportConfig::with_uri(served.server.mcp_url())
            .auth_header(served.token.clone()),
    );
    ().serve(transport).await.expect("connect")
}

fn params(name: &str, arguments: Value) -> CallToolRequestParams {
    let mut params = CallToolRequestParams::new(name.to_owned());
    params.arguments = match arguments {
        serde_json::Value::Object(object) => Some(object),
        _ => None,
    };
    params
}

/// Calls `address` the way `mode` lets a client: directly, or through `call_tool` after
/// `search` or `setup_tools` made it callable.
async fn call(
    client: &RunningService<RoleClient, ()>,
    mode: &str,
    address: &str,
    arguments: Value,
) -> CallToolResult {
    let peer = client.peer();
    let namespace = address.split('.').next().expect("namespace");
    let request = match mode {
        "expose-all" => params(address, arguments),
        "search" => {
            peer.call_tool(params("search", json!({"query": address})))
                .await
                .expect("search");
            params("call_tool", json!({"name": address, "data": arguments}))
        }
        "on-demand" => {
            peer.call_tool(params(
                "setup_tools",
                json!({"names": [format!("@{namespace}")]}),
            ))
            .await
            .expect("setup_tools");
            params("call_tool", json!({"name": address, "data": arguments}))
        }
        other => panic!("no direct calls in {other}"),
    };
    peer.call_tool(request).await.expect("call")
}

/// The result as compact JSON, the form it crossed the wire in.
fn bytes(result: &CallToolResult) -> usize {
    serde_json::to_vec(result).expect("json").len()
}

fn notice(result: &CallToolResult) -> String {
    match result.content.last() {
        Some(ContentBlock::Text(t)) => t.text.clone(),
        other => panic!("the last block is no notice: {other:?}"),
    }
}

#[tokio::test]
async fn a_two_megabyte_echo_is_cut_to_the_inline_limit_in_every_direct_mode() {
    for mode in ["expose-all", "search", "on-demand"] {
        let served = hub(mode).await;
        let client = connect(&served).await;
        // Multi-byte characters: a cut in the middle of one would not be UTF-8.
        let message = "é".repeat(1024 * 1024);
        let result = call(&client, mode, "ev.echo", json!({"message": message})).await;
        assert!(bytes(&result) <= BUDGET, "{mode}: {} bytes", bytes(&result));
        assert!(
            bytes(&result) > BUDGET - 1024,
            "{mode}: {} bytes",
            bytes(&result)
        );
        assert_ne!(result.is_error, Some(true), "{mode}: isError unchanged");
        assert_eq!(
            result.content.len(),
            2,
            "{mode}: the cut text and the notice"
        );
        let text = &result.content[0].as_text().expect("text").text;
        let kept = text.strip_suffix('…').expect("the cut text ends in …");
        assert!(kept.starts_with("Echo: éé"), "{mode}");
        assert!(kept.trim_start_matches("Echo: ").chars().all(|c| c == 'é'));
        let said = notice(&result);
        assert!(
            said.contains("inline limit of 24 KB (it was 2.0 MB)"),
            "{mode}: {said}"
        );
        assert!(said.contains("Ask the tool for less"), "{mode}: {said}");

        // Under the limit, the answer is the upstream's own.
        let small = call(&client, mode, "ev.echo", json!({"message": "hi"})).await;
        assert_eq!(small.content.len(), 1, "{mode}: {small:?}");
        assert_eq!(small.content[0].as_text().expect("text").text, "Echo: hi");

        let _ = client.cancel().await;
        served.server.shutdown().await;
        served.hub.shutdown().await;
    }
}

#[tokio::test]
async fn structured_content_stays_valid_json_and_uncuttable_blocks_are_left_out() {
    let served = hub("expose-all").await;
    let client = connect(&served).await;

    let result = call(&client, "expose-all", "sized.items", json!({"count": 5000})).await;
    assert!(bytes(&result) <= BUDGET, "{} bytes", bytes(&result));
    let structured = result
        .structured_content
        .as_ref()
        .expect("structured content kept");
    let items = structured["items"].as_array().expect("items still a list");
    assert!(!items.is_empty() && items.len() < 5000, "{}", items.len());
    for item in items {
        assert!(item["id"].is_u64() && item["title"].is_string(), "{item}");
    }
    assert_eq!(structured["total"], 5000, "members after a long list stay");
    let said = notice(&result);
    assert!(said.contains("structuredContent is shortened"), "{said}");
    assert!(said.contains("the text is cut"), "{said}");

    // 40,000 bytes each: the small image fits, the large one cannot be cut, the text is cut to
    // what is left; the text resource and the blob no longer fit.
    let result = call(
        &client,
        "expose-all",
        "sized.mixed",
        json!({"size": 40_000}),
    )
    .await;
    assert!(bytes(&result) <= BUDGET, "{} bytes", bytes(&result));
    let kinds: Vec<String> = result
        .content
        .iter()
        .map(|b| match b {
            ContentBlock::Image(i) => format!("image {}", i.data.len()),
            ContentBlock::Text(t) if t.text.starts_with('w') => {
                assert!(t.text.ends_with('…'));
                "cut text".to_owned()
            }
            ContentBlock::Text(t) if t.text.starts_with("[capabilities]") => "notice".to_owned(),
            ContentBlock::Text(t) => {
                format!("text {:?}", t.text.chars().take(60).collect::<String>())
            }
            other => format!("{other:?}"),
        })
        .collect();
    assert_eq!(kinds, ["image 12", "cut text", "notice"]);
    let said = notice(&result);
    assert!(
        said.contains("left out: 1 image, 2 embedded resources"),
        "{said}"
    );

    let _ = client.cancel().await;
    served.server.shutdown().await;
    served.hub.shutdown().await;
}

/// The bytes themselves: a raw Streamable HTTP session, the answer's JSON-RPC message measured
/// as it arrives (the result within the limit, plus its envelope `{"jsonrpc":"2.0","id":2,…}`).
#[tokio::test]
async fn the_answer_on_the_wire_is_within_the_limit() {
    use reqwest::header::{ACCEPT, AUTHORIZATION, CONTENT_TYPE};
    let served = hub("expose-all").await;
    let http = reqwest::Client::new();
    let post = |body: Value, session: Option<String>| {
        let mut request = http
            .post(served.server.mcp_url())
            .header(AUTHORIZATION, format!("Bearer {}", served.token))
            .header(ACCEPT, "application/json, text/event-stream")
            .header(CONTENT_TYPE, "application/json")
            .body(body.to_string());
        if let Some(session) = session {
            request = request
                .header("mcp-session-id", session)
                .header("mcp-protocol-version", "2025-06-18");
        }
        request.send()
    };
    let initialized = post(
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "raw", "version": "1"}}}),
        None,
    )
    .await
    .expect("initialize");
    let session = initialized
        .headers()
        .get("mcp-session-id")
        .and_then(|v| v.to_str().ok())
        .expect("a session")
        .to_owned();
    let _ = initialized.text().await;
    post(
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        Some(session.clone()),
    )
    .await
    .expect("initialized");
    let answer = post(
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
            "name": "ev.echo", "arguments": {"message": "x".repeat(3 << 20)}}}),
        Some(session),
    )
    .await
    .expect("tools/call")
    .text()
    .await
    .expect("body");
    let message = answer
        .lines()
        .map(|line| line.strip_prefix("data:").unwrap_or(line).trim_start())
        .find(|line| line.contains("\"id\":2"))
        .unwrap_or_else(|| panic!("no answer to the call in {} bytes", answer.len()));
    assert!(message.len() <= BUDGET + 64, "{} bytes", message.len());
    let parsed: Value = serde_json::from_str(message).expect("one whole JSON message");
    let content = parsed["result"]["content"].as_array().expect("content");
    assert!(
        content[0]["text"]
            .as_str()
            .is_some_and(|t| t.starts_with("Echo: xxx"))
    );
    assert!(
        content[1]["text"]
            .as_str()
            .is_some_and(|t| t.contains("it was 3.0 MB"))
    );
    served.server.shutdown().await;
    served.hub.shutdown().await;
}
