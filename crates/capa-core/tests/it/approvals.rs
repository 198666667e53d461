//! Paused runs through the hub: a call that asks stops the run with a pending input; resume
//! answers with the same envelope until a person decides, then replays the run (same seed and
//! clock, journaled calls answered from the journal) and goes on. Also: grants for the rest of
//! a run, denial inside the guest, and a source waiting for its connection.

use std::time::Duration;

use capa_core::Choice;
use capa_secrets::Secret;
use serde_json::{Value, json};

use crate::support::{TestHub, everything_js, execute_json, keychain_or_skip};

async fn execute(hub: &TestHub, code: &str) -> Value {
    execute_json(hub, Some(code), None).await
}

async fn resume(hub: &TestHub, run_id: &str) -> Value {
    execute_json(hub, None, Some(run_id)).await
}

fn run_id(envelope: &Value) -> String {
    envelope["runId"].as_str().expect("runId").to_owned()
}

/// Random numbers, parallel calls around the one that asks, and the time: everything a replay
/// must reproduce.
const PARALLEL: &str = r#"
const before = Math.random();
console.log("before " + before);
await demo.write_note({ title: "p", text: "x" });
const [sum, deleted, product] = await Promise.all([
  demo.add({ a: 2, b: 3 }),
  demo.delete_note({ title: "p" }),
  demo.multiply({ a: 4, b: 5 }),
]);
return { before, after: Math.random(), now: Date.now(), sum, deleted, product };
"#;

#[tokio::test]
async fn a_paused_run_replays_to_the_result_it_would_have_had() {
    let hub = TestHub::start("options: { toolExposure: code }\n").await;
    let paused = execute(&hub, PARALLEL).await;
    assert_eq!(paused["status"], "awaiting_approval", "{paused:#}");
    let id = run_id(&paused);
    let pending = paused["pending"].as_array().expect("pending");
    assert_eq!(pending.len(), 1);
    assert_eq!(pending[0]["address"], "demo.delete_note");
    assert_eq!(pending[0]["kind"], "approval");
    let text = paused.to_string();
    assert!(
        !text.contains("http://") && !text.contains("token"),
        "{text}"
    );

    // Until someone decides, resume answers the same and runs nothing.
    let journal = hub.store().journal(&id).expect("journal");
    let again = resume(&hub, &id).await;
    assert_eq!(again, paused);
    assert_eq!(hub.store().journal(&id).expect("journal"), journal);

    let decided = hub
        .hub
        .approvals()
        .decide_run(&id, Choice::Once, "test")
        .expect("decide");
    assert_eq!(decided, 1);
    let done = resume(&hub, &id).await;
    assert_eq!(done["status"], "completed", "{done:#}");
    assert_eq!(done["runId"], Value::String(id.clone()));
    let logged = paused["logs"][0].as_str().expect("log before the pause");
    assert_eq!(
        done["logs"][0].as_str(),
        Some(logged),
        "the replay logs the same"
    );
    let result = &done["result"];
    let logged_number: f64 = logged
        .trim_start_matches("before ")
        .parse()
        .expect("a number");
    assert_eq!(
        result["before"].as_f64(),
        Some(logged_number),
        "same seed: the replay draws the same numbers"
    );
    assert_eq!(result["sum"], 5);
    assert_eq!(result["product"], 20);
    assert!(result["deleted"].as_str().is_some_and(|d| d.contains('p')));
    // The write was journaled by the first attempt and not performed again.
    let journal = hub.store().journal(&id).expect("journal");
    assert_eq!(journal.len(), 4, "{journal:?}");
    let calls = hub.store().recent_calls(20).expect("calls");
    let writes = calls
        .iter()
        .filter(|c| c.call.address == "demo.write_note")
        .count();
    assert_eq!(writes, 1, "the replay answered the write from the journal");
    // A decided approval is not taken twice.
    assert!(
        hub.hub
            .approvals()
            .decide_run(&id, Choice::Deny, "test")
            .is_err()
    );
    // The ended run answers with its envelope again.
    assert_eq!(resume(&hub, &id).await, done);
}

#[tokio::test]
async fn approve_for_the_run_asks_once_and_deny_throws_inside_the_guest() {
    let hub = TestHub::start("options: { toolExposure: code }\n").await;
    let code = r#"
await demo.write_note({ title: "a", text: "1" });
await demo.write_note({ title: "b", text: "2" });
await demo.delete_note({ title: "a" });
await demo.delete_note({ title: "b" });
return await demo.list_notes({});
"#;
    let paused = execute(&hub, code).await;
    let id = run_id(&paused);
    hub.hub
        .approvals()
        .decide_run(&id, Choice::Run, "test")
        .expect("decide");
    let done = resume(&hub, &id).await;
    assert_eq!(done["status"], "completed", "{done:#}");
    let approvals = hub.store().approvals_of_run(&id).expect("approvals");
    assert_eq!(approvals.len(), 1, "the second delete did not ask");

    let denied = execute(
        &hub,
        r#"try { await demo.delete_note({ title: "x" }); return "ran"; }
           catch (e) { return [e.name, e.code, e.address]; }"#,
    )
    .await;
    let id = run_id(&denied);
    hub.hub
        .approvals()
        .decide_run(&id, Choice::Deny, "test")
        .expect("deny");
    let done = resume(&hub, &id).await;
    assert_eq!(done["status"], "completed", "{done:#}");
    assert_eq!(
        done["result"],
        json!(["ToolError", "denied", "demo.delete_note"])
    );
}

