//! How `/mcp` answers a POST of a 2025-era session (crate `mcp_reply`): an answer ready at once
//! as `application/json`; a request whose first message is a notification, or that is still
//! working after a second, as the SSE stream rmcp makes, priming event first. A real upstream
//! (server-everything, whose `trigger-long-running-operation` sends progress) behind a hub in
//! expose-all, spoken to over raw HTTP so that the wire itself is checked.

use std::time::{Duration, Instant};

use reqwest::header::{ACCEPT, AUTHORIZATION, CONTENT_TYPE};
use serde_json::{Value, json};

mod support;

use support::{Served, node, repo_file, serve_hub};

async fn hub() -> Served {
    let node = node();
    let yaml = format!(
        "options: {{ demo: false, toolExposure: expose-all }}\nservers:\n  - id: ev\n    type: mcp\n    def: {{ command: \"{node}\", args: [\"{}\", stdio] }}\n",
        repo_file("node_modules/@modelcontextprotocol/server-everything/dist/index.js"),
    );
    serve_hub(&yaml).await
}

/// A raw 2025-11-25 session.
struct Session {
    http: reqwest::Client,
    url: String,
    token: String,
    id: Option<String>,
}

/// One answer: its Content-Type and its body.
struct Reply {
    content_type: String,
    body: String,
}

impl Session {
    async fn open(served: &Served) -> (Self, Reply) {
        let mut session = Self {
            http: reqwest::Client::new(),
            url: served.server.mcp_url(),
            token: served.token.clone(),
            id: None,
        };
        let (headers, reply) = session
            .post(
                json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
                "protocolVersion": "2025-11-25", "capabilities": {},
                "clientInfo": {"name": "raw", "version": "1"}}}),
            )
            .await;
        session.id = Some(
            headers
                .get("mcp-session-id")
                .and_then(|v| v.to_str().ok())
                .expect("the session's id, in the headers of a JSON answer too")
                .to_owned(),
        );
        session
            .post(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
            .await;
        (session, reply)
    }

    async fn post(&self, body: Value) -> (reqwest::header::HeaderMap, Reply) {
        let mut request = self
            .http
            .post(&self.url)
            .header(AUTHORIZATION, format!("Bearer {}", self.token))
            .header(ACCEPT, "application/json, text/event-stream")
            .header(CONTENT_TYPE, "application/json")
            .body(body.to_string());
        if let Some(id) = &self.id {
            request = request
                .header("mcp-session-id", id)
                .header("mcp-protocol-version", "2025-11-25");
        }
        let response = request.send().await.expect("a response");
        let headers = response.headers().clone();
        let content_type = headers
            .get(CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default()
            .to_owned();
        let body = response.text().await.expect("a body");
        (headers, Reply { content_type, body })
    }
}

/// The `data:` of each SSE event with data, in order (the priming event's is empty).
fn events(stream: &str) -> Vec<String> {
    stream
        .split("\n\n")
        .filter_map(|event| {
            let data: Vec<&str> = event
                .lines()
                .filter_map(|line| line.strip_prefix("data:"))
                .map(str::trim_start)
                .collect();
            (!data.is_empty()).then(|| data.join("\n"))
        })
        .collect()
}

fn long_call(id: u64, seconds: f64, steps: u64, progress: bool) -> Value {
    let mut params = json!({"name": "ev.trigger-long-running-operation",
        "arguments": {"duration": seconds, "steps": steps}});
    if progress {
        params["_meta"] = json!({"progressToken": format!("p{id}")});
    }
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params})
}

#[tokio::test]
async fn an_answer_ready_at_once_is_one_json_message() {
    let served = hub().await;
    let (session, initialized) = Session::open(&served).await;
    assert_eq!(initialized.content_type, "application/json");
    let init: Value = serde_json::from_str(&initialized.body).expect("one JSON message");
    assert_eq!(init["id"], 0);
    assert!(init["result"]["serverInfo"].is_object(), "{init}");

    let (_, pong) = session
        .post(json!({"jsonrpc": "2.0", "id": 1, "method": "ping"}))
        .await;
    assert_eq!(pong.content_type, "application/json");
    assert_eq!(
        serde_json::from_str::<Value>(&pong.body).expect("JSON"),
        json!({"jsonrpc": "2.0", "id": 1, "result": {}})
    );

    let (_, echoed) = session
        .post(
            json!({"jsonrpc": "2.0", "id": "two", "method": "tools/call",
            "params": {"name": "ev.echo", "arguments": {"message": "a \"quoted\" \\ line\n\n"}}}),
        )
        .await;
    assert_eq!(echoed.content_type, "application/json");
    let echoed: Value = serde_json::from_str(&echoed.body).expect("JSON");
    assert_eq!(echoed["id"], "two");
    assert!(
        echoed["result"]["content"][0]["text"]
            .as_str()
            .is_some_and(|text| text.ends_with("a \"quoted\" \\ line\n\n")),
        "{echoed}"
    );
    served.hub.shutdown().await;
}

#[tokio::test]
async fn progress_before_the_answer_keeps_the_stream_in_order() {
    let served = hub().await;
    let (session, _) = Session::open(&served).await;
    let (_, reply) = session.post(long_call(5, 0.3, 3, true)).await;
    assert_eq!(reply.content_type, "text/event-stream", "{}", reply.body);
    let messages: Vec<Value> = events(&reply.body)
        .iter()
        .filter(|data| !data.is_empty())
        .map(|data| serde_json::from_str(data).expect("JSON"))
        .collect();
    let progress: Vec<&Value> = messages
        .iter()
        .filter(|m| m["method"] == "notifications/progress")
        .collect();
    assert_eq!(progress.len(), 3, "{messages:?}");
    assert_eq!(progress[0]["params"]["progressToken"], "p5");
    let last = messages.last().expect("messages");
    assert_eq!(last["id"], 5, "the answer comes last: {messages:?}");
    assert!(last["result"]["content"].is_array(), "{last}");
    served.hub.shutdown().await;
}

#[tokio::test]
async fn a_request_still_working_after_the_hold_gets_its_stream_from_the_priming_event() {
    let served = hub().await;
    let (session, _) = Session::open(&served).await;
    let started = Instant::now();
    let (_, reply) = session.post(long_call(6, 1.6, 1, false)).await;
    assert!(started.elapsed() >= Duration::from_millis(1_500));
    assert_eq!(reply.content_type, "text/event-stream", "{}", reply.body);
    let data = events(&reply.body);
    assert_eq!(
        data.first().map(String::as_str),
        Some(""),
        "the priming event first: {}",
        reply.body
    );
    assert!(
        reply.body.lines().any(|line| line.starts_with("id:")),
        "an event id to resume from: {}",
        reply.body
    );
    let answer: Value = serde_json::from_str(data.last().expect("the answer")).expect("JSON");
    assert_eq!(answer["id"], 6);
    served.hub.shutdown().await;
}
