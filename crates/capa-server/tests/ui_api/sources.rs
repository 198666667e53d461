//! Sources added and removed through the UI's API: the global file keeps its comments, a fresh
//! install gets one, and a source added with the token alone waits for a person.

use std::time::Duration;

use capa_core::Hub;
use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::harness::{GLOBAL, Ui, serve_ui, serve_ui_with};
use crate::support::{self, HubFiles};

#[tokio::test]
async fn a_source_added_through_the_api_serves_its_tools_and_the_file_keeps_its_comments() {
    let ui = serve_ui(capa_secrets::Keychain::default()).await;
    let session = ui.login().await;
    let script =
        support::repo_file("node_modules/@modelcontextprotocol/server-everything/dist/index.js");
    let added = ui
        .with_session(reqwest::Method::POST, "/api/sources", &session)
        .json(&json!({
            "id": "everything",
            "description": "the reference server",
            "command": "node",
            "args": [script, "stdio"],
        }))
        .send()
        .await
        .expect("add");
    assert_eq!(
        added.status(),
        StatusCode::OK,
        "{}",
        added.text().await.unwrap_or_default()
    );
    let file = ui.hub.paths().global_config();
    let text = std::fs::read_to_string(&file).expect("read");
    assert!(text.starts_with("# my own comment: keep me\n"), "{text}");
    assert!(text.contains("demo: true # the demo stays"), "{text}");
    assert!(text.contains("id: \"everything\""), "{text}");
    let mut addresses = Vec::new();
    for _ in 0..150 {
        addresses = ui.tool_addresses(&session).await;
        if addresses.iter().any(|a| a.starts_with("everything.")) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(
        addresses.iter().any(|a| a == "everything.echo"),
        "{addresses:?}"
    );
    let sources: Value = ui
        .with_session(reqwest::Method::GET, "/api/sources", &session)
        .send()
        .await
        .expect("sources")
        .json()
        .await
        .expect("json");
    let everything = sources
        .as_array()
        .and_then(|s| s.iter().find(|s| s["id"] == "everything"))
        .expect("listed");
    assert_eq!(everything["origin"], "config");
    assert_eq!(everything["editable"], true);
    assert_eq!(everything["def"]["command"], "node");
    let replaced = ui
        .with_session(reqwest::Method::PUT, "/api/sources/everything", &session)
        .json(&json!({"description": "edited", "command": "node", "args": [script, "stdio"]}))
        .send()
        .await
        .expect("replace");
    assert_eq!(
        replaced.status(),
        StatusCode::OK,
        "{}",
        replaced.text().await.unwrap_or_default()
    );
    let text = std::fs::read_to_string(&file).expect("read");
    assert!(text.contains("description: \"edited\""), "{text}");
    assert!(text.starts_with("# my own comment: keep me\n"), "{text}");
    // The demo is built in: read-only.
    let demo = ui
        .with_session(reqwest::Method::DELETE, "/api/sources/demo", &session)
        .send()
        .await
        .expect("delete demo");
    assert_eq!(demo.status(), StatusCode::CONFLICT);
    let removed = ui
        .with_session(reqwest::Method::DELETE, "/api/sources/everything", &session)
        .send()
        .await
        .expect("remove");
    assert_eq!(
        removed.status(),
        StatusCode::OK,
        "{}",
        removed.text().await.unwrap_or_default()
    );
    assert_eq!(std::fs::read_to_string(&file).expect("read"), GLOBAL);
    let addresses = ui.tool_addresses(&session).await;
    assert!(
        !addresses.iter().any(|a| a.starts_with("everything.")),
        "{addresses:?}"
    );
    ui.server.shutdown().await;
}

/// On a fresh install the hub starts with no capabilities file; the Sources page's first source
/// creates the global one. From then on the hub says it reads that file, so `capa mcp` and the
/// CLI (which now find the file) forward to this hub instead of starting one of their own —
/// also once the source is removed again and the file stays.
#[tokio::test]
async fn the_first_source_added_in_the_ui_makes_the_global_file_one_the_hub_reads() {
    let ui = serve_ui_with(HubFiles::NoneYet, capa_secrets::Keychain::default()).await;
    let files = |ui: &Ui| {
        let request = ui
            .client
            .get(format!("{}/api/config", ui.base))
            .bearer_auth(&ui.token);
        async move {
            let config: Value = request
                .send()
                .await
                .expect("config")
                .json()
                .await
                .expect("json");
            config["files"].clone()
        }
    };
    assert_eq!(files(&ui).await, json!([]), "a fresh install reads no file");
    let session = ui.login().await;
    let added = ui
        .with_session(reqwest::Method::POST, "/api/sources", &session)
        .json(&json!({"id": "echo", "command": "node", "args": ["-e", ""]}))
        .send()
        .await
        .expect("add");
    assert_eq!(
        added.status(),
        StatusCode::OK,
        "{}",
        added.text().await.unwrap_or_default()
    );
    let global = ui.hub.paths().global_config();
    assert!(global.is_file(), "the first source creates the global file");
    assert_eq!(files(&ui).await, json!([global]));
    let removed = ui
        .with_session(reqwest::Method::DELETE, "/api/sources/echo", &session)
        .send()
        .await
        .expect("remove");
    assert_eq!(removed.status(), StatusCode::OK);
    assert!(global.is_file());
    assert_eq!(files(&ui).await, json!([global]), "still read once emptied");
    ui.server.shutdown().await;
}
/// A source added with the bearer token alone (a command the hub would run) does not start
/// until a person confirms it in the UI's session.
#[tokio::test]
async fn a_source_added_with_the_token_waits_for_a_person() {
    let ui = serve_ui(capa_secrets::Keychain::default()).await;
    let everything =
        support::repo_file("node_modules/@modelcontextprotocol/server-everything/dist/index.js");
    let added = ui
        .client
        .post(format!("{}/api/sources", ui.base))
        .bearer_auth(&ui.token)
        .json(&json!({"id": "planted", "command": "node", "args": [everything, "stdio"]}))
        .send()
        .await
        .expect("add");
    assert_eq!(added.status(), StatusCode::OK);
    let state = |hub: &Hub| {
        hub.sources()
            .list()
            .into_iter()
            .find(|s| s.id == "planted")
            .map(|s| (s.state, s.pid))
    };
    let (held, pid) = state(&ui.hub).expect("listed");
    assert_eq!(held, capa_core::SourceState::NeedsConfirmation);
    assert_eq!(pid, None, "no process was started");
    let refused = ui
        .client
        .post(format!("{}/api/sources/planted/confirm", ui.base))
        .bearer_auth(&ui.token)
        .send()
        .await
        .expect("confirm");
    assert_eq!(refused.status(), StatusCode::FORBIDDEN);
    let session = ui.login().await;
    let confirmed = ui
        .with_session(
            reqwest::Method::POST,
            "/api/sources/planted/confirm",
            &session,
        )
        .send()
        .await
        .expect("confirm");
    assert_eq!(confirmed.status(), StatusCode::OK);
    ui.hub.settled(Duration::from_secs(30)).await;
    assert_eq!(
        state(&ui.hub).expect("listed").0,
        capa_core::SourceState::Ready
    );
    ui.server.shutdown().await;
}
