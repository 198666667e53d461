//! Runs and approvals in the UI's API: run history and app decisions, paused approvals, the
//! event stream, and a direct call that waits for a person.

use std::time::Duration;

use capa_core::ExecuteRequest;
use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::harness::{ASKING, serve_ui};

#[tokio::test]
async fn runs_are_listed_and_detailed_and_app_decisions_say_so() {
    let ui = serve_ui(capa_secrets::Keychain::default()).await;
    let session = ui.login().await;
    let envelope = ui.execute(ASKING).await;
    assert_eq!(envelope["status"], "awaiting_approval", "{envelope}");
    let run_id = envelope["runId"].as_str().expect("run id").to_owned();
    let list: Value = ui
        .with_session(
            reqwest::Method::GET,
            "/api/runs?status=awaiting_approval&source=demo&limit=5",
            &session,
        )
        .send()
        .await
        .expect("runs")
        .json()
        .await
        .expect("json");
    let runs = list["runs"].as_array().expect("runs");
    assert_eq!(runs.len(), 1, "{list}");
    assert_eq!(runs[0]["id"], run_id.as_str());
    assert_eq!(runs[0]["client"], "ui-test");
    assert!(runs[0]["addresses"].to_string().contains("demo.write_note"));
    let none: Value = ui
        .with_session(reqwest::Method::GET, "/api/runs?status=completed", &session)
        .send()
        .await
        .expect("runs")
        .json()
        .await
        .expect("json");
    assert_eq!(none["runs"], json!([]));
    let approvals: Value = ui
        .with_session(reqwest::Method::GET, "/api/approvals", &session)
        .send()
        .await
        .expect("approvals")
        .json()
        .await
        .expect("json");
    assert_eq!(approvals["paused"], false);
    let decided = ui
        .with_session(reqwest::Method::POST, "/api/approvals/decide", &session)
        .json(&json!({"runId": run_id, "choice": "deny"}))
        .send()
        .await
        .expect("decide");
    assert_eq!(decided.status(), StatusCode::OK);
    let detail: Value = ui
        .with_session(
            reqwest::Method::GET,
            &format!("/api/runs/{run_id}"),
            &session,
        )
        .send()
        .await
        .expect("detail")
        .json()
        .await
        .expect("json");
    let run = &detail["run"];
    assert_eq!(run["code"], ASKING);
    assert_eq!(run["envelope"]["status"], "awaiting_approval");
    assert_eq!(run["calls"][0]["address"], "demo.write_note");
    assert_eq!(run["calls"][0]["ok"], true);
    assert!(
        run["calls"][0]["arguments"]["text"]
            .as_str()
            .is_some_and(|t| t.contains("title"))
    );
    assert_eq!(run["approvals"][0]["address"], "demo.delete_note");
    assert_eq!(run["approvals"][0]["status"], "denied");
    assert_eq!(run["approvals"][0]["decidedVia"], "app");
    let missing = ui
        .with_session(reqwest::Method::GET, "/api/runs/run_nope", &session)
        .send()
        .await
        .expect("detail");
    assert_eq!(missing.status(), StatusCode::NOT_FOUND);
    ui.server.shutdown().await;
}

#[tokio::test]
async fn while_approvals_are_paused_an_asking_call_is_denied_in_the_guest() {
    let ui = serve_ui(capa_secrets::Keychain::default()).await;
    let session = ui.login().await;
    let paused = ui
        .with_session(reqwest::Method::POST, "/api/approvals/pause", &session)
        .json(&json!({"paused": true}))
        .send()
        .await
        .expect("pause");
    assert_eq!(paused.status(), StatusCode::OK);
    assert!(ui.hub.approvals().paused());
    let code = "try { await demo.delete_note({ title: 'n' }); return 'ran'; } catch (e) { return `${e.code}: ${e.message}`; }";
    let envelope = ui.execute(code).await;
    assert_eq!(envelope["status"], "completed", "{envelope}");
    assert_eq!(
        envelope["result"],
        "denied: approvals are paused in Capabilities"
    );
    assert!(ui.hub.approvals().pending().expect("pending").is_empty());
    ui.hub.approvals().set_paused(false);
    let envelope = ui.execute(code).await;
    assert_eq!(envelope["status"], "awaiting_approval", "{envelope}");
    ui.server.shutdown().await;
}

