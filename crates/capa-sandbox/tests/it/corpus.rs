//! An adversarial corpus: escape attempts, each contained — the run ends with a sensible status
//! within its limits, nothing reaches the host but the run's own tools, nothing panics — and the
//! same tokio runtime keeps serving normal runs afterwards, in a clean world.

use capa_sandbox::{RunOutput, RunStatus};
use serde_json::{Value, json};

use crate::support::*;

enum Expect {
    /// Completes with this value.
    Value(Value),
    /// Completes with any value.
    Completes,
    /// Fails with one of these codes.
    Fails(&'static [&'static str]),
    /// Any status: only containment is checked.
    Contained,
}

use Expect::*;

const LIMITS: &[&str] = &["compute_limit", "memory_limit", "stack_overflow"];

#[expect(
    clippy::too_many_lines,
    reason = "a table of hostile programs, one entry each"
)]
fn corpus() -> Vec<(&'static str, &'static str, Expect)> {
    vec![
        // Constructor chains to the Function constructor.
        (
            "array-constructor-chain",
            "return [].constructor.constructor('return globalThis')()",
            Fails(&["runtime_error"]),
        ),
        (
            "object-constructor-chain",
            "return ({}).constructor.constructor('return this')()",
            Fails(&["runtime_error"]),
        ),
        (
            "async-function-ctor",
            "return (async () => {}).constructor('return 1')",
            Fails(&["runtime_error"]),
        ),
        (
            "async-generator-ctor",
            "return Object.getPrototypeOf(async function*(){}).constructor('yield 1')",
            Fails(&["runtime_error"]),
        ),
        (
            "reflect-construct-function",
            "return Reflect.construct(Object.getPrototypeOf(function(){}).constructor, ['return 1'])",
            Fails(&["runtime_error"]),
        ),
        (
            "bound-constructor",
            "const F = (function(){}).constructor.bind(null); return new F('return 1')()",
            Fails(&["runtime_error"]),
        ),
        (
            "arguments-callee-caller",
            "const c = arguments.callee.caller; return typeof c",
            Contained,
        ),
        (
            "function-caller-from-getter",
            "return await github.get_repo({ get x() { return typeof (function f() { return f.caller })() } })",
            Contained,
        ),
        (
            "tostring-of-tool",
            "return github.get_repo.toString().length > 0",
            Value(json!(true)),
        ),
        // The global object and its prototype.
        (
            "global-proto-null",
            "globalThis.__proto__ = null; return Object.getPrototypeOf(globalThis)",
            Contained,
        ),
        (
            "global-proto-proxy",
            "Object.setPrototypeOf(globalThis, new Proxy({}, { get() { return 'x' }, has() { return true } })); return typeof somethingUndefined",
            Contained,
        ),
        (
            "hidden-bridge",
            "return [typeof host, typeof globalThis.host, typeof __call, typeof deliver, Object.getOwnPropertySymbols(globalThis).map(String)]",
            Value(json!([
                "undefined",
                "undefined",
                "undefined",
                "undefined",
                ["Symbol(Symbol.toStringTag)"]
            ])),
        ),
        (
            "redefine-namespace-global",
            "try { Object.defineProperty(globalThis, 'github', { value: 1 }) } catch (e) {} delete globalThis.github; return (await github.get_repo({})).address",
            Value(json!("github.get_repo")),
        ),
        (
            "namespace-define-getter",
            "try { github.__defineGetter__('x', () => 1) } catch (e) { return e.name }",
            Value(json!("TypeError")),
        ),
        (
            "namespace-with-statement",
            "with (github) { return typeof get_repo }",
            Value(json!("function")),
        ),
        // Prototype pollution.
        (
            "pollute-then",
            "Object.prototype.then = function (r) { r('hijacked') }; return (await github.get_repo({})).address",
            Contained,
        ),
        (
            "pollute-tojson",
            "Object.prototype.toJSON = () => 'x'; return { a: 1 }",
            Value(json!("x")),
        ),
        (
            "pollute-array-push",
            "Array.prototype.push = () => { throw new Error('push') }; return (await github.get_repo({ a: 1 })).arguments",
            Value(json!({"a": 1})),
        ),
        (
            "forge-json",
            "JSON.stringify = () => '\"forged\"'; JSON.parse = () => 'forged'; return (await github.get_repo({ a: 1 })).address",
            Value(json!("github.get_repo")),
        ),
        (
            "pollute-promise-then",
            "Promise.prototype.then = function () { return this }; return (await github.get_repo({})).address",
            Contained,
        ),
        (
            "freeze-intrinsics",
            "Object.freeze(Object.prototype); Object.freeze(Array.prototype); Object.freeze(Promise.prototype); return (await github.get_repo({ a: [1] })).arguments",
            Value(json!({"a": [1]})),
        ),
        (
            "pollute-object-setter",
            "Object.defineProperty(Object.prototype, 'code', { set() { throw new Error('setter') } }); try { await github.get_repo({ q: 1 }); throw new ToolError('m', { code: 'own' }) } catch (e) { return e.code }",
            Value(json!("own")),
        ),
        // Symbol.species.
        (
            "promise-species",
            "class Evil extends Promise { static get [Symbol.species]() { return function (exec) { exec(() => {}, () => {}) } } } Promise.prototype.constructor = Evil; const r = await github.get_repo({}); return r.address",
            Contained,
        ),
        (
            "array-species",
            "Object.defineProperty(Array, Symbol.species, { get() { throw new Error('species') } }); return [1, 2].map(x => x)",
            Contained,
        ),
        (
            "array-instance-species",
            "const a = [1, 2]; a.constructor = { [Symbol.species]: function () { return new Proxy([], { set() { for (;;); } }) } }; return a.map(x => x)",
            Contained,
        ),
        // Getters and proxies on the result.
        (
            "result-getter-throws",
            "return { get x() { throw new Error('getter') } }",
            Fails(&["result_not_json"]),
        ),
        (
            "result-getter-loops",
            "return { get x() { for (;;); } }",
            Fails(&["compute_limit"]),
        ),
        (
            "result-proxy-throws",
            "return new Proxy({}, { ownKeys() { throw new Error('keys') } })",
            Fails(&["result_not_json"]),
        ),
        (
            "result-proxy-loops",
            "return new Proxy({}, { ownKeys() { for (;;); } })",
            Fails(&["compute_limit"]),
        ),
        (
            "result-thenable-loops",
            "return { then() { for (;;); } }",
            Fails(&["compute_limit"]),
        ),
        (
            "result-deeply-nested",
            "let o = []; for (let i = 0; i < 1000; i++) o = [o]; return o",
            Fails(&["result_not_json"]),
        ),
        (
            "result-valueof-tostring-throw",
            "return { valueOf() { throw 1 }, toString() { throw 2 } }",
            Value(json!({})),
        ),
        // Thrown values that fight back.
        (
            "error-tostring-throws",
            "throw { toString() { throw new Error('inner') } }",
            Fails(&["runtime_error"]),
        ),
        (
            "error-message-getter-throws",
            "const e = new Error('x'); Object.defineProperty(e, 'message', { get() { throw 1 } }); throw e",
            Fails(&["runtime_error"]),
        ),
        (
            "error-message-getter-loops",
            "throw { get message() { for (;;); } }",
            Fails(&["compute_limit"]),
        ),
        (
            "error-proxy",
            "throw new Proxy(new Error('p'), { get() { throw new Error('trap') } })",
            Fails(&["runtime_error"]),
        ),
        (
            "error-symbol-toprimitive",
            "throw { [Symbol.toPrimitive]() { throw 3 } }",
            Fails(&["runtime_error"]),
        ),
        (
            "catch-interrupt-in-finally",
            "try { for (;;); } finally { return 'escaped' }",
            Fails(&["compute_limit"]),
        ),
        // Redefining the prelude's globals only affects the guest.
        (
            "redefine-tool-error",
            "globalThis.ToolError = function () { throw 'x' }; return (await github.get_repo({})).address",
            Value(json!("github.get_repo")),
        ),
        (
            "redefine-console",
            "console.log = () => { throw new Error('log') }; try { console.log(1) } catch (e) {} console = null; return 1",
            Value(json!(1)),
        ),
        (
            "redefine-date-now",
            "Date.now = () => 0; await new Promise(r => setTimeout(r, 10)); return new Date().getTime()",
            Value(json!(1_767_225_600_010_i64)),
        ),
        (
            "redefine-date",
            "Date = function () { return 'fake' }; return typeof new Date()",
            Value(json!("object")),
        ),
        (
            "redefine-math-random",
            "Math.random = () => 4; return crypto.randomUUID().length",
            Value(json!(36)),
        ),
        // Stack-trace APIs that could hand out prelude functions.
        (
            "prepare-stack-trace",
            "Error.prepareStackTrace = (e, frames) => frames.map(f => { try { return typeof f.getFunction() } catch (x) { return 'x' } }); let s; await github.get_repo({ get x() { s = new Error().stack; return 1 } }); return Array.isArray(s) ? s.filter(t => t === 'function').length : 0",
            Contained,
        ),
        // Huge strings, storms, ReDoS.
        (
            "huge-string",
            "return 'x'.repeat(2 ** 29)",
            Fails(&["memory_limit"]),
        ),
        (
            "huge-log-line",
            "console.log('x'.repeat(10_000_000)); return 1",
            Completes,
        ),
        (
            "huge-arguments",
            "return (await github.get_repo({ s: 'x'.repeat(20_000_000) })).address",
            Contained,
        ),
        (
            "deep-arguments",
            "let o = {}; for (let i = 0; i < 1000; i++) o = { o }; return await github.get_repo(o)",
            Fails(&["invalid_arguments"]),
        ),
        (
            "promise-storm",
            "for (let i = 0; i < 1e7; i++) Promise.resolve(i).then(() => {}); return 1",
            Contained,
        ),
        // Each step's promise is resolved with the next one, so the chain keeps them all and
        // fills the heap (see `memory_of`). QuickJS used to lose that out-of-memory inside
        // its job loop: where the failing allocation landed decided between spinning on to
        // the compute limit and `never_settled`.
        (
            "microtask-loop",
            "const f = () => Promise.resolve().then(f); f(); await new Promise(() => {})",
            Fails(&["memory_limit"]),
        ),
        (
            "microtask-loop-unchained",
            "const f = () => { Promise.resolve().then(f) }; f(); await new Promise(() => {})",
            Fails(&["compute_limit"]),
        ),
        (
            "queue-microtask-loop",
            "const f = () => queueMicrotask(f); f(); await new Promise(() => {})",
            Fails(&["compute_limit"]),
        ),
        (
            "timer-storm",
            "for (;;) setTimeout(() => {}, 0)",
            Fails(&["runtime_error"]),
        ),
        (
            "timer-chain",
            "const f = () => setTimeout(f, 1); f(); await new Promise(() => {})",
            Fails(&["compute_limit"]),
        ),
        (
            "call-storm",
            "const ps = []; for (let i = 0; i < 600; i++) ps.push(github.get_repo({ i }).catch(e => e.code)); const r = await Promise.all(ps); return r.filter(x => x === 'max_calls').length",
            Value(json!(100)),
        ),
        (
            "redos",
            "return /^(a+)+$/.test('a'.repeat(40) + 'b')",
            Fails(&["compute_limit"]),
        ),
        (
            "regex-huge-backtrack",
            "return /(x+x+)+y/.test('x'.repeat(5000))",
            Fails(&["compute_limit"]),
        ),
        (
            "async-recursion",
            "async function f() { await f() } await f()",
            Fails(LIMITS),
        ),
        (
            "lone-surrogates",
            "console.log('\\ud800'); return { ['k']: '\\udc00x' }",
            Value(json!({"k": "\u{fffd}x"})),
        ),
        (
            "get-random-values-quota",
            "try { crypto.getRandomValues(new Uint8Array(1e6)) } catch (e) { return e.name }",
            Value(json!("QuotaExceededError")),
        ),
        (
            "structured-clone-proxy",
            "return structuredClone(new Proxy({}, { ownKeys() { throw new Error('trap') } }))",
            Fails(&["runtime_error"]),
        ),
        (
            "reentrant-call-in-getter",
            "return (await github.get_repo({ get x() { github.get_repo({ inner: true }); return 1 } })).arguments",
            Value(json!({"x": 1})),
        ),
        (
            "reentrant-call-in-then",
            "Object.prototype.then = undefined; Object.defineProperty(Object.prototype, 'then', { get() { delete Object.prototype.then; github.get_repo({ nested: 1 }); return undefined }, configurable: true }); return (await github.get_repo({})).address",
            Contained,
        ),
        (
            "import-dynamic",
            "return await import('data:text/javascript,export default globalThis')",
            Fails(&["runtime_error"]),
        ),
        (
            "atomics-wait",
            "return typeof Atomics === 'undefined' && typeof SharedArrayBuffer === 'undefined'",
            Value(json!(true)),
        ),
        (
            "wrapper-breakout",
            "}); globalThis.escaped = 1; (async function () {",
            Contained,
        ),
    ]
}

