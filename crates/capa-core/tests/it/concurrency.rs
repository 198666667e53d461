//! Issue 15: the sandbox's call bounds through the real runner (the sandbox's own tests use a
//! small host; these go through capa-core's host, journal and call records against the built-in
//! demo and server-everything): calls of one run overlap, the ninth waits for one of the eight
//! slots, each call's upstream timeout starts when it leaves that queue, and call 501 is refused
//! with `max_calls`.
//!
//! Overlap and waiting are read from the hub's own call records as an order of events (when a
//! call started against when another ended), never against a bound on elapsed time.

use capa_store::RecordedCall;
use serde_json::json;

use crate::support::{TestHub, everything_js, execute_json};

fn everything_hub(options: &str) -> String {
    format!(
        "options:\n  demo: false\n  toolExposure: code\n{options}servers:\n  - id: ev\n    type: mcp\n    def: {{ command: node, args: [\"{}\", stdio] }}\n",
        everything_js()
    )
}

/// `n` calls of server-everything's long-running operation at once, each `seconds` long.
fn long_calls(n: usize, seconds: u32) -> String {
    format!(
        "return (await Promise.allSettled([...Array({n}).keys()].map(() => ev.trigger_long_running_operation({{ duration: {seconds}, steps: 1 }})))).map(s => s.status === 'fulfilled' ? 'ok' : s.reason.code)"
    )
}

/// The recorded calls of `address`, in the order they started.
fn calls_of(hub: &TestHub, address: &str) -> Vec<RecordedCall> {
    let mut calls: Vec<_> = hub
        .store()
        .recent_calls(100)
        .expect("history")
        .into_iter()
        .filter(|c| c.call.address == address)
        .collect();
    calls.sort_by_key(|c| (c.call.started_at_ms, c.id));
    calls
}

fn ended_ms(call: &RecordedCall) -> i64 {
    call.call.started_at_ms + call.call.duration_ms
}

/// Start and duration are whole milliseconds read from two clocks, so an end computed from them
/// may be off by this much either way.
const ROUNDING_MS: i64 = 2;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn calls_of_one_run_overlap_and_the_ninth_waits_for_a_slot() {
    let hub = TestHub::start(&everything_hub("")).await;
    let envelope = execute_json(&hub, Some(&long_calls(9, 1)), None).await;
    assert_eq!(envelope["status"], "completed", "{envelope:#}");
    assert_eq!(envelope["result"], json!(vec!["ok"; 9]), "{envelope:#}");
    let calls = calls_of(&hub, "ev.trigger-long-running-operation");
    assert_eq!(calls.len(), 9, "{calls:#?}");
    let (first_eight, ninth) = calls.split_at(8);
    let ninth = &ninth[0];
    let first_end = first_eight.iter().map(ended_ms).min().unwrap_or(i64::MAX);
    // The host saw all of the first eight before any of them answered: they overlapped.
    assert!(
        first_eight
            .iter()
            .all(|c| c.call.started_at_ms < first_end - ROUNDING_MS),
        "{calls:#?}"
    );
    // The ninth reached the upstream only once one of the eight had answered.
    assert!(
        ninth.call.started_at_ms + ROUNDING_MS >= first_end,
        "{calls:#?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_upstream_timeout_starts_when_a_call_leaves_the_queue() {
    // Calls of 2 s with a 3 s timeout: the ninth waits about 2 s for a slot, then runs 2 s. Timed
    // from when the guest made it, it would time out; timed from leaving the queue, none does.
    let hub = TestHub::start(&everything_hub("  upstreamTimeoutMs: 3000\n")).await;
    let envelope = execute_json(&hub, Some(&long_calls(9, 2)), None).await;
    assert_eq!(envelope["status"], "completed", "{envelope:#}");
    assert_eq!(envelope["result"], json!(vec!["ok"; 9]), "{envelope:#}");
    let calls = calls_of(&hub, "ev.trigger-long-running-operation");
    let first_end = calls[..8].iter().map(ended_ms).min().unwrap_or(i64::MAX);
    assert!(
        calls[8].call.started_at_ms + ROUNDING_MS >= first_end,
        "the ninth queued: {calls:#?}"
    );
    // That a call outliving the timeout is cut is `faults.rs`'s
    // `an_upstream_that_does_not_answer_in_time_gives_a_retryable_timeout`.
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn call_501_is_refused_with_max_calls_through_the_hub() {
    let hub = TestHub::start("options:\n  toolExposure: code\n").await;
    let envelope = execute_json(
        &hub,
        Some(
            r#"for (let i = 0; i < 500; i++) await demo.add({ a: i, b: 1 });
try { await demo.add({ a: 1, b: 1 }) } catch (e) { return [e instanceof ToolError, e.code] }
return "not refused""#,
        ),
        None,
    )
    .await;
    assert_eq!(envelope["status"], "completed", "{envelope:#}");
    assert_eq!(
        envelope["result"],
        json!([true, "max_calls"]),
        "{envelope:#}"
    );
    // The refused call never reached the demo: 500 made it, and the history says so.
    let made = hub
        .store()
        .recent_calls(1_000)
        .expect("history")
        .iter()
        .filter(|c| c.call.address == "demo.add")
        .count();
    assert_eq!(made, 500);
}
