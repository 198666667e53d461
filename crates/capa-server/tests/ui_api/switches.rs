//! On/off switches through the UI's API: a source off is `disabled: true` in the global file,
//! stays off across an edit of its definition, and turned on with the bearer token alone waits
//! for a person; a tool off is a deny rule, and turning it on without a person is held.

use std::time::Duration;

use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

use crate::harness::{Ui, serve_ui};
use crate::support;

async fn answer(request: reqwest::RequestBuilder) -> (StatusCode, Value) {
    let response = request.send().await.expect("send");
    let status = response.status();
    (status, response.json().await.expect("json"))
}

fn bearer(ui: &Ui, method: Method, path: &str) -> reqwest::RequestBuilder {
    ui.client
        .request(method, format!("{}{path}", ui.base))
        .bearer_auth(&ui.token)
}

async fn state_of(ui: &Ui, session: &(String, String), id: &str) -> Value {
    let (_, sources) = answer(ui.with_session(Method::GET, "/api/sources", session)).await;
    sources
        .as_array()
        .and_then(|s| s.iter().find(|s| s["id"] == id))
        .cloned()
        .expect("listed")
}

async fn wait_for_tools(ui: &Ui, session: &(String, String), prefix: &str, present: bool) {
    for _ in 0..150 {
        let addresses = ui.tool_addresses(session).await;
        if addresses.iter().any(|a| a.starts_with(prefix)) == present {
            return;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("tools {prefix}* never became present={present}");
}

#[tokio::test]
async fn a_source_turned_off_stays_off_across_an_edit_and_the_token_alone_cannot_turn_it_on() {
    let ui = serve_ui(capa_secrets::Keychain::default()).await;
    let session = ui.login().await;
    let script =
        support::repo_file("node_modules/@modelcontextprotocol/server-everything/dist/index.js");
    let definition = json!({"id": "everything", "command": "node", "args": [script, "stdio"]});
    let (status, body) = answer(
        ui.with_session(Method::POST, "/api/sources", &session)
            .json(&definition),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    wait_for_tools(&ui, &session, "everything.", true).await;

    let (status, body) = answer(
        ui.with_session(Method::PUT, "/api/sources/everything/enabled", &session)
            .json(&json!({"enabled": false})),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["state"], "off", "{body}");
    let file = ui.hub.paths().global_config();
    assert!(
        std::fs::read_to_string(&file)
            .expect("read")
            .contains("disabled: true")
    );
    wait_for_tools(&ui, &session, "everything.", false).await;
    let listed = state_of(&ui, &session, "everything").await;
    assert_eq!(listed["state"], "off", "{listed}");
    assert_eq!(
        listed["last_error"],
        Value::Null,
        "off is not an error: {listed}"
    );

    // An edit from the form keeps it off.
    let (status, body) = answer(
        ui.with_session(Method::PUT, "/api/sources/everything", &session)
            .json(&json!({"description": "edited", "command": "node", "args": [script, "stdio"]})),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let text = std::fs::read_to_string(&file).expect("read");
    assert!(
        text.contains("disabled: true") && text.contains("edited"),
        "{text}"
    );
    assert_eq!(state_of(&ui, &session, "everything").await["state"], "off");

    // The token alone: the file says on, the source waits for a person.
    let (status, body) = answer(
        bearer(&ui, Method::PUT, "/api/sources/everything/enabled").json(&json!({"enabled": true})),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["state"], "held", "{body}");
    assert!(
        !std::fs::read_to_string(&file)
            .expect("read")
            .contains("disabled")
    );
    let listed = state_of(&ui, &session, "everything").await;
    assert_eq!(listed["state"], "needs_confirmation", "{listed}");
    assert!(
        ui.tool_addresses(&session)
            .await
            .iter()
            .all(|a| !a.starts_with("everything."))
    );

    // A person turns it on: it starts.
    let (status, body) = answer(
        ui.with_session(Method::PUT, "/api/sources/everything/enabled", &session)
            .json(&json!({"enabled": true})),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["state"], "on", "{body}");
    wait_for_tools(&ui, &session, "everything.", true).await;
    ui.server.shutdown().await;
}

fn decision_of(tools: &Value, address: &str) -> String {
    tools
        .as_array()
        .and_then(|t| t.iter().find(|t| t["address"] == address))
        .and_then(|t| t["policy"].as_str())
        .unwrap_or_default()
        .to_owned()
}

#[tokio::test]
async fn a_tool_off_is_a_deny_rule_and_turning_it_on_needs_a_person() {
    let ui = serve_ui(capa_secrets::Keychain::default()).await;
    let session = ui.login().await;
    wait_for_tools(&ui, &session, "demo.", true).await;
    // Turned off with the token alone and back on: nothing a person confirmed is loosened.
    let off = json!({"addresses": ["demo.echo"], "enabled": false});
    let on = json!({"addresses": ["demo.echo"], "enabled": true});
    let (_, body) = answer(bearer(&ui, Method::PUT, "/api/tools/enabled").json(&off)).await;
    assert_eq!(body["tools"][0]["enabled"], false, "{body}");
    let (_, body) = answer(bearer(&ui, Method::PUT, "/api/tools/enabled").json(&on)).await;
    assert_eq!(body["tools"][0]["enabled"], true, "{body}");
    // A person turns it off: the token alone cannot turn it back on.
    let (status, body) = answer(
        ui.with_session(Method::PUT, "/api/tools/enabled", &session)
            .json(&off),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["tools"][0]["enabled"], false, "{body}");
    let (_, tools) = answer(ui.with_session(Method::GET, "/api/tools", &session)).await;
    assert_eq!(decision_of(&tools, "demo.echo"), "deny");

    let (_, body) = answer(bearer(&ui, Method::PUT, "/api/tools/enabled").json(&on)).await;
    assert_eq!(body["tools"][0]["enabled"], false, "held: {body}");
    assert_eq!(body["tools"][0]["held"], true, "{body}");
    let (_, body) = answer(
        ui.with_session(Method::PUT, "/api/tools/enabled", &session)
            .json(&on),
    )
    .await;
    assert_eq!(body["tools"][0]["enabled"], true, "{body}");

    // Bulk: every tool not declared read-only goes off; the read-only ones stay on.
    let (status, body) = answer(bearer(
        &ui,
        Method::POST,
        "/api/sources/demo/write-tools-off",
    ))
    .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let (_, tools) = answer(ui.with_session(Method::GET, "/api/tools", &session)).await;
    for tool in tools.as_array().expect("tools") {
        let read_only = tool["annotations"]["readOnlyHint"] == true;
        let denied = tool["policy"] == "deny";
        assert_eq!(read_only, !denied, "{tool}");
    }
    assert_eq!(decision_of(&tools, "demo.write_note"), "deny");
    assert_eq!(decision_of(&tools, "demo.read_note"), "allow");
    let (status, _) = answer(
        bearer(&ui, Method::PUT, "/api/tools/enabled")
            .json(&json!({"addresses": ["nope.tool"], "enabled": false})),
    )
    .await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    ui.server.shutdown().await;
}
