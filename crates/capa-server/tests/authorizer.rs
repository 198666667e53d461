//! Every entry point that can run a tool goes through the hub's authorizer: with a tool the
//! policy asks for (`demo.delete_note`, marked destructive) and nobody to ask, none of them runs
//! it — code mode's `execute`, expose-all's direct call, search's and on-demand's `call_tool`,
//! and `POST /api/call` with the bearer token (what `capa call` and `capa sh` use; their
//! terminal side is tested in capa-cli). `Hub::call` takes a `Permit`, which only the authorizer
//! and the approval lifecycle make (checked in capa-core's tests); this proves the callers.

mod support;

use capa_core::{Authorization, CallContext};
use capa_server::surface_for;
use serde_json::{Value, json};

fn object(value: Value) -> Option<capa_core::JsonObject> {
    match value {
        Value::Object(map) => Some(map),
        _ => None,
    }
}

/// The demo's notes, through an allowed call.
async fn notes(hub: &capa_core::Hub) -> Value {
    let Ok(Authorization::Allowed(permit)) = hub.authorize("demo.list_notes", None).await else {
        panic!("list_notes is allowed");
    };
    let result = hub
        .call(permit, object(json!({})), &CallContext::default())
        .await
        .expect("list");
    serde_json::to_value(result).expect("json")
}

async fn write_note(hub: &capa_core::Hub) {
    let Ok(Authorization::Allowed(permit)) = hub.authorize("demo.write_note", None).await else {
        panic!("write_note is allowed");
    };
    hub.call(
        permit,
        object(json!({"title": "keep", "text": "x"})),
        &CallContext::default(),
    )
    .await
    .expect("write");
}

fn text(result: &rmcp::model::CallToolResult) -> String {
    serde_json::to_string(result).expect("json")
}

#[tokio::test]
async fn no_entry_point_runs_a_tool_that_asks_without_a_person() {
    for mode in ["code", "expose-all", "search", "on-demand"] {
        let yaml = format!("options:\n  toolExposure: {mode}\n  demo: true\n");
        let served = support::serve_hub(&yaml).await;
        let hub = served.hub.clone();
        write_note(&hub).await;
        let surface = surface_for(hub.clone());
        let delete = json!({"title": "keep"});
        let call = |name: &str, arguments: Value| {
            surface.call_tool(
                name.to_owned(),
                object(arguments),
                Some("test".into()),
                None,
            )
        };
        let answer = match mode {
            "code" => call(
                "execute",
                json!({"code": "return await demo.delete_note({ title: 'keep' })"}),
            )
            .await
            .expect("execute"),
            "expose-all" => call("demo.delete_note", delete.clone())
                .await
                .expect("call"),
            "search" => {
                call("search", json!({"query": "delete a note"}))
                    .await
                    .expect("search");
                call(
                    "call_tool",
                    json!({"name": "demo.delete_note", "data": delete.clone()}),
                )
                .await
                .expect("call_tool")
            }
            _ => {
                call("setup_tools", json!({"names": ["@demo"]}))
                    .await
                    .expect("setup");
                call(
                    "call_tool",
                    json!({"name": "demo.delete_note", "data": delete.clone()}),
                )
                .await
                .expect("call_tool")
            }
        };
        let shown = text(&answer);
        match mode {
            "code" => assert!(shown.contains("awaiting_approval"), "{mode}: {shown}"),
            _ => assert!(shown.contains("approval_required"), "{mode}: {shown}"),
        }
        // The HTTP API with the token: pending, not run.
        let api: Value = reqwest::Client::new()
            .post(format!("http://{}/api/call", served.server.addr))
            .bearer_auth(&served.token)
            .json(&json!({"address": "demo.delete_note", "arguments": delete}))
            .send()
            .await
            .expect("api")
            .json()
            .await
            .expect("json");
        assert_eq!(api["error"]["code"], "approval_required", "{mode}: {api}");
        let left = notes(&hub).await.to_string();
        assert!(
            left.contains("keep"),
            "{mode}: the note was deleted: {left}"
        );
        served.server.shutdown().await;
        hub.shutdown().await;
    }
}
