//! The demo's direct calls (`DemoServer::call_direct`, the hub's in-process road, issue 42) answer
//! exactly what its MCP server answers through the session: every tool it lists, with good,
//! missing, mistyped and extra arguments, an unknown tool, and calls that change the notes, in
//! the same order on two demos side by side. Compared as the hub's client returns them
//! (`capa_upstream::Upstream::call`): the result as JSON, or the error's code and words.

use std::sync::Arc;
use std::time::Duration;

use capa_demo::{Notes, spawn_in_process};
use capa_upstream::{Upstream, UpstreamSpec, UpstreamState, UpstreamTransport};
use serde_json::{Value, json};

async fn demo(direct: bool) -> Arc<Upstream> {
    let spec = UpstreamSpec {
        source_id: "demo".into(),
        connection: None,
        transport: UpstreamTransport::InProcess {
            name: "demo".into(),
            connect: Arc::new(move || {
                Box::pin(async move {
                    let mut server = spawn_in_process(Notes::in_memory());
                    if !direct {
                        server.direct = None;
                    }
                    Ok(server)
                })
            }),
        },
        call_timeout: Duration::from_secs(30),
    };
    let (events, _) = tokio::sync::mpsc::unbounded_channel();
    let upstream = Upstream::start(spec, events);
    upstream.settled(Duration::from_secs(30)).await;
    assert_eq!(upstream.status().state, UpstreamState::Ready);
    upstream
}

/// A call's outcome as the hub sees it.
async fn outcome(upstream: &Upstream, tool: &str, arguments: &Value) -> Value {
    let arguments = match arguments {
        Value::Null => None,
        other => Some(other.as_object().expect("an object").clone()),
    };
    match upstream.call(tool, arguments, None).await {
        Ok(result) => serde_json::to_value(result).expect("JSON"),
        Err(e) => json!({ "error": e.code(), "message": e.to_string() }),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn direct_calls_answer_what_the_session_answers() {
    let session = demo(false).await;
    let direct = demo(true).await;
    let listed: Vec<String> = session.tools().iter().map(|t| t.name.to_string()).collect();
    assert_eq!(listed.len(), 8, "{listed:?}");

    let mut calls: Vec<(String, Value)> = Vec::new();
    // Every listed tool with no arguments, empty ones and extra ones: a tool the direct road
    // did not know would answer "tool not found" where the session parses its arguments.
    for tool in &listed {
        calls.push((tool.clone(), Value::Null));
        calls.push((tool.clone(), json!({})));
        calls.push((tool.clone(), json!({"unexpected": true})));
    }
    calls.extend(
        [
            ("echo", json!({"text": "héllo \"quoted\" \\ back"})),
            ("echo", json!({"text": 5})),
            ("add", json!({"a": 2, "b": 3.5})),
            ("add", json!({"a": "2", "b": 3})),
            ("multiply", json!({"a": 1e308, "b": 10})),
            ("divide", json!({"a": 1, "b": 0})),
            ("divide", json!({"a": 9, "b": 3})),
            ("write_note", json!({"title": "t", "text": "one"})),
            ("write_note", json!({"title": " ", "text": "no title"})),
            ("read_note", json!({"title": "t"})),
            ("list_notes", json!({})),
            ("delete_note", json!({"title": "t"})),
            ("delete_note", json!({"title": "t"})),
            ("read_note", json!({"title": "t"})),
            ("no_such_tool", json!({})),
        ]
        .map(|(tool, args)| (tool.to_owned(), args)),
    );
    for (tool, arguments) in &calls {
        let expected = outcome(&session, tool, arguments).await;
        let got = outcome(&direct, tool, arguments).await;
        assert_eq!(got, expected, "{tool} {arguments}");
    }
    session.shutdown().await;
    direct.shutdown().await;
}

/// A server's direct call that never answers, and says when it was dropped: what no demo tool
/// can be made to do (they answer at once), for the timeout and cancellation around the road.
struct Hangs(Arc<std::sync::atomic::AtomicBool>);

struct DroppedFlag(Arc<std::sync::atomic::AtomicBool>);

impl Drop for DroppedFlag {
    fn drop(&mut self) {
        self.0.store(true, std::sync::atomic::Ordering::SeqCst);
    }
}

impl capa_upstream::DirectCalls for Hangs {
    fn call_tool(
        &self,
        _name: &str,
        _arguments: Option<rmcp::model::JsonObject>,
    ) -> capa_upstream::DirectAnswer {
        let flag = DroppedFlag(self.0.clone());
        Box::pin(async move {
            let _flag = flag;
            std::future::pending().await
        })
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_direct_call_keeps_the_call_timeout_and_ends_when_the_call_is_dropped() {
    let dropped = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let hangs = dropped.clone();
    let spec = UpstreamSpec {
        source_id: "demo".into(),
        connection: None,
        transport: UpstreamTransport::InProcess {
            name: "demo".into(),
            connect: Arc::new(move || {
                let hangs = hangs.clone();
                Box::pin(async move {
                    let mut server = spawn_in_process(Notes::in_memory());
                    server.direct = Some(Arc::new(Hangs(hangs)));
                    Ok(server)
                })
            }),
        },
        call_timeout: Duration::from_millis(300),
    };
    let (events, _) = tokio::sync::mpsc::unbounded_channel();
    let upstream = Upstream::start(spec, events);
    upstream.settled(Duration::from_secs(30)).await;

    let err = upstream
        .call("echo", json!({"text": "x"}).as_object().cloned(), None)
        .await
        .expect_err("the call times out");
    assert_eq!(err.code(), "upstream_timeout", "{err}");
    assert!(
        dropped.load(std::sync::atomic::Ordering::SeqCst),
        "the server's call outlived its timeout"
    );

    // A caller that goes away (a cancelled run) drops the server's call with it.
    dropped.store(false, std::sync::atomic::Ordering::SeqCst);
    let call = upstream.call("echo", json!({"text": "y"}).as_object().cloned(), None);
    assert!(
        tokio::time::timeout(Duration::from_millis(50), call)
            .await
            .is_err()
    );
    assert!(
        dropped.load(std::sync::atomic::Ordering::SeqCst),
        "the server's call outlived its caller"
    );
    upstream.shutdown().await;
}
