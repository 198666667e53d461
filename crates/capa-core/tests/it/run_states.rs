//! How runs end in the history a person reads: a run that failed on a denied call is
//! `denied` (the model still sees `failed`), and a paused run whose client never resumed ends
//! after the resume window as `denied` or `expired`, answering a late resume with why.

use capa_core::Choice;
use capa_domain::clock::now_ms;
use capa_runner::RESUME_WINDOW_MS;
use capa_store::RunState;
use serde_json::Value;

use crate::support::{TestHub, execute_json};

const DELETES: &str = r#"await demo.write_note({ title: "d", text: "1" });
await demo.delete_note({ title: "d" });
return "deleted";"#;

async fn paused(hub: &TestHub, code: &str) -> String {
    let envelope = execute_json(hub, Some(code), None).await;
    assert_eq!(envelope["status"], "awaiting_approval", "{envelope:#}");
    envelope["runId"].as_str().expect("runId").to_owned()
}

async fn resume(hub: &TestHub, run_id: &str) -> Value {
    execute_json(hub, None, Some(run_id)).await
}

fn state(hub: &TestHub, run_id: &str) -> RunState {
    hub.store()
        .run(run_id)
        .expect("read")
        .expect("the run is stored")
        .status
}

#[tokio::test]
async fn an_uncaught_denial_ends_the_run_denied() {
    let hub = TestHub::start("options: { toolExposure: code }\n").await;
    let id = paused(&hub, DELETES).await;
    hub.hub
        .approvals()
        .decide_run(&id, Choice::Deny, "test")
        .expect("deny");
    let done = resume(&hub, &id).await;
    assert_eq!(
        done["status"], "failed",
        "the model sees the spec's status: {done:#}"
    );
    assert_eq!(done["error"]["code"], "denied", "{done:#}");
    assert_eq!(state(&hub, &id), RunState::Denied);
}

#[tokio::test]
async fn guest_code_cannot_make_its_run_look_denied() {
    let hub = TestHub::start("options: { toolExposure: code }\n").await;
    let done = execute_json(
        &hub,
        Some(r#"throw new ToolError("no", { code: "denied" });"#),
        None,
    )
    .await;
    assert_eq!(done["error"]["code"], "denied", "{done:#}");
    let id = done["runId"].as_str().expect("runId");
    assert_eq!(state(&hub, id), RunState::Failed);
}

#[tokio::test]
async fn a_denied_run_nobody_resumes_ends_denied_after_the_window() {
    let hub = TestHub::start("options: { toolExposure: code }\n").await;
    let id = paused(&hub, DELETES).await;
    hub.hub
        .approvals()
        .decide_run(&id, Choice::Deny, "test")
        .expect("deny");
    let decided = now_ms();
    assert!(
        hub.hub
            .runs()
            .end_abandoned(decided + RESUME_WINDOW_MS - 60_000)
            .is_empty(),
        "the client still has time to resume"
    );
    assert_eq!(state(&hub, &id), RunState::AwaitingApproval);
    let ended = hub
        .hub
        .runs()
        .end_abandoned(decided + RESUME_WINDOW_MS + 1_000);
    assert_eq!(ended, vec![(id.clone(), RunState::Denied)]);
    assert_eq!(state(&hub, &id), RunState::Denied);

    let late = resume(&hub, &id).await;
    assert_eq!(late["status"], "failed", "{late:#}");
    assert_eq!(late["error"]["code"], "denied", "{late:#}");
    assert!(late.get("pending").is_none(), "{late:#}");
    let message = late["error"]["message"].as_str().expect("message");
    assert!(message.contains("demo.delete_note"), "{message}");
    assert!(
        message.contains("not resumed within 60 minutes"),
        "{message}"
    );
    let notes = execute_json(&hub, Some("return await demo.list_notes({});"), None).await;
    assert!(
        notes["result"].to_string().contains("\"d\""),
        "ending the run replayed nothing: the note is still there: {notes:#}"
    );
}

#[tokio::test]
async fn an_approved_run_nobody_resumes_ends_expired_and_runs_nothing() {
    let hub = TestHub::start("options: { toolExposure: code }\n").await;
    let id = paused(&hub, DELETES).await;
    hub.hub
        .approvals()
        .decide_run(&id, Choice::Once, "test")
        .expect("approve");
    let ended = hub
        .hub
        .runs()
        .end_abandoned(now_ms() + RESUME_WINDOW_MS + 1_000);
    assert_eq!(ended, vec![(id.clone(), RunState::Expired)]);
    let late = resume(&hub, &id).await;
    assert_eq!(late["status"], "failed", "{late:#}");
    assert_eq!(late["error"]["code"], "run_expired", "{late:#}");
    assert_ne!(late["result"], "deleted", "{late:#}");
}

#[tokio::test]
async fn an_approval_nobody_gives_expires_and_its_run_ends_expired() {
    let hub = TestHub::start("options: { toolExposure: code }\n").await;
    let id = paused(&hub, DELETES).await;
    let ttl = i64::try_from(hub.hub.config().approval_ttl.as_millis()).expect("ttl");
    let start = now_ms();
    assert!(
        hub.hub
            .runs()
            .end_abandoned(start + RESUME_WINDOW_MS + 1_000)
            .is_empty(),
        "a pending approval keeps its run waiting"
    );
    let expiry = start + ttl + 1_000;
    assert!(
        hub.hub.runs().end_abandoned(expiry).is_empty(),
        "the approval just expired: the client may still resume and see it"
    );
    let ended = hub.hub.runs().end_abandoned(expiry + RESUME_WINDOW_MS);
    assert_eq!(ended, vec![(id.clone(), RunState::Expired)]);
    let late = resume(&hub, &id).await;
    let message = late["error"]["message"].as_str().expect("message");
    assert!(message.contains("in time"), "{late:#}");
}
