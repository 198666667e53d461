use serde_json::json;

use crate::support::{TestHub, text};

#[tokio::test]
async fn the_demo_source_serves_its_tools_in_address_order() {
    let t = TestHub::start("").await;
    assert_eq!(
        t.addresses(),
        vec![
            "demo.add",
            "demo.delete_note",
            "demo.divide",
            "demo.echo",
            "demo.list_notes",
            "demo.multiply",
            "demo.read_note",
            "demo.write_note",
        ]
    );
    assert_eq!(t.source("demo").state, capa_core::SourceState::Ready);
}

#[tokio::test]
async fn demo_calls_work_and_are_recorded() {
    let t = TestHub::start("").await;
    let sum = t
        .call("demo.add", json!({"a": 2, "b": 3}))
        .await
        .expect("call");
    assert_eq!(text(&sum), "5");
    let divided = t
        .call("demo.divide", json!({"a": 1, "b": 0}))
        .await
        .expect("call");
    assert_eq!(divided["isError"], json!(true));
    assert!(text(&divided).contains("zero"));
    t.call("demo.write_note", json!({"title": "t", "text": "hello"}))
        .await
        .expect("write");
    let read = t
        .call("demo.read_note", json!({"title": "t"}))
        .await
        .expect("read");
    assert_eq!(text(&read), "hello");

    let calls = t.store().recent_calls(10).expect("history");
    let recorded: Vec<(&str, &str)> = calls
        .iter()
        .map(|c| (c.call.address.as_str(), c.call.status.as_str()))
        .collect();
    assert_eq!(
        recorded,
        vec![
            ("demo.read_note", "ok"),
            ("demo.write_note", "ok"),
            ("demo.divide", "tool_error"),
            ("demo.add", "ok")
        ]
    );
    assert!(calls.iter().all(|c| c.call.response_bytes > 0));
}

#[tokio::test]
async fn demo_notes_survive_a_restart_of_the_hub() {
    let first = TestHub::start("").await;
    first
        .call("demo.write_note", json!({"title": "keep", "text": "me"}))
        .await
        .expect("write");
    first.hub.shutdown().await;
    let paths = capa_core::HubPaths::in_dir(first.dir.path());
    let config = capa_config::HubConfig::default();
    let hub = capa_core::Hub::start(capa_core::HubOptions {
        config,
        paths,
        redactor: capa_core::Redactor::new(),
        keychain: capa_secrets::Keychain::default(),
        store: None,
    })
    .await
    .expect("restart");
    hub.settled(std::time::Duration::from_secs(10)).await;
    let read = hub
        .call(
            super::support::permit(&hub, "demo.read_note").await,
            Some(serde_json::from_value(json!({"title": "keep"})).expect("args")),
            &capa_core::CallContext::default(),
        )
        .await
        .expect("read");
    assert_eq!(
        serde_json::to_value(read).expect("json")["content"][0]["text"],
        "me"
    );
    hub.shutdown().await;
}

#[tokio::test]
async fn unknown_tools_are_refused_with_the_closest_names() {
    let t = TestHub::start("").await;
    let err = t
        .call("demo.writeNote", json!({}))
        .await
        .expect_err("unknown");
    assert_eq!(err.code(), "unknown_tool");
    assert!(
        err.to_string().contains("did you mean demo.write_note"),
        "{err}"
    );
    assert!(!err.retryable());
}

#[tokio::test]
async fn the_demo_can_be_turned_off() {
    let t = TestHub::start(crate::support::no_demo()).await;
    assert!(t.addresses().is_empty());
    assert!(t.hub.sources().list().is_empty());
}
