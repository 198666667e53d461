//! Issue 14, item 8: what an upstream sends is bounded, with typed errors, and the source stays
//! connected. The upstream is `tests/fixtures/flood_server.py`, a real MCP server (official
//! Python SDK) that sends too much on request.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use capa_upstream::{
    MAX_DESCRIPTION_BYTES, MAX_MESSAGE_BYTES, MAX_TOOL_NESTING, MAX_TOOL_PAGES, MAX_TOOLS,
    Upstream, UpstreamSpec, UpstreamState, UpstreamTransport,
};
use serde_json::json;

pub(crate) fn python() -> PathBuf {
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
            env: std::collections::BTreeMap::default(),
            cwd: None,
        },
        // Far longer than nextest lets a test run: a call that waited for its timeout instead of
        // failing at once would fail the test by hanging it.
        call_timeout: Duration::from_hours(1),
    };
    let (events, _) = tokio::sync::mpsc::unbounded_channel();
    let upstream = Upstream::start(spec, events);
    upstream.settled(Duration::from_mins(1)).await;
    assert_eq!(
        upstream.status().state,
        UpstreamState::Ready,
        "{:?}",
        upstream.status()
    );
    upstream
}

pub(crate) fn text(result: &capa_upstream::CallToolResult) -> String {
    result
        .content
        .first()
        .and_then(|c| c.as_text())
        .map(|t| t.text.clone())
        .unwrap_or_default()
}

pub(crate) fn args(value: serde_json::Value) -> Option<capa_upstream::JsonObject> {
    match value {
        serde_json::Value::Object(members) => Some(members),
        _ => None,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_answer_over_the_message_limit_is_a_typed_error_and_the_source_stays_connected() {
    let upstream = flood(&[]).await;
    let pid = upstream.status().pid;

    // Answered when the line ended: the call timeout is an hour (`flood`).
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
    let upstream = flood(&["--tools", "20", "--page", "1", "--endless-pages"]).await;
    // 27 tools on the first 27 pages (2 of them skipped), then empty pages with cursors.
    assert_eq!(upstream.tools().len(), 25);
    let limited = upstream.status().limited;
    assert!(
        limited
            .iter()
            .any(|l| l.contains(&format!("after {MAX_TOOL_PAGES} pages"))),
        "{limited:?}"
    );
    upstream.shutdown().await;
}

/// Issue 16: one tool whose input schema nests 500 objects (1,000 levels of JSON, far past the
/// 127 that the hub's JSON decoder reads) used to cost the source every tool: the listing was
/// dropped unread. Now the deep parts are cut as the list streams in, the tool is listed with an
/// empty schema in their place, the others are untouched and every tool is callable.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tool_nested_500_levels_deep_is_listed_cut_and_the_source_serves_all_its_tools() {
    let upstream = flood(&["--deep-schema", "500", "--deep-output-schema", "500"]).await;
    let tools = upstream.tools();
    let find = |name: &str| {
        tools
            .iter()
            .find(|t| t.name == name)
            .unwrap_or_else(|| panic!("{name} listed"))
    };
    // The other tools as they were.
    assert_eq!(
        serde_json::Value::Object((*find("echo").input_schema).clone()),
        json!({"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]})
    );
    assert!(find("big").output_schema.is_none());
    // The deep ones, cut where they pass the bound, and marked there.
    let deep = serde_json::Value::Object((*find("deep").input_schema).clone());
    let deep_output = serde_json::Value::Object(
        (**find("deep_output").output_schema.as_ref().expect("kept")).clone(),
    );
    for schema in [&deep, &deep_output] {
        let mut at = schema;
        let mut levels = 1;
        while at.get("x-capa-cut").is_none() {
            assert_eq!(at["type"], "object", "{at}");
            at = &at["properties"]["x"];
            levels += 2;
        }
        assert_eq!(at["x-capa-cut"], "nested_too_deep");
        assert!(
            at["description"]
                .as_str()
                .is_some_and(|d| d.contains("nested deeper")),
            "{at}"
        );
        assert_eq!(levels, MAX_TOOL_NESTING + 1);
    }
    // Said in the status (and the log, which the supervisor writes from the same notes).
    let status = upstream.status();
    assert_eq!(status.state, UpstreamState::Ready);
    let cut_notes: Vec<&String> = status
        .limited
        .iter()
        .filter(|l| l.contains(&format!("nested deeper than {MAX_TOOL_NESTING} levels")))
        .collect();
    assert_eq!(cut_notes.len(), 2, "{:?}", status.limited);
    assert!(
        cut_notes[0].contains("input schema of `deep`"),
        "{cut_notes:?}"
    );
    assert!(
        cut_notes[1].contains("output schema of `deep_output`"),
        "{cut_notes:?}"
    );

    for (name, arguments) in [
        ("echo", json!({"text": "served"})),
        ("deep", json!({})),
        ("deep_output", json!({})),
    ] {
        let result = upstream
            .call(name, args(arguments), None)
            .await
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        assert!(!text(&result).is_empty(), "{name}");
    }
    assert_eq!(upstream.status().restarts, 0);
    upstream.shutdown().await;
}

/// A tool's result is the tool's answer, which the hub does not edit: one nested deeper than
/// it reads fails its call at once (`result_too_deep`, not retryable), and the source serves on.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_result_nested_too_deep_fails_its_call_at_once_and_the_source_serves_on() {
    let upstream = flood(&[]).await;
    let err = upstream
        .call("deep_result", args(json!({"levels": 300})), None)
        .await
        .expect_err("300 levels are more than the hub reads");
    assert_eq!(err.code(), "result_too_deep", "{err}");
    assert!(!err.retryable());
    assert!(err.to_string().contains("nested"), "{err}");
    let nested_ok = upstream
        .call("deep_result", args(json!({"levels": 100})), None)
        .await
        .expect("100 levels are read");
    assert_eq!(text(&nested_ok), "deep");
    let echoed = upstream
        .call("echo", args(json!({"text": "still here"})), None)
        .await
        .expect("serves after");
    assert_eq!(text(&echoed), "still here");
    upstream.shutdown().await;
}