#[tokio::test]
async fn always_allow_writes_a_rule_and_later_runs_do_not_ask() {
    let hub = TestHub::start("options: { toolExposure: code }\n").await;
    let code = r#"await demo.write_note({ title: "z", text: "1" }); return await demo.delete_note({ title: "z" });"#;
    let paused = execute(&hub, code).await;
    let id = run_id(&paused);
    hub.hub
        .approvals()
        .decide_run(&id, Choice::Always, "test")
        .expect("decide");
    assert_eq!(resume(&hub, &id).await["status"], "completed");
    let policy = std::fs::read_to_string(hub.hub.policy_file()).expect("policy file");
    assert!(policy.contains("demo.delete_note"), "{policy}");
    let next = execute(&hub, code).await;
    assert_eq!(next["status"], "completed", "{next:#}");
}

/// A source whose tools are known (its default connection is set) called with a connection
/// that does not exist yet: the run waits for it, and goes on once it is added.
#[tokio::test]
async fn a_call_whose_connection_is_missing_pauses_until_it_is_added() {
    let Some(keychain) = keychain_or_skip("approvals") else {
        return;
    };
    let yaml = format!(
        "options: {{ toolExposure: code }}\nservers:\n  - id: ev\n    type: mcp\n    def:\n      command: node\n      args: [{:?}, stdio]\n      env: {{ API_KEY: \"${{secret:key}}\" }}\n",
        everything_js()
    );
    let hub = TestHub::start_with(&yaml, keychain).await;
    let source = hub.hub.config().sources[0].clone();
    let set = |name: &str| {
        hub.hub
            .connections()
            .set(
                &source,
                name,
                None,
                Secret::new(format!("k-{name}-123456")),
                false,
            )
            .expect("set connection");
    };
    set("personal");
    hub.hub.connections().reload().await;
    hub.hub.settled(Duration::from_secs(30)).await;

    let code = r#"return await ev.get_sum({ a: 1, b: 2 }, { connection: "work" });"#;
    let paused = execute(&hub, code).await;
    assert_eq!(paused["status"], "awaiting_connection", "{paused:#}");
    assert_eq!(paused["pending"][0]["kind"], "connection");
    let message = paused["pending"][0]["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("capa connections set ev work"),
        "{message}"
    );
    let id = run_id(&paused);
    // Still missing: the same pause.
    assert_eq!(resume(&hub, &id).await["status"], "awaiting_connection");

    set("work");
    hub.hub.connections().reload().await;
    hub.hub.settled(Duration::from_secs(30)).await;
    let done = resume(&hub, &id).await;
    assert_eq!(done["status"], "completed", "{done:#}");
    assert!(
        hub.hub
            .approvals()
            .pending_of(&id)
            .expect("pending")
            .is_empty()
    );
}

/// "Pause approvals" denies asking calls at once, and a hub restarted on the same data dir is
/// still paused until someone resumes.
#[tokio::test]
async fn a_pause_of_approvals_denies_asking_calls_and_outlives_a_restart() {
    let first = TestHub::start("options: { toolExposure: code }\n").await;
    let code = r#"try { await demo.delete_note({ title: "none" }); return "ran"; } catch (e) { return e.code ?? String(e); }"#;
    first.hub.approvals().set_paused(true);
    let denied = execute(&first, code).await;
    assert_eq!(denied["status"], "completed", "{denied:#}");
    assert_eq!(denied["result"], "denied", "{denied:#}");
    first.hub.shutdown().await;

    let restart = || async {
        let hub = capa_core::Hub::start(capa_core::HubOptions {
            config: capa_config::HubConfig::default(),
            paths: capa_core::HubPaths::in_dir(first.dir.path()),
            redactor: capa_core::Redactor::new(),
            keychain: capa_secrets::Keychain::default(),
            store: None,
        })
        .await
        .expect("restart");
        hub.settled(Duration::from_secs(10)).await;
        hub
    };
    let second = restart().await;
    assert!(
        second.approvals().paused(),
        "the pause was lost in the restart"
    );
    second.approvals().set_paused(false);
    second.shutdown().await;
    let third = restart().await;
    assert!(
        !third.approvals().paused(),
        "the resume was lost in the restart"
    );
    third.shutdown().await;
}