/// Heap of each case: 32 MB, except where a limit must come well before the compute limit so
/// that the outcome does not depend on the machine's speed.
fn memory_of(name: &str) -> usize {
    match name {
        // The chain keeps about 1.2 KB a step: 32 MB fill in about 0.6 s of the 1 s of compute,
        // too close to call on a loaded machine; 8 MB in a quarter of that.
        "microtask-loop" => 8 * 1024 * 1024,
        _ => 32 * 1024 * 1024,
    }
}

/// No clock is read: a run that outlives its 5 s of wall time says `wall_limit`, which no case
/// expects.
fn check(name: &str, expect: &Expect, out: &RunOutput) {
    match expect {
        Value(v) => assert_eq!(&value(out), v, "{name}: {out:?}"),
        Completes => assert_eq!(out.status, RunStatus::Completed, "{name}: {out:?}"),
        Fails(codes) => {
            let code = error_code(out);
            assert!(
                codes.contains(&code.as_str()),
                "{name}: {code} not in {codes:?}: {out:?}"
            );
        }
        Contained => {}
    }
    let text = serde_json::to_string(&out).unwrap_or_default();
    assert!(
        text.len() < 64 * 1024,
        "{name}: output of {} bytes",
        text.len()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn adversarial_corpus_is_contained() {
    let cases = corpus();
    assert!(cases.len() >= 40, "{}", cases.len());
    let host = FakeHost::echo();
    for (name, code, expect) in &cases {
        let out = run_with(
            with_limits(code, |l| {
                l.compute_ms = 1_000;
                l.wall_ms = 5_000;
                l.memory_bytes = memory_of(name);
            }),
            &host,
        )
        .await;
        check(name, expect, &out);
        // Every run starts from a clean world: nothing the last one did is visible.
        let probe = run(
            "return [typeof Object.prototype.then, typeof Object.prototype.toJSON, typeof Array.prototype.push,
                     typeof JSON.stringify, typeof globalThis.escaped, Object.getPrototypeOf(globalThis) === Object.prototype,
                     (await github.get_repo({ p: 1 })).arguments.p, typeof ToolError, new Date().getTime()]",
        )
        .await;
        assert_eq!(
            value(&probe),
            json!([
                "undefined",
                "undefined",
                "function",
                "function",
                "undefined",
                true,
                1,
                "function",
                1_767_225_600_000_i64
            ]),
            "after {name}"
        );
    }
    // Nothing reached the host but the run's own tools.
    let calls = host.calls.lock().map(|c| c.clone()).unwrap_or_default();
    assert!(
        calls
            .iter()
            .all(|c| c.address.starts_with("github.") || c.address.starts_with("slack."))
    );
    // The same runtime still serves a normal run.
    let out = run("return (await Promise.all([github.get_repo({ a: 1 }), slack.post_message({ b: 2 })])).map(r => r.address)").await;
    assert_eq!(
        value(&out),
        json!(["github.get_repo", "slack.post_message"])
    );
}
