//! Malformed POSTs to `/mcp` get `400` and a JSON-RPC error (issue 16: they got `415` in plain
//! text). Raw HTTP with the right token, Host and Accept, so only the body or its Content-Type is
//! wrong; the hub serves on afterwards.

use reqwest::header::{ACCEPT, AUTHORIZATION, CONTENT_TYPE};
use serde_json::{Value, json};

mod support;

use support::{Served, serve_hub};

/// What came back: the status, the Content-Type and the body as JSON.
struct Answer {
    status: u16,
    content_type: String,
    body: Value,
}

async fn post(
    served: &Served,
    content_type: Option<&str>,
    body: impl Into<reqwest::Body>,
) -> Answer {
    let mut request = reqwest::Client::new()
        .post(served.server.mcp_url())
        .header(AUTHORIZATION, format!("Bearer {}", served.token))
        .header(ACCEPT, "application/json, text/event-stream")
        .body(body);
    if let Some(content_type) = content_type {
        request = request.header(CONTENT_TYPE, content_type);
    }
    let response = request.send().await.expect("an answer");
    let status = response.status().as_u16();
    let content_type = response
        .headers()
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_owned();
    let text = response.text().await.expect("a body");
    let body = serde_json::from_str(&text).unwrap_or_else(|_| panic!("not JSON: {text:?}"));
    Answer {
        status,
        content_type,
        body,
    }
}

/// Asserts a `400` JSON-RPC error with `code`, and returns its message.
fn refused(answer: &Answer, code: i64, what: &str) -> String {
    assert_eq!(answer.status, 400, "{what}: {}", answer.body);
    assert!(
        answer.content_type.starts_with("application/json"),
        "{what}: {}",
        answer.content_type
    );
    assert_eq!(answer.body["jsonrpc"], "2.0", "{what}: {}", answer.body);
    assert_eq!(
        answer.body["error"]["code"], code,
        "{what}: {}",
        answer.body
    );
    answer.body["error"]["message"]
        .as_str()
        .unwrap_or_else(|| panic!("{what}: no message in {}", answer.body))
        .to_owned()
}

const JSON: Option<&str> = Some("application/json");

#[tokio::test]
async fn bodies_that_are_not_json_get_a_parse_error() {
    let served = serve_hub("options: { demo: true }\n").await;
    for (what, body) in [
        (
            "cut off",
            r#"{"jsonrpc": "2.0", "id": 1, "method": "#.as_bytes().to_vec(),
        ),
        ("plain text", b"tools/list please".to_vec()),
        ("empty", Vec::new()),
        (
            "not UTF-8",
            b"{\"jsonrpc\": \"2.0\", \"method\": \"\xff\xfe\"}".to_vec(),
        ),
    ] {
        let answer = post(&served, JSON, body).await;
        let message = refused(&answer, -32700, what);
        assert!(
            message.contains("send one JSON-RPC message"),
            "{what}: {message}"
        );
        assert!(
            answer.body.get("id").is_none(),
            "{what}: no id could be read"
        );
    }
    served.server.shutdown().await;
    served.hub.shutdown().await;
}

#[tokio::test]
async fn json_that_is_no_json_rpc_message_gets_an_invalid_request_error() {
    let served = serve_hub("options: { demo: true }\n").await;
    for (what, body, id) in [
        ("an empty batch", json!([]), Value::Null),
        (
            "a batch",
            json!([{"jsonrpc": "2.0", "id": 1, "method": "ping"}]),
            Value::Null,
        ),
        ("a number", json!(42), Value::Null),
        ("a string", json!("tools/list"), Value::Null),
        (
            "no jsonrpc",
            json!({"id": 7, "method": "tools/list"}),
            json!(7),
        ),
        (
            "jsonrpc 1.0",
            json!({"jsonrpc": "1.0", "id": "a", "method": "ping"}),
            json!("a"),
        ),
        (
            "a method that is no string",
            json!({"jsonrpc": "2.0", "id": 2, "method": 5}),
            json!(2),
        ),
        (
            "an id that is an object",
            json!({"jsonrpc": "2.0", "id": {}, "method": "ping"}),
            Value::Null,
        ),
        (
            "neither method nor result",
            json!({"jsonrpc": "2.0", "id": 3}),
            json!(3),
        ),
        ("an empty object", json!({}), Value::Null),
    ] {
        let answer = post(&served, JSON, body.to_string()).await;
        let message = refused(&answer, -32600, what);
        assert!(
            message.starts_with("not a JSON-RPC request"),
            "{what}: {message}"
        );
        assert_eq!(
            answer.body.get("id").cloned().unwrap_or(Value::Null),
            id,
            "{what}"
        );
    }
    served.server.shutdown().await;
    served.hub.shutdown().await;
}

#[tokio::test]
async fn a_wrong_or_missing_content_type_gets_400_not_415() {
    let served = serve_hub("options: { demo: true }\n").await;
    let ping = json!({"jsonrpc": "2.0", "id": 1, "method": "ping"}).to_string();
    for content_type in [
        None,
        Some("text/plain"),
        Some("application/x-www-form-urlencoded"),
    ] {
        let answer = post(&served, content_type, ping.clone()).await;
        let message = refused(&answer, -32600, &format!("{content_type:?}"));
        assert!(message.contains("must be application/json"), "{message}");
    }
    served.server.shutdown().await;
    served.hub.shutdown().await;
}

#[tokio::test]
async fn a_known_method_with_params_of_the_wrong_type_gets_invalid_params_with_its_id() {
    let served = serve_hub("options: { demo: true }\n").await;
    let body = json!({"jsonrpc": "2.0", "id": 9, "method": "initialize", "params": 42});
    let answer = post(&served, JSON, body.to_string()).await;
    refused(&answer, -32602, "initialize with params 42");
    assert_eq!(answer.body["id"], 9);
    served.server.shutdown().await;
    served.hub.shutdown().await;
}

#[tokio::test]
async fn a_body_over_four_mebibytes_gets_413_with_a_json_rpc_error() {
    let served = serve_hub("options: { demo: true }\n").await;
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "ping", "params": {"pad": "x".repeat(5 << 20)}});
    let answer = post(&served, JSON, body.to_string()).await;
    assert_eq!(answer.status, 413, "{}", answer.body);
    assert_eq!(answer.body["error"]["code"], -32600, "{}", answer.body);
    served.server.shutdown().await;
    served.hub.shutdown().await;
}

#[tokio::test]
async fn the_hub_serves_on_after_malformed_requests() {
    let served = serve_hub("options: { demo: true }\n").await;
    for body in ["{", "[]", "42", "{\"jsonrpc\":\"2.0\"}"] {
        let answer = post(&served, JSON, body).await;
        assert_eq!(answer.status, 400, "{body}: {}", answer.body);
    }
    // A well-formed initialize still starts a session, in charset-qualified JSON too.
    let initialize = json!({
        "jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}}
    });
    let response = reqwest::Client::new()
        .post(served.server.mcp_url())
        .header(AUTHORIZATION, format!("Bearer {}", served.token))
        .header(ACCEPT, "application/json, text/event-stream")
        .header(CONTENT_TYPE, "application/json; charset=utf-8")
        .body(initialize.to_string())
        .send()
        .await
        .expect("an answer");
    assert_eq!(response.status().as_u16(), 200);
    assert!(response.headers().contains_key("mcp-session-id"));
    let text = response.text().await.expect("body");
    assert!(text.contains("\"serverInfo\""), "{text}");
    served.server.shutdown().await;
    served.hub.shutdown().await;
}
