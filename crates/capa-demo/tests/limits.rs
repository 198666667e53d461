//! Issue 16: the built-in demo through the hub's client (`capa-upstream`), as the hub reaches
//! it: a call whose arguments are over the message cap fails at once with a typed error, and the
//! demo serves the next call. Both roads a call can take are held to it (issue 42): through the
//! session (the in-memory pipe) and called directly.

use std::sync::Arc;
use std::time::Duration;

use capa_demo::{Notes, spawn_in_process};
use capa_upstream::{Upstream, UpstreamSpec, UpstreamState, UpstreamTransport};
use serde_json::json;

/// How a call reaches the demo.
#[derive(Debug, Clone, Copy)]
enum Road {
    Session,
    Direct,
}

async fn demo(road: Road) -> Arc<Upstream> {
    let spec = UpstreamSpec {
        source_id: "demo".into(),
        connection: None,
        transport: UpstreamTransport::InProcess {
            name: "demo".into(),
            connect: Arc::new(move || {
                Box::pin(async move {
                    let mut server = spawn_in_process(Notes::in_memory());
                    if matches!(road, Road::Session) {
                        server.direct = None;
                    }
                    Ok(server)
                })
            }),
        },
        // Far longer than nextest lets a test run: a call that waited for its timeout instead of
        // failing at once would fail the test by hanging it.
        call_timeout: Duration::from_hours(1),
    };
    let (events, _) = tokio::sync::mpsc::unbounded_channel();
    let upstream = Upstream::start(spec, events);
    upstream.settled(Duration::from_secs(30)).await;
    assert_eq!(upstream.status().state, UpstreamState::Ready);
    upstream
}

async fn echo(upstream: &Upstream, text: String) -> Result<String, capa_upstream::UpstreamError> {
    let arguments = json!({ "text": text }).as_object().cloned();
    let result = upstream.call("echo", arguments, None).await?;
    Ok(result
        .content
        .first()
        .and_then(|c| c.as_text())
        .map(|t| t.text.clone())
        .unwrap_or_default())
}

#[test]
fn the_demo_reads_what_the_hub_reads() {
    assert_eq!(
        capa_demo::MAX_MESSAGE_BYTES,
        capa_upstream::MAX_MESSAGE_BYTES
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn arguments_over_the_message_cap_fail_at_once_and_the_demo_serves_on_through_the_session() {
    arguments_over_the_message_cap_fail_at_once_and_the_demo_serves_on(Road::Session).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn arguments_over_the_message_cap_fail_at_once_and_the_demo_serves_on_called_directly() {
    arguments_over_the_message_cap_fail_at_once_and_the_demo_serves_on(Road::Direct).await;
}

async fn arguments_over_the_message_cap_fail_at_once_and_the_demo_serves_on(road: Road) {
    let upstream = demo(road).await;
    let err = echo(&upstream, "x".repeat(10_000_000))
        .await
        .expect_err("10 MB of arguments are over the cap");
    assert_eq!(err.code(), "arguments_too_large", "{err}");
    assert!(!err.retryable());
    assert!(
        matches!(err, capa_upstream::UpstreamError::ArgumentsTooLarge { bytes, limit, .. }
            if bytes > 10_000_000 && limit == capa_upstream::MAX_MESSAGE_BYTES),
        "{err:?}"
    );
    assert!(err.to_string().contains("send less per call"), "{err}");

    // The same connection and the same server: the next call, and one just under the cap.
    assert_eq!(
        echo(&upstream, "next".into()).await.expect("serves"),
        "next"
    );
    let under = "y".repeat(7_000_000);
    assert_eq!(
        echo(&upstream, under.clone()).await.expect("7 MB fits"),
        under
    );
    assert_eq!(upstream.status().state, UpstreamState::Ready);
    assert_eq!(upstream.status().restarts, 0);
    upstream.shutdown().await;
}
