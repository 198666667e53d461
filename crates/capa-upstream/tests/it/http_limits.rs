//! Issue 16: the bounds of `limits.rs` over Streamable HTTP, against the same real server as
//! over stdio (`flood_server.py --http`, the official Python SDK), answering with SSE streams (the
//! SDK's default) or with JSON bodies (`--json-response`).

use std::path::Path;
use std::process::Stdio;
use std::sync::Arc;
use std::time::Duration;

use capa_upstream::{Upstream, UpstreamSpec, UpstreamState, UpstreamTransport};
use serde_json::json;
use tokio::io::{AsyncBufReadExt, BufReader};

use crate::limits::{args, python, text};

/// The server's answers: SSE streams, or JSON bodies.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Answers {
    Sse,
    Json,
}

struct HttpFlood {
    upstream: Arc<Upstream>,
    /// `kill_on_drop`: the server ends with the test.
    _server: tokio::process::Child,
}

async fn flood_http(answers: Answers, extra: &[&str]) -> HttpFlood {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/flood_server.py");
    let mut cmd = tokio::process::Command::new(python());
    cmd.arg(script).arg("--http").args(extra);
    if answers == Answers::Json {
        cmd.arg("--json-response");
    }
    let mut server = cmd
        .stdout(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("python starts");
    let stdout = server.stdout.take().expect("stdout");
    let url = BufReader::new(stdout)
        .lines()
        .next_line()
        .await
        .expect("reads")
        .expect("the server prints its address");
    let spec = UpstreamSpec {
        source_id: "flood".into(),
        connection: None,
        transport: UpstreamTransport::Http {
            oauth: None,
            url,
            headers: std::collections::BTreeMap::default(),
        },
        // Far longer than nextest lets a test run: a call that waited for its timeout instead of
        // failing at once would fail the test by hanging it.
        call_timeout: Duration::from_hours(1),
    };
    let (events, _) = tokio::sync::mpsc::unbounded_channel();
    let upstream = Upstream::start(spec, events);
    upstream.settled(Duration::from_mins(1)).await;
    HttpFlood {
        upstream,
        _server: server,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn over_http_a_20_mb_answer_fails_at_once_with_result_too_large() {
    for answers in [Answers::Json, Answers::Sse] {
        let flood = flood_http(answers, &[]).await;
        let upstream = &flood.upstream;
        assert_eq!(
            upstream.status().state,
            UpstreamState::Ready,
            "{answers:?}: {:?}",
            upstream.status()
        );
        let err = upstream
            .call("big", args(json!({"bytes": 20_000_000})), None)
            .await
            .expect_err("20 MB is over the limit");
        assert_eq!(err.code(), "result_too_large", "{answers:?}: {err}");
        assert!(!err.retryable());
        let echoed = upstream
            .call("echo", args(json!({"text": "still here"})), None)
            .await
            .expect("serves after");
        assert_eq!(text(&echoed), "still here");
        upstream.shutdown().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn over_http_a_result_nested_too_deep_fails_at_once_with_result_too_deep() {
    for answers in [Answers::Json, Answers::Sse] {
        let flood = flood_http(answers, &[]).await;
        let upstream = &flood.upstream;
        let err = upstream
            .call("deep_result", args(json!({"levels": 150})), None)
            .await
            .expect_err("150 levels are more than the hub reads");
        assert_eq!(err.code(), "result_too_deep", "{answers:?}: {err}");
        assert!(!err.retryable());
        let echoed = upstream
            .call("echo", args(json!({"text": "still here"})), None)
            .await
            .expect("serves after");
        assert_eq!(text(&echoed), "still here");
        upstream.shutdown().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn over_http_sse_a_deep_tool_is_listed_cut_and_the_source_serves_all_its_tools() {
    let flood = flood_http(Answers::Sse, &["--deep-schema", "100"]).await;
    let upstream = &flood.upstream;
    let status = upstream.status();
    assert_eq!(status.state, UpstreamState::Ready, "{status:?}");
    let tools = upstream.tools();
    let deep = tools.iter().find(|t| t.name == "deep").expect("listed");
    assert!(
        serde_json::to_string(&deep.input_schema)
            .expect("json")
            .contains("\"x-capa-cut\":\"nested_too_deep\""),
    );
    assert!(
        status
            .limited
            .iter()
            .any(|l| l.contains("input schema of `deep`")),
        "{:?}",
        status.limited
    );
    for name in ["echo", "deep"] {
        let result = upstream
            .call(name, args(json!({"text": "served"})), None)
            .await
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        assert!(!text(&result).is_empty());
    }
    upstream.shutdown().await;
}

/// What rmcp does not let the hub change: a JSON body is decoded inside rmcp's HTTP client,
/// before the hub sees its bytes, so a deep tool list there cannot be cut. The listing fails at
/// once, and the source is down saying why.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn over_http_json_a_deep_tool_list_fails_at_once_and_says_why() {
    let flood = flood_http(Answers::Json, &["--deep-schema", "100"]).await;
    let status = flood.upstream.status();
    assert_eq!(status.state, UpstreamState::Down, "{status:?}");
    let error = status.last_error.unwrap_or_default();
    assert!(
        error.contains("nested") && error.contains("deep"),
        "{error}"
    );
    flood.upstream.shutdown().await;
}
