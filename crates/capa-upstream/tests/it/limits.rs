//! Issue 14, item 8: what an upstream sends is bounded, with typed errors, and the source stays
//! connected. The upstream is `tests/fixtures/flood_server.py`, a real MCP server (official
//! Python SDK) that sends too much on request.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use capa_upstream::{
    MAX_DESCRIPTION_BYTES, MAX_MESSAGE_BYTES, MAX_TOOL_PAGES, MAX_TOOLS, Upstream, UpstreamSpec,
    UpstreamState, UpstreamTransport,
};
use serde_json::json;

fn python() -> PathBuf {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/.venv/bin/python");
    assert!(
        path.exists(),
        "{} is missing: create tests/.venv (scripts/test does)",
        path.display()
    );
    path
}

async fn flood(args: &[&str]) -> Arc<Upstream> {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/flood_server.py");
    let mut all = vec![script.display().to_string()];
    all.extend(args.iter().map(|a| (*a).to_owned()));
    let spec = UpstreamSpec {
        source_id: "flood".into(),
        connection: None,
        transport: UpstreamTransport::Stdio {
            command: python().display().to_string(),
            args: all,
            env: Default::default(),
            cwd: None,
        },
        call_timeout: Duration::from_secs(60),
    };
    let (events, _) = tokio::sync::mpsc::unbounded_channel();
    let upstream = Upstream::start(spec, events);
    upstream.settled(Duration::from_secs(60)).await;
    assert_eq!(
        upstream.status().state,
        UpstreamState::Ready,
        "{:?}",
        upstream.status()
    );
    upstream
}

fn text(result: &capa_upstream::CallToolResult) -> String {
    result
        .content
        .first()
        .and_then(|c| c.as_text())
        .map(|t| t.text.clone())
        .unwrap_or_default()
}

fn args(value: serde_json::Value) -> Option<capa_upstream::JsonObject> {
    value.as_object().cloned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_answer_over_the_message_limit_is_a_typed_error_and_the_source_stays_connected() {
    let upstream = flood(&[]).await;
    let pid = upstream.status().pid;

    let started = Instant::now();
    let err = upstream
        .call("big", args(json!({"bytes": 20_000_000})), None)
        .await
        .expect_err("20 MB is over the limit");
    assert_eq!(err.code(), "result_too_large", "{err}");
    assert!(!err.retryable());
    assert!(
        matches!(err, capa_upstream::UpstreamError::TooLarge { bytes: Some(b), limit, .. }
            if b > 20_000_000 && limit == MAX_MESSAGE_BYTES),
        "{err:?}"
    );
    // Answered when the line ended, not when the 60 s call timeout ran out.
    assert!(
        started.elapsed() < Duration::from_secs(20),
        "{:?}",
        started.elapsed()
    );

    // The same connection serves the next call, and an answer just under the limit.
    let echoed = upstream
        .call("echo", args(json!({"text": "still here"})), None)
        .await
        .expect("serves after");
    assert_eq!(text(&echoed), "still here");
    let under = upstream
        .call("big", args(json!({"bytes": 7_000_000})), None)
        .await
        .expect("7 MB is under the limit");
    assert_eq!(text(&under).len(), 7_000_000);
    let status = upstream.status();
    assert_eq!(status.state, UpstreamState::Ready);
    assert_eq!(status.pid, pid, "the child was not restarted");
    assert_eq!(status.restarts, 0);
    upstream.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tools_over_the_per_tool_bounds_are_cut_or_skipped_with_a_warning() {
    let upstream = flood(&[]).await;
    let tools = upstream.tools();
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
    assert!(
        names.contains(&"big") && names.contains(&"echo"),
        "{names:?}"
    );
    // Skipped: an input schema of 300 KB, a name of 200 bytes.
    assert!(!names.contains(&"huge_schema"), "{names:?}");
    assert!(!names.iter().any(|n| n.len() > 128), "{names:?}");
    // Kept without its 300 KB output schema.
    let output = tools
        .iter()
        .find(|t| t.name == "huge_output_schema")
        .expect("kept");
    assert!(output.output_schema.is_none());
    // Cut within its byte budget, ending in `…`.
    let long = tools
        .iter()
        .find(|t| t.name == "long_description")
        .and_then(|t| t.description.as_deref())
        .expect("kept with a description");
    assert!(long.len() <= MAX_DESCRIPTION_BYTES, "{}", long.len());
    assert!(long.len() > MAX_DESCRIPTION_BYTES - 8, "{}", long.len());
    assert!(long.ends_with('…'));
    let limited = upstream.status().limited;
    assert_eq!(limited.len(), 4, "{limited:?}");
    assert!(
        limited.iter().any(|l| l.contains("huge_schema")),
        "{limited:?}"
    );
    upstream.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_source_with_too_many_tools_keeps_the_first_ones_and_says_so() {
    let upstream = flood(&["--tools", "6000", "--page", "700"]).await;
    assert_eq!(upstream.tools().len(), MAX_TOOLS);
    assert_eq!(upstream.status().tool_count, MAX_TOOLS);
    let limited = upstream.status().limited;
    assert!(
        limited
            .iter()
            .any(|l| l.contains("kept the first 5000 tools")),
        "{limited:?}"
    );
    let echoed = upstream
        .call("echo", args(json!({"text": "many"})), None)
        .await
        .expect("serves");
    assert_eq!(text(&echoed), "many");
    upstream.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_source_that_pages_forever_is_listed_up_to_the_page_limit() {
    let started = Instant::now();
    let upstream = flood(&["--tools", "20", "--page", "1", "--endless-pages"]).await;
    // 26 tools on the first 26 pages (2 of them skipped), then empty pages with cursors.
    assert_eq!(upstream.tools().len(), 24);
    let limited = upstream.status().limited;
    assert!(
        limited
            .iter()
            .any(|l| l.contains(&format!("after {MAX_TOOL_PAGES} pages"))),
        "{limited:?}"
    );
    assert!(
        started.elapsed() < Duration::from_secs(25),
        "{:?}",
        started.elapsed()
    );
    upstream.shutdown().await;
}

/// Issue 16: a tool list nested deeper than the hub's JSON decoder reads (a tool whose input
/// schema nests 100 objects, 200 levels of JSON) used to be dropped in silence, the listing
/// waiting out its timeout while the source sat in `starting`. Now the listing fails at once
/// with `result_too_deep`, and the source says why.
#[tokio::test]
async fn a_tool_list_nested_too_deep_fails_at_once_and_says_why() {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/flood_server.py");
    let spec = UpstreamSpec {
        source_id: "flood".into(),
        connection: None,
        transport: UpstreamTransport::Stdio {
            command: python().display().to_string(),
            args: vec![
                script.display().to_string(),
                "--deep-schema".into(),
                "100".into(),
            ],
            env: Default::default(),
            cwd: None,
        },
        // Longer than the test waits: a silent drop would still be `starting` at the end.
        call_timeout: Duration::from_secs(120),
    };
    let (events, _) = tokio::sync::mpsc::unbounded_channel();
    let upstream = Upstream::start(spec, events);
    upstream.settled(Duration::from_secs(60)).await;
    let status = upstream.status();
    assert_eq!(status.state, UpstreamState::Down, "{status:?}");
    let error = status.last_error.unwrap_or_default();
    assert!(
        error.contains("nested") && error.contains("levels deep"),
        "{error}"
    );
}