/// Reads SSE `data:` lines until one satisfies `wanted`.
async fn next_data(
    response: &mut reqwest::Response,
    buffer: &mut String,
    wanted: impl Fn(&Value) -> bool,
) -> Value {
    loop {
        while let Some(end) = buffer.find('\n') {
            let line: String = buffer.drain(..=end).collect();
            if let Some(data) = line.trim_end().strip_prefix("data: ") {
                let value: Value = serde_json::from_str(data).expect("event json");
                if wanted(&value) {
                    return value;
                }
            }
        }
        let chunk = tokio::time::timeout(Duration::from_secs(20), response.chunk())
            .await
            .expect("an event in time")
            .expect("chunk")
            .expect("stream open");
        buffer.push_str(&String::from_utf8_lossy(&chunk));
    }
}

#[tokio::test]
async fn the_event_stream_reports_a_new_pending_approval() {
    let ui = serve_ui(capa_secrets::Keychain::default()).await;
    let session = ui.login().await;
    let mut response = ui
        .with_session(reqwest::Method::GET, "/api/events", &session)
        .send()
        .await
        .expect("events");
    assert_eq!(response.status(), StatusCode::OK);
    assert!(
        response.headers()["content-type"]
            .to_str()
            .expect("type")
            .starts_with("text/event-stream")
    );
    let mut buffer = String::new();
    let first = next_data(&mut response, &mut buffer, |_| true).await;
    assert_eq!(first["pending"], 0, "{first}");
    assert_eq!(first["paused"], false);
    assert_eq!(first["sources"]["ready"], 1, "{first}");
    let mut pending = ui.hub.approvals().watch_pending();
    let envelope = ui.execute(ASKING).await;
    assert_eq!(envelope["status"], "awaiting_approval");
    assert_eq!(*pending.borrow_and_update(), 1);
    let next = next_data(&mut response, &mut buffer, |v| v["pending"] == 1).await;
    assert_eq!(next["pending"], 1);
    drop(response);
    ui.server.shutdown().await;
}
/// `POST /api/call` (what `capa call` and `capa sh` use) goes through the authorizer: a tool
/// that asks does not run for the token; the call is recorded as pending, a person's decision
/// in the UI's session lets exactly one call with the same arguments run, once.
#[tokio::test]
async fn a_direct_call_that_asks_waits_for_a_person_and_runs_once() {
    let ui = serve_ui(capa_secrets::Keychain::default()).await;
    let call = |body: Value| {
        ui.client
            .post(format!("{}/api/call", ui.base))
            .bearer_auth(&ui.token)
            .json(&body)
            .send()
    };
    let json = |r: reqwest::Response| async move { r.json::<Value>().await.expect("json") };
    let wrote = json(
        call(json!({"address": "demo.write_note", "arguments": {"title": "keep", "text": "x"}}))
            .await
            .expect("write"),
    )
    .await;
    assert_eq!(wrote["ok"], true, "{wrote}");
    let delete = json!({"address": "demo.delete_note", "arguments": {"title": "keep"}});
    let first = json(call(delete.clone()).await.expect("call")).await;
    assert_eq!(first["error"]["code"], "approval_required", "{first}");
    let id = first["approval"]["id"].as_str().expect("id").to_owned();
    assert!(
        first["approval"]["runId"]
            .as_str()
            .expect("call id")
            .starts_with("call_")
    );
    let pending = json!({"address": "demo.delete_note", "arguments": {"title": "keep"}, "approval": id, "waitMs": 200});
    let waited = json(call(pending.clone()).await.expect("call")).await;
    assert_eq!(waited["error"]["code"], "approval_pending", "{waited}");
    // Another call cannot spend this approval.
    let other =
        json!({"address": "demo.delete_note", "arguments": {"title": "other"}, "approval": id});
    let refused = json(call(other).await.expect("call")).await;
    assert_eq!(
        refused["error"]["code"], "approval_for_other_call",
        "{refused}"
    );
    let notes = ui.hub.execute(ExecuteRequest {
        code: Some("return await demo.list_notes({})".to_owned()),
        ..ExecuteRequest::default()
    });
    let listed = serde_json::to_value(notes.await.expect("envelope")).expect("json");
    assert!(
        listed["result"].to_string().contains("keep"),
        "nothing ran: {listed}"
    );

    let session = ui.login().await;
    let decided = ui
        .with_session(reqwest::Method::POST, "/api/approvals/decide", &session)
        .json(&json!({"approvalId": id, "choice": "approve_once"}))
        .send()
        .await
        .expect("decide");
    assert_eq!(decided.status(), StatusCode::OK);
    let ran = json(call(pending.clone()).await.expect("call")).await;
    assert_eq!(ran["ok"], true, "{ran}");
    let again = json(call(pending).await.expect("call")).await;
    assert_eq!(
        again["error"]["code"], "already_decided",
        "spent once: {again}"
    );
    ui.server.shutdown().await;
}
