//! Issue 14, item 8, through the hub: an upstream's oversized answer reaches the guest as a
//! typed `ToolError` and the source serves on; runs executing at once are bounded, paused runs
//! hold no slot, and a run past the bound waits, then is refused as `busy`.

use std::time::Duration;

use serde_json::{Value, json};

use crate::support::{TestHub, everything_js, execute_json, installed, repo_root};

/// The spec's bound on runs executing at once (`capa_runner::MAX_RUNS`, `capa-runner/src/slots.rs`).
const MAX_RUNS: usize = 8;

async fn execute(hub: &TestHub, code: &str) -> Value {
    execute_json(hub, Some(code), None).await
}

fn flood_source() -> String {
    format!(
        "  - id: flood\n    type: mcp\n    def: {{ command: {:?}, args: [{:?}] }}\n",
        installed("tests/.venv/bin/python"),
        repo_root()
            .join("crates/capa-upstream/tests/fixtures/flood_server.py")
            .display()
            .to_string(),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_upstream_answer_of_20_mb_is_a_tool_error_in_the_guest_and_the_next_call_works() {
    let yaml = format!(
        "options:\n  demo: false\n  toolExposure: code\nservers:\n{}",
        flood_source()
    );
    let hub = TestHub::start(&yaml).await;
    let pid = hub.source("flood").pid;
    // What the bounds cut from its listing is in the source's status (API, CLI, UI).
    let limited = hub.source("flood").limited;
    assert!(
        limited.iter().any(|cut| cut.contains("huge_schema")),
        "{limited:?}"
    );
    let envelope = execute(
        &hub,
        r#"let caught;
try { await flood.big({ bytes: 20000000 }) }
catch (e) { caught = [e instanceof ToolError, e.code, e.retryable, e.address, e.hint] }
const after = await flood.echo({ text: "next" });
return { caught, after };"#,
    )
    .await;
    assert_eq!(envelope["status"], "completed", "{envelope:#}");
    let caught = &envelope["result"]["caught"];
    assert_eq!(caught[0], json!(true), "{envelope:#}");
    assert_eq!(caught[1], "result_too_large");
    assert_eq!(caught[2], json!(false));
    assert_eq!(caught[3], "flood.big");
    assert!(
        caught[4].as_str().is_some_and(|h| h.contains("less")),
        "{caught}"
    );
    assert_eq!(envelope["result"]["after"], "next");
    // The source stayed connected: same child, no restart.
    let source = hub.source("flood");
    assert_eq!(source.state, capa_core::SourceState::Ready);
    assert_eq!(source.pid, pid);
    // History has the typed code.
    let calls = hub.store().recent_calls(5).expect("history");
    assert!(
        calls
            .iter()
            .any(|c| c.call.error_code.as_deref() == Some("result_too_large")),
        "{calls:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn paused_runs_hold_no_run_slot() {
    let hub = TestHub::start("options: { toolExposure: code }\n").await;
    for _ in 0..MAX_RUNS + 2 {
        let paused = execute(&hub, r#"await demo.delete_note({ title: "x" })"#).await;
        assert_eq!(paused["status"], "awaiting_approval", "{paused:#}");
    }
    // Had the paused runs held the eight slots, this one would wait out the slot wait and be
    // refused as `busy`.
    let envelope = execute(&hub, "return 1").await;
    assert_eq!(envelope["status"], "completed", "{envelope:#}");
}

/// Spawns `execute` of `code` on the hub.
fn spawn_run(hub: &TestHub, code: &str) -> tokio::task::JoinHandle<Value> {
    let core = hub.hub.clone();
    let code = code.to_owned();
    tokio::spawn(async move {
        let envelope = core
            .execute(capa_core::ExecuteRequest {
                code: Some(code),
                resume: None,
                client: None,
            })
            .await
            .expect("an envelope");
        serde_json::to_value(envelope).expect("json")
    })
}

/// Waits until [`MAX_RUNS`] runs of `code` each have their call out at the upstream (journaled
/// in flight, so each holds a slot), rather than for a while.
async fn at_the_upstream(hub: &TestHub, code: &str) {
    let store = hub.store();
    let out = crate::support::eventually(Duration::from_secs(30), || {
        let runs = store.recent_runs(100).unwrap_or_default();
        runs.iter()
            .filter(|r| r.code == code)
            .filter(|r| store.journal(&r.id).is_ok_and(|j| !j.is_empty()))
            .count()
            >= MAX_RUNS
    })
    .await;
    assert!(out, "{MAX_RUNS} runs never all reached the upstream");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_past_the_bound_waits_for_a_slot_then_is_refused_as_busy() {
    let yaml = format!(
        "options:\n  demo: false\n  toolExposure: code\nservers:\n  - id: ev\n    type: mcp\n    def: {{ command: node, args: [\"{}\", stdio] }}\n",
        everything_js()
    );
    let hub = TestHub::start(&yaml).await;
    let slow = |seconds: u32| {
        format!(
            "await ev.trigger_long_running_operation({{ duration: {seconds}, steps: 1 }}); return 'slow'"
        )
    };

    // A slot frees within the wait: the extra run queues, then completes.
    // The wait itself (its length, the first slot to free, a cancel) is `runner::runs`'s unit
    // tests on tokio's paused clock; here, the order of events through the real runner.
    let runs: Vec<_> = (0..MAX_RUNS).map(|_| spawn_run(&hub, &slow(3))).collect();
    at_the_upstream(&hub, &slow(3)).await;
    let queued = execute(&hub, "return 'queued'").await;
    assert_eq!(queued["result"], "queued", "{queued:#}");
    // It waited for a slot: one of the eight had ended in the hub when it ran. The slot frees
    // a moment before that run's spawned task resolves, so allow that moment (well under the
    // ~3 s a run that did not wait would be early by).
    let one_ended = crate::support::eventually(Duration::from_secs(1), || {
        runs.iter().any(tokio::task::JoinHandle::is_finished)
    })
    .await;
    assert!(
        one_ended,
        "the extra run completed while all eight still ran"
    );
    for run in runs {
        assert_eq!(run.await.expect("joined")["result"], "slow");
    }

    // No slot frees within the wait: refused, retryable, and the hub runs the next one.
    let runs: Vec<_> = (0..MAX_RUNS).map(|_| spawn_run(&hub, &slow(16))).collect();
    at_the_upstream(&hub, &slow(16)).await;
    // A client that gives up while its run waits for a slot ends the wait (not after 10 s).
    let cancel = tokio_util::sync::CancellationToken::new();
    let waiting = {
        let hub = hub.hub.clone();
        let cancel = cancel.clone();
        tokio::spawn(async move {
            let request = capa_core::ExecuteRequest {
                code: Some("return 'never'".to_owned()),
                resume: None,
                client: None,
            };
            let options = capa_core::ExecuteOptions {
                cancel,
                asked_in: None,
            };
            hub.execute_with(request, options).await
        })
    };
    tokio::time::sleep(Duration::from_millis(200)).await;
    cancel.cancel();
    let gave_up =
        serde_json::to_value(waiting.await.expect("joined").expect("an envelope")).expect("json");
    assert_eq!(gave_up["error"]["code"], "cancelled", "{gave_up:#}");
    let busy = execute(&hub, "return 'never'").await;
    assert_eq!(busy["status"], "failed", "{busy:#}");
    assert_eq!(busy["error"]["code"], "busy");
    assert!(
        busy["error"]["hint"]
            .as_str()
            .is_some_and(|h| h.contains("Retryable")),
        "{busy:#}"
    );
    assert!(busy.get("result").is_none());
    // Refused while all eight still ran (they take 16 s), not because one ended badly.
    assert!(
        runs.iter().all(|r| !r.is_finished()),
        "a slow run ended before the refusal"
    );
    for run in runs {
        assert_eq!(run.await.expect("joined")["result"], "slow");
    }
    let next = execute(&hub, "return 'next'").await;
    assert_eq!(next["result"], "next", "{next:#}");
}
