//! Issue 16: a direct call to the built-in demo whose arguments are over the message cap fails
//! at once with a typed, non-retryable error (it used to be dropped unread by the demo and end
//! as `upstream_timeout`, "try again later"), and the demo serves the next call.

use serde_json::json;

use crate::support::{TestHub, text};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_direct_call_with_10_mb_of_arguments_fails_with_arguments_too_large() {
    let t = TestHub::start("").await;
    let err = t
        .call("demo.echo", json!({"text": "x".repeat(10_000_000)}))
        .await
        .expect_err("10 MB of arguments are over the cap");
    assert_eq!(err.code(), "arguments_too_large", "{err}");
    assert!(!err.retryable());
    let echoed = t
        .call("demo.echo", json!({"text": "next"}))
        .await
        .expect("serves");
    assert_eq!(text(&echoed), "next");
    assert_eq!(t.source("demo").state, capa_core::SourceState::Ready);
}
