//! Each limit stops the guest with its own error code, and the next run works.

use std::sync::Arc;
use std::time::Duration;

use capa_sandbox::{Limits, RunStatus};
use serde_json::{Value, json};

use crate::support::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn infinite_loop_stops_with_compute_limit_and_the_next_run_works() {
    // The code says the compute meter stopped it (a run stopped any later would say
    // `wall_limit`), so no clock is read here.
    let out = capa_sandbox::run(
        with_limits("while (true) {}", |l| l.compute_ms = 300),
        FakeHost::echo(),
    )
    .await;
    assert_eq!(error_code(&out), "compute_limit");
    // A loop that catches everything cannot catch the interrupt.
    let out = capa_sandbox::run(
        with_limits(
            "for (;;) { try { for (;;) {} } catch (e) {} finally { continue } }",
            |l| l.compute_ms = 200,
        ),
        FakeHost::echo(),
    )
    .await;
    assert_eq!(error_code(&out), "compute_limit");
    assert_eq!(value(&run("return 'next'").await), json!("next"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn compute_time_excludes_waiting_for_tools() {
    let host = FakeHost::slow(2_000);
    let out = run_with(
        with_limits("const r = await github.get_repo({}); return r.index", |l| {
            l.compute_ms = 1_000;
        }),
        &host,
    )
    .await;
    // Completed, not `compute_limit`: the 2 s wait was not charged against 1 s of compute. (A
    // lower bound that tokio's sleep guarantees, so it cannot flake: the wait did outlast the
    // limit.)
    assert_eq!(value(&out), json!(0));
    assert!(out.calls[0].ms >= 2_000);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn wall_limit_stops_a_run_stuck_waiting() {
    // The host would answer after 10 s; `wall_limit` and the unanswered call show the run did
    // not wait for it.
    let host = FakeHost::slow(10_000);
    let out = run_with(
        with_limits(
            "console.log('before'); await github.get_repo({}); return 1",
            |l| l.wall_ms = 500,
        ),
        &host,
    )
    .await;
    assert_eq!(error_code(&out), "wall_limit");
    assert_eq!(out.logs, vec!["before"]);
    assert_eq!(out.calls.len(), 1);
    assert!(!out.calls[0].ok);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn memory_bomb_hits_the_memory_limit() {
    for code in [
        "let s = 'x'; for (;;) s += s;",
        "return 'x'.repeat(100_000_000).length",
        "const parts = []; for (let i = 0; ; i++) parts.push('p' + i); ",
        "const a = []; for (;;) a.push(new Array(100000).fill(1));",
        "const a = []; for (;;) a.push({ i: a.length, s: 'y'.repeat(100) + a.length });",
        // Small objects run the heap so full that not even the error fits: QuickJS throws
        // `null`, here after an await and from an async helper whose data stays reachable.
        "await github.get_repo({}); const a = []; for (;;) a.push({ i: a.length });",
        "const a = []; const fill = async () => { for (;;) a.push({ i: a.length }) }; await fill();",
    ] {
        let out = capa_sandbox::run(
            with_limits(code, |l| l.memory_bytes = 16 * 1024 * 1024),
            FakeHost::echo(),
        )
        .await;
        assert_eq!(error_code(&out), "memory_limit", "{code}: {out:?}");
    }
    // Catching the out-of-memory error contains it too.
    let out = capa_sandbox::run(
        with_limits(
            "try { let s = 'x'; for (;;) s += s; } catch (e) { return String(e) }",
            |l| l.memory_bytes = 16 * 1024 * 1024,
        ),
        FakeHost::echo(),
    )
    .await;
    assert_eq!(out.status, RunStatus::Completed);
    assert_eq!(value(&run("return 'next'").await), json!("next"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn deep_recursion_is_a_stack_overflow() {
    let out = run("function f(n) { return f(n + 1) + 1 } return f(0)").await;
    assert_eq!(error_code(&out), "stack_overflow");
    let out = run("const f = async (n) => f(n + 1); return await f(0)").await;
    assert!(
        ["stack_overflow", "memory_limit", "compute_limit"].contains(&error_code(&out).as_str()),
        "{out:?}"
    );
    // Deeply nested source under the code limit (32,000 levels in 64,008 bytes, so the size
    // check lets it through) is refused by the parser's own stack bound, not a crash.
    let nested = format!("return {}1{}", "[".repeat(32_000), "]".repeat(32_000));
    assert!(
        nested.len() < Limits::default().code_bytes,
        "{}",
        nested.len()
    );
    let out = run(&nested).await;
    assert_eq!(error_code(&out), "stack_overflow", "{out:?}");
    assert_eq!(value(&run("return 'next'").await), json!("next"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn call_501_is_refused_with_max_calls() {
    let host = FakeHost::echo();
    let out = run_with(
        input(
            r"
            for (let i = 0; i < 500; i++) await github.get_repo({ i });
            try { await github.get_repo({ i: 500 }) } catch (e) { return [e instanceof ToolError, e.code, e.message] }
            ",
        ),
        &host,
    )
    .await;
    let v = value(&out);
    assert_eq!(v[0], json!(true));
    assert_eq!(v[1], json!("max_calls"));
    assert_eq!(host.call_count(), 500);
    assert_eq!(out.calls.len(), 500);

    // Uncaught, it fails the run with that code; earlier attempts count.
    let mut i = input("await github.get_repo({}); await github.get_repo({});");
    i.calls_before = 499;
    let out = run_with(i, &host).await;
    assert_eq!(error_code(&out), "max_calls");
    assert_eq!(out.calls.len(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ninth_concurrent_call_waits_for_a_slot() {
    // The first eight take 300 ms, the ninth is answered at once.
    let host = FakeHost::new(|c| {
        let delay = if c.index < 8 { 300 } else { 0 };
        (Duration::from_millis(delay), Ok(json!({"index": c.index})))
    });
    let out = run_with(
        input("return (await Promise.all([...Array(9).keys()].map(i => github.get_repo({ i })))).map(r => r.index)"),
        &host,
    )
    .await;
    assert_eq!(value(&out), json!([0, 1, 2, 3, 4, 5, 6, 7, 8]));
    assert_eq!(host.max_in_flight(), 8);
    // The host sees the ninth call only after one of the first eight was answered, and the
    // first eight all before any answer.
    let ninth = host.position(Event::Arrived(8));
    let first_answer = (0..8)
        .map(|i| host.position(Event::Answered(i)))
        .min()
        .unwrap_or(usize::MAX);
    assert!(first_answer < ninth, "{:?}", host.events());
    assert!(
        (0..8).all(|i| host.position(Event::Arrived(i)) < first_answer),
        "{:?}",
        host.events()
    );
    // Its own time is counted from leaving the queue, not from when the guest made it: it
    // waited at least 300 ms in the queue, and is shorter than a call it waited for.
    assert!(out.calls[8].ms < out.calls[0].ms, "{:?}", out.calls);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn upstream_timeout_starts_when_the_call_leaves_the_queue() {
    // 9 calls of 300 ms with a 500 ms upstream timeout and one slot at a time: each call's
    // timeout starts when it is handed to the host, so none times out although the last one
    // waits ~2.4 s in the queue.
    let host = FakeHost::slow(300);
    let out = run_with(
        with_limits(
            "return (await Promise.all([...Array(9).keys()].map(i => github.get_repo({ i })))).length",
            |l| {
                l.max_concurrent = 1;
                l.upstream_timeout_ms = 500;
            },
        ),
        &host,
    )
    .await;
    assert_eq!(value(&out), json!(9));
    assert_eq!(host.max_in_flight(), 1);

    let host = FakeHost::slow(2_000);
    let out = run_with(
        with_limits("await github.get_repo({})", |l| l.upstream_timeout_ms = 200),
        &host,
    )
    .await;
    assert_eq!(error_code(&out), "upstream_timeout");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn large_result_is_truncated_to_valid_json() {
    let out = run(
        "return Array.from({ length: 10000 }, (_, i) => ({ id: i, title: 'issue ' + i, body: 'x'.repeat(80) }))",
    )
    .await;
    assert_eq!(out.status, RunStatus::Completed);
    assert!(out.truncated.result);
    let text = serde_json::to_string(&out.result).unwrap_or_default();
    assert!(text.len() <= 24 * 1024, "{}", text.len());
    let items = out
        .result
        .as_ref()
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    assert!(!items.is_empty());
    assert_eq!(
        items[0],
        json!({"id": 0, "title": "issue 0", "body": "x".repeat(80)})
    );
    assert!(
        out.notices
            .iter()
            .any(|n| n.starts_with("result was 1.") && n.contains("MB")),
        "{:?}",
        out.notices
    );

    // A single 1 MB string.
    let out = run("return 'y'.repeat(1024 * 1024)").await;
    assert!(out.truncated.result);
    let s = out.result.as_ref().and_then(Value::as_str).unwrap_or("");
    assert!(
        s.len() > 20 * 1024 && s.len() <= 24 * 1024 && s.ends_with('…'),
        "{}",
        s.len()
    );
}

/// What the envelope serialises for `result` and `logs` (compact JSON, as `serde_json` writes
/// the envelope).
fn inline_bytes(out: &capa_sandbox::RunOutput) -> usize {
    let result = out
        .result
        .as_ref()
        .and_then(|r| serde_json::to_string(r).ok())
        .map_or(0, |s| s.len());
    let logs = if out.logs.is_empty() {
        0
    } else {
        serde_json::to_string(&out.logs).map_or(0, |s| s.len())
    };
    result + logs
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn logs_share_the_inline_budget() {
    let out = run("for (let i = 0; i < 5000; i++) console.log('line ' + i + ' ' + 'z'.repeat(50)); return 'ok'").await;
    assert_eq!(value(&out), json!("ok"));
    assert!(out.truncated.logs);
    assert!(!out.truncated.result);
    let bytes = inline_bytes(&out);
    assert!(bytes <= 24 * 1024 && bytes > 20 * 1024, "{bytes}");
    assert!(
        out.notices.iter().any(|n| n.starts_with("logs were")),
        "{:?}",
        out.notices
    );

    let out = run(
        "for (let i = 0; i < 5000; i++) console.log('z'.repeat(50)); return 'r'.repeat(100000)",
    )
    .await;
    assert!(out.truncated.logs && out.truncated.result);
    assert!(inline_bytes(&out) <= 24 * 1024, "{}", inline_bytes(&out));
}

/// Issue 16: logs are counted as the envelope serialises them, so lines that cost nothing as
/// raw bytes (empty, or made of control characters, six bytes each as `\u00XX`) fill the
/// budget too.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn logs_are_bounded_as_serialised_whatever_the_lines() {
    // Two million empty lines: 6 MB of `"",` before; now the budget fills after 8,191 and the
    // rest cost the guest only the calls.
    let out = run("for (let i = 0; i < 2000000; i++) console.log(''); return 'done'").await;
    assert_eq!(value(&out), json!("done"));
    assert!(out.truncated.logs, "{:?}", out.truncated);
    assert!(inline_bytes(&out) <= 24 * 1024, "{}", inline_bytes(&out));
    assert!(out.logs.len() > 8_000, "{}", out.logs.len());
    assert!(out.notices.iter().any(|n| n.starts_with("logs were")));

    // One line of 24,000 control characters: 24,000 raw bytes, 144,002 as JSON; cut to fit.
    let out = run("console.log('\\u0001'.repeat(24000)); return 1").await;
    assert_eq!(value(&out), json!(1));
    assert!(out.truncated.logs);
    let n = inline_bytes(&out);
    assert!(n <= 24 * 1024 && n > 20 * 1024, "{n}");
    assert!(out.logs[0].ends_with('…'), "{:?}", out.logs.len());

    // Both over: the result keeps most of the budget, the lines share the rest.
    let out = run(
        "for (let i = 0; i < 100; i++) console.log('\\n\\t\\u0002'.repeat(500)); return '\\u0003'.repeat(10000)",
    )
    .await;
    assert!(
        out.truncated.logs && out.truncated.result,
        "{:?}",
        out.truncated
    );
    assert!(inline_bytes(&out) <= 24 * 1024, "{}", inline_bytes(&out));

    // A normal small log is untouched.
    let out = run(
        "console.log('a', 1, { b: [2] }); console.warn('tab\\there'); console.log(''); return 2",
    )
    .await;
    assert_eq!(value(&out), json!(2));
    assert_eq!(out.logs, vec!["a 1 {\"b\":[2]}", "[warn] tab\there", ""]);
    assert!(out.truncated.is_empty());
    assert!(out.notices.is_empty(), "{:?}", out.notices);
}

/// Issue 16: an out-of-memory inside promise jobs, which QuickJS drops (a handler's error
/// rejects a promise nobody handles; a job it cannot queue vanishes), fails the run with
/// `memory_limit` — not `never_settled`, not a compute limit after spinning on, not completed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn out_of_memory_inside_promise_jobs_is_a_memory_limit() {
    let host = FakeHost::slow(100);
    // Each step is resolved with the next, so the chain keeps every promise. Without the watch
    // (oom.rs) the first two ended as `never_settled` here, and the third, with ballast and a
    // pending call, completed once the storm died.
    for code in [
        "const f = () => Promise.resolve().then(f); f(); await new Promise(() => {})",
        "let n = 0; const f = () => { n++; if (n % 1000 === 0) console.log(n); return Promise.resolve().then(f) }; f(); await new Promise(() => {})",
        "const ballast = []; for (let i = 0; i < 50000; i++) ballast.push({ i, s: 'b' + i }); const p = github.get_repo({}); const f = () => Promise.resolve().then(f); f(); await p; return ballast.length",
    ] {
        let out = run_with(
            with_limits(code, |l| l.memory_bytes = 16 * 1024 * 1024),
            &host,
        )
        .await;
        assert_eq!(error_code(&out), "memory_limit", "{code}: {out:?}");
    }
    // The spec's heap, 64 MB.
    let out = run_with(
        input("const f = () => Promise.resolve().then(f); f(); await new Promise(() => {})"),
        &host,
    )
    .await;
    assert_eq!(error_code(&out), "memory_limit", "{out:?}");
    assert_eq!(value(&run("return 'next'").await), json!("next"));
}

/// Issue 16: `null` is what QuickJS throws when it cannot even build its out-of-memory error,
/// but a guest's own `throw null` (or `undefined`) is a thrown value like any other.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn throwing_null_or_undefined_is_a_runtime_error() {
    for (code, message) in [
        ("throw null", "null"),
        ("throw undefined", "undefined"),
        ("await github.get_repo({}); throw null", "null"),
        ("await Promise.reject(null)", "null"),
        (
            "queueMicrotask(() => { throw null }); await new Promise(r => setTimeout(r, 5))",
            "null",
        ),
        (
            "setTimeout(() => { throw null }, 1); await new Promise(r => setTimeout(r, 5))",
            "uncaught in a setTimeout callback: null",
        ),
    ] {
        let out = run(code).await;
        assert_eq!(error_code(&out), "runtime_error", "{code}: {out:?}");
        assert_eq!(
            out.error.as_ref().map(|e| e.message.as_str()),
            Some(message),
            "{code}"
        );
    }
    // An unhandled `Promise.reject(null)` is no out-of-memory either: the run completes.
    assert_eq!(
        value(&run("Promise.reject(null); return 3").await),
        json!(3)
    );
}

#[tokio::test]
async fn code_over_the_limit_is_refused() {
    let code = format!("return '{}'", "a".repeat(70_000));
    let out = run(&code).await;
    assert_eq!(error_code(&out), "code_too_large");
}

#[tokio::test]
async fn limits_can_be_lowered_not_raised() {
    let asked = Limits {
        compute_ms: 1_000_000,
        max_calls: 10,
        ..Limits::default()
    };
    let l = Limits::default().lowered_to(&asked);
    assert_eq!(l.compute_ms, 10_000);
    assert_eq!(l.max_calls, 10);
    // run() clamps too: a raised max_calls is still 500.
    let host = FakeHost::echo();
    let out = run_with(
        with_limits(
            "for (let i = 0; i < 501; i++) await github.get_repo({})",
            |l| l.max_calls = 10_000,
        ),
        &host,
    )
    .await;
    assert_eq!(error_code(&out), "max_calls");
    assert_eq!(host.call_count(), 500);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn many_runs_at_once_on_a_multi_threaded_runtime() {
    // 12 runs make 3 calls each, and the host answers calls only in groups of 12 waiting
    // together: 36 calls are answered only if at least four runs were at the host at once. A
    // sandbox that ran one run at a time would leave them waiting until the wall limit.
    let meeting = FakeHost::meeting(12);
    let host: Arc<dyn capa_sandbox::Host> = meeting.clone();
    let mut tasks = Vec::new();
    for i in 0..16 {
        let host = Arc::clone(&host);
        tasks.push(tokio::spawn(async move {
            let code = if i % 4 == 0 {
                "while (true) {}".to_string()
            } else {
                format!("const r = await Promise.all([1,2,3].map(() => github.get_repo({{}}))); return {i}")
            };
            let limits = |l: &mut Limits| {
                l.compute_ms = 300;
                l.wall_ms = 20_000;
            };
            capa_sandbox::run(with_limits(&code, limits), host).await
        }));
    }
    for (i, t) in tasks.into_iter().enumerate() {
        let out = t.await.unwrap_or_else(|e| panic!("{e}"));
        if i % 4 == 0 {
            assert_eq!(error_code(&out), "compute_limit");
        } else {
            assert_eq!(value(&out), json!(i));
        }
    }
    assert_eq!(meeting.call_count(), 36);
    assert!(meeting.max_in_flight() >= 12, "{}", meeting.max_in_flight());
}

/// Issue 14, item 8: one call's arguments are bounded, counted in bytes of the JSON sent.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn arguments_over_the_limit_are_a_tool_error_counted_in_sent_bytes() {
    // `{"s":"…"}` is 8 bytes plus the string; `é` is one JavaScript character but two bytes.
    let code = |n: usize| {
        format!(
            "try {{ await github.get_repo({{ s: 'é'.repeat({n}) }}); return 'sent' }} \
             catch (e) {{ return [e instanceof ToolError, e.code, e.retryable, e.message] }}"
        )
    };
    let host = FakeHost::echo();
    let at_limit = run_with(with_limits(&code(496), |l| l.argument_bytes = 1000), &host).await;
    assert_eq!(value(&at_limit), json!("sent"));
    assert_eq!(host.call_count(), 1);

    let over = run_with(with_limits(&code(497), |l| l.argument_bytes = 1000), &host).await;
    let refused = value(&over);
    assert_eq!(refused[0], json!(true), "{refused}");
    assert_eq!(refused[1], json!("arguments_too_large"));
    assert_eq!(refused[2], json!(false));
    assert!(
        refused[3]
            .as_str()
            .is_some_and(|m| m.contains("1002 bytes") && m.contains("1000")),
        "{refused}"
    );
    // The host never saw the refused call, and the run may go on with smaller calls.
    assert_eq!(host.call_count(), 1);

    // The default is 4 MiB: a 5 MB argument is refused without raising the limit.
    let big = run_with(
        input(
            "try { await github.get_repo({ s: 'x'.repeat(5_000_000) }) } catch (e) { return e.code }",
        ),
        &host,
    )
    .await;
    assert_eq!(value(&big), json!("arguments_too_large"));
    assert_eq!(host.call_count(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn arguments_are_counted_as_sent_not_as_the_guest_wrote_them() {
    // JSON.stringify writes 1e20 as `100000000000000000000` (21 bytes); the hub sends `1e+20`
    // (5 bytes). `{"n":[…]}` of 200 of them is 4407 bytes as the guest wrote it, and
    // 200 × 5 + 199 + 8 = 1207 bytes as sent.
    let host = FakeHost::echo();
    let out = run_with(
        with_limits(
            "await github.get_repo({ n: Array(200).fill(1e20) }); return 'sent'",
            |l| l.argument_bytes = 1207,
        ),
        &host,
    )
    .await;
    assert_eq!(value(&out), json!("sent"));
    let out = run_with(
        with_limits(
            "try { await github.get_repo({ n: Array(200).fill(1e20) }) } catch (e) { return e.code }",
            |l| l.argument_bytes = 1206,
        ),
        &host,
    )
    .await;
    assert_eq!(value(&out), json!("arguments_too_large"));
}

#[tokio::test]
async fn argument_text_far_over_the_limit_is_refused_before_it_is_read() {
    // 2 bytes of text per element: parsed, each would be a 32-byte value. Refused on the text.
    let host = FakeHost::echo();
    let out = run_with(
        with_limits(
            "try { await github.get_repo({ n: Array(5000).fill(0) }) } catch (e) { return [e.code, e.message] }",
            |l| l.argument_bytes = 1000,
        ),
        &host,
    )
    .await;
    let answer = value(&out);
    assert_eq!(answer[0], json!("arguments_too_large"), "{answer}");
    assert!(
        answer[1]
            .as_str()
            .is_some_and(|m| m.contains("10007 bytes")),
        "{answer}"
    );
}
