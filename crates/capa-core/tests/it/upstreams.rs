use std::time::Duration;

use serde_json::json;

use crate::support::{TestHub, everything_js, filesystem_js, text, time_server};

#[tokio::test]
async fn stdio_sources_from_npm_and_pypi_are_aggregated() {
    let files = tempfile::tempdir().expect("tempdir");
    std::fs::write(files.path().join("hello.txt"), "hello from disk").expect("write");
    let yaml = format!(
        r#"
servers:
  - id: everything
    type: mcp
    def: {{ command: node, args: ["{}", stdio] }}
  - id: filesystem
    type: mcp
    def: {{ command: node, args: ["{}", "{}"] }}
  - id: time
    type: mcp
    def: {{ command: "{}" }}
"#,
        everything_js(),
        filesystem_js(),
        files.path().display(),
        time_server()
    );
    let t = TestHub::start(&yaml).await;
    let addresses = t.addresses();
    for wanted in [
        "everything.echo",
        "everything.get-sum",
        "filesystem.read_text_file",
        "time.get_current_time",
    ] {
        assert!(
            addresses.contains(&wanted.to_owned()),
            "{wanted} missing from {addresses:?}"
        );
    }
    let echoed = t
        .call("everything.echo", json!({"message": "hi"}))
        .await
        .expect("echo");
    assert!(text(&echoed).contains("hi"));
    let path = files.path().join("hello.txt").display().to_string();
    let read = t
        .call("filesystem.read_text_file", json!({"path": path}))
        .await
        .expect("read");
    assert!(text(&read).contains("hello from disk"), "{read}");
    let now = t
        .call("time.get_current_time", json!({"timezone": "UTC"}))
        .await
        .expect("time");
    assert!(text(&now).contains("UTC"), "{now}");
    // mcp-server-time speaks 2026-07-28: the hub negotiates it; the others fall back.
    assert_eq!(
        t.source("time").protocol_version.as_deref(),
        Some("2026-07-28")
    );
    assert!(t.source("everything").protocol_version.is_some());
    t.hub.shutdown().await;
}

#[tokio::test]
async fn streamable_http_sources_are_reached_by_url() {
    let port = free_port();
    let mut server = tokio::process::Command::new("node")
        .arg(everything_js())
        .arg("streamableHttp")
        .env("PORT", port.to_string())
        .stderr(std::process::Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .expect("start server-everything over HTTP");
    wait_for_port(port).await;
    let yaml = format!(
        "servers:\n  - id: remote\n    type: mcp\n    def: {{ url: \"http://127.0.0.1:{port}/mcp\" }}\n"
    );
    let t = TestHub::start(&yaml).await;
    assert_eq!(
        t.source("remote").state,
        capa_core::SourceState::Ready,
        "{:?}",
        t.source("remote")
    );
    let sum = t
        .call("remote.get-sum", json!({"a": 20, "b": 22}))
        .await
        .expect("sum");
    assert!(text(&sum).contains("42"), "{sum}");
    t.hub.shutdown().await;
    let _ = server.kill().await;
}

pub(crate) fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .expect("bind")
        .local_addr()
        .expect("addr")
        .port()
}

pub(crate) async fn wait_for_port(port: u16) {
    for _ in 0..200 {
        if tokio::net::TcpStream::connect(("127.0.0.1", port))
            .await
            .is_ok()
        {
            return;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("nothing listens on port {port}");
}

#[tokio::test]
async fn a_source_that_announces_new_tools_is_listed_again() {
    let script = crate::support::installed("tests/fixtures/growing_server.py");
    let python = crate::support::installed("tests/.venv/bin/python");
    let yaml = format!(
        "servers:\n  - id: grow\n    type: mcp\n    def: {{ command: \"{python}\", args: [\"{script}\"] }}\n"
    );
    let t = TestHub::start(&yaml).await;
    assert!(
        t.addresses().contains(&"grow.grow".to_owned()),
        "{:?}",
        t.addresses()
    );
    let mut changes = t.hub.watch_catalog();
    changes.mark_unchanged();
    let grown = t
        .call("grow.grow", json!({"name": "fresh"}))
        .await
        .expect("grow");
    assert!(text(&grown).contains("added fresh"), "{grown}");
    let seen = crate::support::eventually(Duration::from_secs(10), || {
        t.hub.catalog().get("grow.fresh").is_some()
    })
    .await;
    assert!(
        seen,
        "grow.fresh never appeared; tools: {:?}",
        t.addresses()
    );
    assert!(changes.has_changed().unwrap_or(false));
    let fresh = t
        .call("grow.fresh", json!({}))
        .await
        .expect("call the new tool");
    assert!(text(&fresh).contains("fresh"), "{fresh}");
    t.hub.shutdown().await;
}

#[tokio::test]
async fn progress_of_a_long_call_reaches_the_caller() {
    let yaml = format!(
        "servers:\n  - id: ev\n    type: mcp\n    def: {{ command: node, args: [\"{}\", stdio] }}\n",
        everything_js()
    );
    let t = TestHub::start(&yaml).await;
    let (sink, mut reports) = tokio::sync::mpsc::unbounded_channel();
    let context = capa_core::CallContext {
        progress: Some(sink),
        ..Default::default()
    };
    let args = serde_json::from_value(json!({"duration": 1, "steps": 4})).expect("args");
    let result = t
        .hub
        .call(
            super::support::permit(&t.hub, "ev.trigger-long-running-operation").await,
            Some(args),
            &context,
        )
        .await
        .expect("call");
    assert_ne!(result.is_error, Some(true), "{result:?}");
    drop(context);
    let mut seen = Vec::new();
    while let Some(report) = reports.recv().await {
        seen.push(report);
    }
    // Progress is best effort (a report racing the answer may be dropped), but it arrives in order.
    assert!(seen.len() >= 2, "{seen:?}");
    assert!(
        seen.windows(2).all(|w| w[0].progress < w[1].progress),
        "{seen:?}"
    );
    assert!(
        seen.iter()
            .all(|p| p.total == Some(4.0) && p.progress <= 4.0),
        "{seen:?}"
    );
    t.hub.shutdown().await;
}
