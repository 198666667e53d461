//! Broken upstreams give typed errors and the hub keeps serving.

use std::time::Duration;

use serde_json::json;

use crate::support::{TestHub, eventually, everything_js, text};

fn everything(options: &str) -> String {
    format!(
        "options: {{ {options} }}\nservers:\n  - id: ev\n    type: mcp\n    def: {{ command: node, args: [\"{}\", stdio] }}\n",
        everything_js()
    )
}

#[tokio::test]
async fn a_source_that_cannot_start_is_down_and_the_rest_still_serve() {
    let t = TestHub::start("servers:\n  - id: broken\n    type: mcp\n    def: { command: /nonexistent/capa-test-server }\n").await;
    let broken = t.source("broken");
    assert_eq!(broken.state, capa_core::SourceState::Down);
    assert!(
        broken
            .last_error
            .as_deref()
            .unwrap_or("")
            .contains("cannot start"),
        "{broken:?}"
    );
    let sum = t
        .call("demo.add", json!({"a": 1, "b": 1}))
        .await
        .expect("demo still serves");
    assert_eq!(text(&sum), "2");
}

#[tokio::test]
async fn an_upstream_that_does_not_answer_in_time_gives_a_retryable_timeout() {
    let t = TestHub::start(&everything("upstreamTimeoutMs: 500")).await;
    let err = t
        .call(
            "ev.trigger-long-running-operation",
            json!({"duration": 5, "steps": 5}),
        )
        .await
        .expect_err("times out");
    assert_eq!(err.code(), "upstream_timeout");
    // The call takes 5 s at the server; the code says the hub's 500 ms timeout cut it.
    assert!(err.retryable());
    let echoed = t
        .call("ev.echo", json!({"message": "still here"}))
        .await
        .expect("serves after");
    assert!(text(&echoed).contains("still here"));
    let calls = t.store().recent_calls(5).expect("history");
    assert!(
        calls
            .iter()
            .any(|c| c.call.error_code.as_deref() == Some("upstream_timeout"))
    );
}

#[tokio::test]
async fn a_child_killed_mid_call_gives_a_typed_error_and_is_restarted() {
    let t = TestHub::start(&everything("")).await;
    let pid = t.source("ev").pid.expect("child pid");
    let hub = t.hub.clone();
    let call = tokio::spawn(async move {
        let args = serde_json::from_value(json!({"duration": 20, "steps": 20})).expect("args");
        hub.call(
            super::support::permit(&hub, "ev.trigger-long-running-operation").await,
            Some(args),
            &capa_core::CallContext::default(),
        )
        .await
    });
    tokio::time::sleep(Duration::from_millis(500)).await;
    let killed = std::process::Command::new("kill")
        .args(["-9", &pid.to_string()])
        .status();
    assert!(killed.expect("kill runs").success());
    let err = call.await.expect("joined").expect_err("call fails");
    assert_eq!(err.code(), "upstream_unavailable", "{err}");
    assert!(err.retryable());
    // The hub serves on, and the child comes back.
    let sum = t
        .call("demo.add", json!({"a": 2, "b": 2}))
        .await
        .expect("demo serves");
    assert_eq!(text(&sum), "4");
    assert!(
        eventually(Duration::from_secs(15), || {
            let s = t.source("ev");
            s.state == capa_core::SourceState::Ready && s.pid.is_some_and(|p| p != pid)
        })
        .await,
        "restarted: {:?}",
        t.source("ev")
    );
    assert!(t.source("ev").restarts >= 1);
    let echoed = t
        .call("ev.echo", json!({"message": "back"}))
        .await
        .expect("works again");
    assert!(text(&echoed).contains("back"));
}

#[tokio::test]
async fn a_call_that_asks_for_progress_still_times_out() {
    let t = TestHub::start(&everything("upstreamTimeoutMs: 500")).await;
    let (sink, _reports) = tokio::sync::mpsc::unbounded_channel();
    let context = capa_core::CallContext {
        progress: Some(sink),
        ..Default::default()
    };
    let args = serde_json::from_value(json!({"duration": 5, "steps": 5})).expect("args");
    let err = t
        .hub
        .call(
            super::support::permit(&t.hub, "ev.trigger-long-running-operation").await,
            Some(args),
            &context,
        )
        .await
        .expect_err("times out");
    // Progress every second does not hold the 500 ms timeout open.
    assert_eq!(err.code(), "upstream_timeout", "{err}");
}
