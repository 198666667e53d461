//! The pool of warm sandboxes (issue 17): a pooled run sees nothing of another run, gets its
//! own limits, and gives the same output as a cold start.

use std::time::Duration;

use capa_sandbox::{RunInput, RunOutput};
use serde_json::json;

use crate::support::*;

/// Waits (up to ten seconds) until a warm sandbox is ready, so that the next run takes one.
async fn warm_one() {
    capa_sandbox::prewarm();
    for _ in 0..1000 {
        if capa_sandbox::prewarmed() > 0 {
            return;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("no warm sandbox within ten seconds");
}

async fn pooled(input: RunInput) -> RunOutput {
    warm_one().await;
    capa_sandbox::run(input, FakeHost::echo()).await
}

async fn unpooled(input: RunInput) -> RunOutput {
    capa_sandbox::run_unpooled(input, FakeHost::echo()).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pooled_runs_cannot_see_each_others_globals() {
    let first = pooled(input(
        "globalThis.x = 41; Object.prototype.leak = 'a'; Array.prototype.push = null; \
         Math.random = () => 0; return x + 1",
    ))
    .await;
    assert_eq!(value(&first), json!(42));
    let second = pooled(input(
        "return [typeof globalThis.x, ({}).leak === undefined, typeof [].push, \
         Math.random() !== 0]",
    ))
    .await;
    assert_eq!(value(&second), json!(["undefined", true, "function", true]));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pooled_run_gets_its_own_memory_and_stack_limits() {
    // 8 MiB of data passes under the default heap, not under a 4 MiB one.
    let code = "const a = []; for (let i = 0; i < 8; i++) a.push('x'.repeat(1 << 20) + i); \
                return a.length";
    assert_eq!(value(&pooled(input(code)).await), json!(8));
    let small = with_limits(code, |l| l.memory_bytes = 4 * 1024 * 1024);
    assert_eq!(error_code(&pooled(small).await), "memory_limit");
    // A smaller guest stack holds fewer frames.
    let depth = "let d = 0; function f() { d++; f() } try { f() } catch (e) {} return d";
    let full = value(&pooled(input(depth)).await).as_u64().unwrap_or(0);
    let small = with_limits(depth, |l| l.stack_bytes = 128 * 1024);
    let shallow = value(&pooled(small).await).as_u64().unwrap_or(u64::MAX);
    assert!(
        shallow * 4 < full,
        "{shallow} frames of 128 KiB vs {full} of 1 MiB"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pooled_and_unpooled_runs_give_identical_output() {
    let code = "console.log('start', Date.now(), Math.random()); \
                const r = await github.get_repo({ n: crypto.randomUUID() }); \
                await new Promise(res => setTimeout(res, 250)); \
                return { r, t: Date.now(), x: Math.random(), b: Array.from(crypto.getRandomValues(new Uint8Array(4))) }";
    let a = pooled(input(code)).await;
    let b = unpooled(input(code)).await;
    assert_eq!(a.status, capa_sandbox::RunStatus::Completed, "{a:?}");
    assert_eq!(a.without_timings(), b.without_timings());
}

/// The issue 16 storm at the spec's 64 MB heap, in a warm sandbox: there the failing job frees
/// the whole chain before the driver looks, so only the job's own `null` tells the
/// out-of-memory (a guest's `queueMicrotask` throw no longer fails a job).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_out_of_memory_that_fails_a_job_in_a_warm_sandbox_is_a_memory_limit() {
    let code = "const f = () => Promise.resolve().then(f); f(); await new Promise(() => {})";
    assert_eq!(error_code(&pooled(input(code)).await), "memory_limit");
    assert_eq!(error_code(&unpooled(input(code)).await), "memory_limit");
    let out = pooled(input(
        "queueMicrotask(() => { throw new RangeError('mine') }); await new Promise(r => setTimeout(r, 5))",
    ))
    .await;
    assert_eq!(error_code(&out), "runtime_error");
    assert!(
        out.error.is_some_and(|e| e.message.contains("mine")),
        "the callback's own error"
    );
}

/// Waits until every warm sandbox the pool keeps is made again after a run, so that the next
/// runs take sandboxes made after it (primed with its namespaces).
async fn refilled() {
    tokio::time::sleep(Duration::from_millis(60)).await;
    warm_one().await;
}

fn with_namespaces(code: &str, namespaces: Vec<capa_sandbox::Namespace>) -> RunInput {
    let mut i = input(code);
    i.namespaces = namespaces.into();
    i
}

fn one_namespace(global: &str, tool: &str) -> Vec<capa_sandbox::Namespace> {
    vec![capa_sandbox::Namespace {
        global: global.into(),
        tools: vec![capa_sandbox::ToolBinding {
            member: tool.into(),
            address: format!("{global}.{tool}"),
        }],
        unlisted_source: None,
    }]
}

/// Warm sandboxes define the namespaces of the runs before them ahead (primed.rs): a run gets
/// exactly its own namespaces however the ones before it differed, and calls reach its tools.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pooled_run_gets_its_own_namespaces_when_the_runs_before_had_others() {
    let code = "return [typeof globalThis.alpha, typeof globalThis.beta, \
                Object.keys(globalThis.alpha ?? globalThis.beta)]";
    let alpha = || one_namespace("alpha", "one");
    let beta = || one_namespace("beta", "two");
    for (namespaces, expected) in [
        (alpha(), json!(["object", "undefined", ["one"]])),
        (alpha(), json!(["object", "undefined", ["one"]])),
        (beta(), json!(["undefined", "object", ["two"]])),
        (beta(), json!(["undefined", "object", ["two"]])),
        (alpha(), json!(["object", "undefined", ["one"]])),
    ] {
        // Twice each: the first run may take a sandbox made for the namespaces before.
        for _ in 0..2 {
            refilled().await;
            let out = pooled(with_namespaces(code, namespaces.clone())).await;
            assert_eq!(value(&out), expected, "{out:?}");
        }
    }
    refilled().await;
    let out = pooled(with_namespaces("return await alpha.one({ n: 1 })", alpha())).await;
    assert_eq!(out.calls.len(), 1, "{out:?}");
    assert_eq!(out.calls[0].address, "alpha.one");
}

/// A source that shadows a built-in global is told to every run, including those whose
/// sandbox defined the namespaces before the run started.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_primed_sandbox_tells_its_run_what_defining_the_namespaces_told() {
    let shadowing = || {
        let mut namespaces = one_namespace("console", "log_line");
        namespaces.extend(one_namespace("gamma", "three"));
        namespaces
    };
    for _ in 0..4 {
        refilled().await;
        let out = pooled(with_namespaces("return typeof gamma.three", shadowing())).await;
        assert_eq!(value(&out), json!("function"), "{out:?}");
        assert!(
            out.notices
                .iter()
                .any(|n| n.contains("the source \"console\" shadows a built-in global")),
            "{:?}",
            out.notices
        );
    }
}
