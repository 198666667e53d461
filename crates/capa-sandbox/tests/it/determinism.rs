//! The same code and seed give byte-identical output, whatever the tool latencies.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde_json::json;

use crate::support::*;

const CODE: &str = r#"
const events = [];
const log = (...x) => { events.push(x.join(" ")); console.log(...x); };
log("start", Date.now(), new Date().toISOString(), Math.random());
log("uuid", crypto.randomUUID());
log("bytes", Array.from(crypto.getRandomValues(new Uint8Array(8))).join(","));
setTimeout(() => log("timer 300", Date.now()), 300);
setTimeout(() => log("timer 100", Date.now()), 100);
setTimeout(() => log("timer 100b", Date.now()), 100);
// Parallel calls whose latencies vary: completion handlers run in issue order.
const calls = [];
for (let i = 0; i < 12; i++) {
  calls.push(github.search_issues({ q: i }).then(r => { log("done", r.index, Math.random()); return r.index; }));
}
const first = await Promise.race(calls);
log("race", first);
const all = await Promise.all(calls);
const settled = await Promise.allSettled([slack.post_message({ fail: true }), github.get_repo({})]);
log("settled", settled.map(s => s.status).join(","));
await new Promise(r => setTimeout(r, 500));
log("end", Date.now(), Math.random());
return { all, events, clock: Date.now() };
"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn same_code_and_seed_give_identical_output() {
    #[expect(
        clippy::cast_possible_truncation,
        reason = "any 64 bits of the clock do for a seed of the fake host's latencies"
    )]
    #[expect(
        clippy::disallowed_methods,
        reason = "the host's latencies are meant to differ from run to run; the output must not"
    )]
    let nonce = AtomicU64::new(
        SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(7, |d| d.as_nanos() as u64),
    );
    let host = FakeHost::new(move |c| {
        // Random latencies: a fresh xorshift step per call.
        let mut x = nonce.fetch_add(0x9E37_79B9_7F4A_7C15, Ordering::Relaxed) | 1;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let delay = Duration::from_millis(x % 15);
        if c.arguments.get("fail").is_some() {
            return (
                delay,
                Err(capa_sandbox::ToolFailure::new(
                    "bad_request",
                    "fails on purpose",
                )),
            );
        }
        (
            delay,
            Ok(json!({"index": c.arguments.get("q").cloned().unwrap_or(json!(null))})),
        )
    });
    let mut first: Option<String> = None;
    for i in 0..100 {
        let out = run_with(input(CODE), &host).await;
        let text = serde_json::to_string(&out.without_timings()).unwrap_or_default();
        match &first {
            None => {
                assert_eq!(out.status, capa_sandbox::RunStatus::Completed, "{out:?}");
                assert_eq!(out.calls.len(), 14);
                // Completion handlers ran in issue order, and timers in (due time, creation).
                let v = value(&out);
                let events: Vec<String> =
                    serde_json::from_value(v["events"].clone()).unwrap_or_default();
                let done: Vec<&str> = events
                    .iter()
                    .filter(|e| e.starts_with("done "))
                    .map(|e| e.split(' ').nth(1).unwrap_or(""))
                    .collect();
                assert_eq!(
                    done,
                    (0..12).map(|i| i.to_string()).collect::<Vec<_>>(),
                    "{events:?}"
                );
                let timers: Vec<&String> =
                    events.iter().filter(|e| e.starts_with("timer")).collect();
                assert!(
                    timers[0].starts_with("timer 100 ") && timers[1].starts_with("timer 100b"),
                    "{timers:?}"
                );
                assert_eq!(v["clock"], json!(1_767_225_600_000_i64 + 500));
                first = Some(text);
            }
            Some(f) => assert_eq!(f, &text, "run {i} differs"),
        }
    }
    // A different seed gives different randomness.
    let mut other = input(CODE);
    other.seed = 43;
    let out = run_with(other, &host).await;
    let text = serde_json::to_string(&out.without_timings()).unwrap_or_default();
    assert_ne!(first.as_deref(), Some(text.as_str()));
}

#[tokio::test]
async fn logical_clock_and_seed_are_inputs() {
    let mut i =
        input("return [Date.now(), new Date().getTime(), Math.random(), crypto.randomUUID()]");
    i.clock_start_ms = 1000;
    i.seed = 1;
    let a = value(&capa_sandbox::run(i.clone(), FakeHost::echo()).await);
    let b = value(&capa_sandbox::run(i, FakeHost::echo()).await);
    assert_eq!(a, b);
    assert_eq!(a[0], json!(1000));
    assert_eq!(a[1], json!(1000));
    let r = a[2].as_f64().unwrap_or(-1.0);
    assert!((0.0..1.0).contains(&r));
}
