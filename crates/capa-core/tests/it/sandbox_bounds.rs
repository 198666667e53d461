//! Issue 16, the sandbox's limits through the hub: the envelope's result and logs stay within
//! `inlineResultBytes` as serialised (after redaction too), an out-of-memory inside promise jobs
//! is `memory_limit` while `throw null` is a runtime error, and a namespace answers its tools'
//! remote names against the real server-everything.

use serde_json::{Value, json};

use crate::support::{TestHub, everything_js, execute_json, installed};

/// The spec's `inlineResultBytes`, less the 256 bytes the envelope's one-line text summary may
/// take (the two channels together stay within the limit).
const INLINE: usize = 24 * 1024 - 256;

async fn execute(hub: &TestHub, code: &str) -> Value {
    execute_json(hub, Some(code), None).await
}

/// Bytes the envelope's JSON spends on `result` and `logs` (compact, as it is sent).
fn inline_bytes(envelope: &Value) -> usize {
    ["result", "logs"]
        .iter()
        .filter_map(|k| envelope.get(*k))
        .map(|v| v.to_string().len())
        .sum()
}

fn code_hub() -> &'static str {
    "options:\n  toolExposure: code\n"
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn logs_and_result_stay_within_the_inline_budget_as_serialised() {
    let hub = TestHub::start(code_hub()).await;
    for code in [
        // 6 MB of `"",` before: empty lines cost nothing as raw bytes.
        "for (let i = 0; i < 2000000; i++) console.log(''); return 'done'",
        // 24,000 raw bytes, 144 KB as JSON (`\u0001` is six bytes).
        "console.log('\\u0001'.repeat(24000)); return 'done'",
        "for (let i = 0; i < 50; i++) console.log('\\n'.repeat(1000)); return '\\u0002'.repeat(30000)",
    ] {
        let envelope = execute(&hub, code).await;
        assert_eq!(envelope["status"], "completed", "{code}: {envelope:#}");
        let n = inline_bytes(&envelope);
        assert!(n <= INLINE, "{code}: {n} bytes");
        assert_eq!(envelope["truncated"]["logs"], json!(true), "{code}");
    }
    let envelope = execute(
        &hub,
        "console.log('hello', 1); console.error('x'); return 'done'",
    )
    .await;
    assert_eq!(
        envelope["logs"],
        json!(["hello 1", "[error] x"]),
        "{envelope:#}"
    );
    assert!(envelope.get("truncated").is_none(), "{envelope:#}");
}

/// `[redacted]` (10 bytes) replaces a secret that may be as short as 4: the envelope is fitted
/// again after redaction.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn redaction_cannot_push_the_envelope_over_the_budget() {
    let hub = TestHub::start(code_hub()).await;
    hub.redactor.add("k9Zq");
    // The code holds no secret (it is built at run time), so it runs.
    let envelope = execute(
        &hub,
        "const s = 'k9' + 'Zq'; console.log(s.repeat(5000)); return s.repeat(5000)",
    )
    .await;
    assert_eq!(envelope["status"], "completed", "{envelope:#}");
    let text = envelope.to_string();
    assert!(!text.contains("k9Zq"), "the secret left the hub");
    assert!(text.contains("[redacted]"));
    let n = inline_bytes(&envelope);
    assert!(n <= INLINE, "{n} bytes");
    assert_eq!(envelope["truncated"], json!({"result": true, "logs": true}));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn promise_jobs_out_of_memory_and_thrown_null() {
    let hub = TestHub::start(code_hub()).await;
    // The chain keeps every promise until the 64 MB heap is full; QuickJS dropped that error.
    let envelope = execute(
        &hub,
        "const f = () => Promise.resolve().then(f); f(); await new Promise(() => {})",
    )
    .await;
    assert_eq!(envelope["error"]["code"], "memory_limit", "{envelope:#}");
    for (code, message) in [("throw null", "null"), ("throw undefined", "undefined")] {
        let envelope = execute(&hub, code).await;
        assert_eq!(
            envelope["error"]["code"], "runtime_error",
            "{code}: {envelope:#}"
        );
        assert_eq!(envelope["error"]["message"], message);
    }
}

/// server-everything's tools have remote names like `get-sum`; the guest may use either form.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_namespace_answers_its_tools_remote_names() {
    let yaml = format!(
        "options:\n  demo: false\n  toolExposure: code\nservers:\n  - id: everything\n    type: mcp\n    def: {{ command: {:?}, args: [{:?}, stdio] }}\n",
        installed("node_modules/.bin/node"),
        everything_js(),
    );
    let hub = TestHub::start(&yaml).await;
    let envelope = execute(
        &hub,
        r#"const [a, b] = await Promise.all([
  everything["get-sum"]({ a: 2, b: 40 }),
  everything.get_sum({ a: 1, b: 1 }),
]);
let hint;
try { everything["get-summ"] } catch (e) { hint = e.message }
return {
  a: JSON.stringify(a), b: JSON.stringify(b),
  same: everything["get-sum"] === everything.get_sum,
  listed: Object.keys(everything).includes("get-sum"),
  member: Object.keys(everything).includes("get_sum"),
  hint,
};"#,
    )
    .await;
    assert_eq!(envelope["status"], "completed", "{envelope:#}");
    let result = &envelope["result"];
    assert!(
        result["a"].as_str().is_some_and(|s| s.contains("42")),
        "{result:#}"
    );
    assert!(result["b"].as_str().is_some_and(|s| s.contains('2')));
    assert_eq!(result["same"], json!(true));
    assert_eq!(result["listed"], json!(false));
    assert_eq!(result["member"], json!(true));
    assert!(
        result["hint"]
            .as_str()
            .is_some_and(|h| h.contains("Did you mean everything.get_sum")),
        "{result:#}"
    );
    let calls: Vec<&str> = envelope["calls"]
        .as_array()
        .map(|c| c.iter().filter_map(|c| c["address"].as_str()).collect())
        .unwrap_or_default();
    assert_eq!(calls, ["everything.get-sum", "everything.get-sum"]);
}
