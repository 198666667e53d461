//! Return values, tool calls, `ToolError`, unknown tools, the web APIs of the prelude.

use std::sync::Arc;
use std::time::Duration;

use capa_sandbox::{RunStatus, ToolFailure};
use serde_json::json;

use crate::support::*;

#[tokio::test]
async fn returns_values_and_undefined() {
    assert_eq!(value(&run("return 1 + 1").await), json!(2));
    assert_eq!(
        value(&run("return { a: [1, 'x', null, true], b: { c: 1.5 } }").await),
        json!({"a": [1, "x", null, true], "b": {"c": 1.5}})
    );
    let out = run("const x = 1;").await;
    assert_eq!(out.status, RunStatus::Completed);
    assert_eq!(out.result, None);
    assert_eq!(
        value(&run("return await Promise.resolve('later')").await),
        json!("later")
    );
}

/// Numbers leave the guest exactly as JavaScript holds them: the JSON between the guest and the
/// host is parsed with correct rounding (`serde_json`'s `float_roundtrip`), without which some
/// doubles came back one unit in the last place off.
#[tokio::test]
async fn numbers_come_back_bit_for_bit() {
    let out = run(
        "return [0.47888438889544893, 0.1 + 0.2, 5e-324, 1.7976931348623157e308, 2 ** 53 + 2, -0.000123456789012345678]",
    )
    .await;
    // Rust's own parser rounds correctly: the reference for each literal.
    let want: Vec<u64> = [
        "0.47888438889544893",
        "0.30000000000000004",
        "5e-324",
        "1.7976931348623157e308",
        "9007199254740994",
        "-0.000123456789012345678",
    ]
    .iter()
    .map(|n| n.parse::<f64>().expect("a float").to_bits())
    .collect();
    let got: Vec<u64> = value(&out)
        .as_array()
        .expect("an array")
        .iter()
        .map(|n| n.as_f64().expect("a number").to_bits())
        .collect();
    assert_eq!(got, want);
}

#[tokio::test]
async fn tool_call_passes_arguments_and_connection() {
    let host = FakeHost::echo();
    let out = run_with(
        input(
            r#"
            const a = await github.create_issue({ title: "t" });
            const b = await slack.post_message({ text: "hi" }, { connection: "work" });
            const c = await github.get_repo();
            return [a, b, c];
            "#,
        ),
        &host,
    )
    .await;
    assert_eq!(
        value(&out),
        json!([
            {"address": "github.create_issue", "arguments": {"title": "t"}, "connection": null},
            {"address": "slack.post_message", "arguments": {"text": "hi"}, "connection": "work"},
            {"address": "github.get_repo", "arguments": {}, "connection": null},
        ])
    );
    let calls = host.calls.lock().map(|c| c.clone()).unwrap_or_default();
    assert_eq!(calls.len(), 3);
    assert_eq!(calls[1].connection.as_deref(), Some("work"));
    assert_eq!(
        calls.iter().map(|c| c.index).collect::<Vec<_>>(),
        vec![0, 1, 2]
    );
    assert_eq!(out.calls.len(), 3);
    assert!(out.calls.iter().all(|c| c.ok));
    assert_eq!(out.calls[1].address, "slack.post_message");
}

#[tokio::test]
async fn parallel_calls_overlap() {
    let host = FakeHost::slow(50);
    let out = run_with(
        input(
            "const r = await Promise.all([0,1,2,3,4,5,6,7].map(i => github.search_issues({ q: i })));
             return r.map(x => x.arguments.q);",
        ),
        &host,
    )
    .await;
    assert_eq!(value(&out), json!([0, 1, 2, 3, 4, 5, 6, 7]));
    // All eight were at the host before the first was answered.
    assert_eq!(host.max_in_flight(), 8);
    let first_answer = (0..8)
        .map(|i| host.position(Event::Answered(i)))
        .min()
        .unwrap_or(usize::MAX);
    assert!(
        (0..8).all(|i| host.position(Event::Arrived(i)) < first_answer),
        "{:?}",
        host.events()
    );
}

#[tokio::test]
async fn tool_failure_becomes_a_tool_error() {
    let host = FakeHost::new(|_| {
        (
            Duration::ZERO,
            Err(ToolFailure {
                code: "not_found".into(),
                message: "no such repo".into(),
                hint: Some("check the owner".into()),
                status: Some(404),
                retryable: false,
            }),
        )
    });
    let out = run_with(
        input(
            r#"
            try { await github.get_repo({ repo: "x" }); }
            catch (e) {
              return { isToolError: e instanceof ToolError, isError: e instanceof Error,
                       name: e.name, message: e.message, code: e.code, address: e.address,
                       status: e.status, hint: e.hint, retryable: e.retryable };
            }
            "#,
        ),
        &host,
    )
    .await;
    assert_eq!(
        value(&out),
        json!({"isToolError": true, "isError": true, "name": "ToolError", "message": "no such repo",
               "code": "not_found", "address": "github.get_repo", "status": 404,
               "hint": "check the owner", "retryable": false})
    );
    assert!(!out.calls[0].ok);

    // Uncaught, the run fails with the tool's own code and hint.
    let out = run_with(input("await github.get_repo({});"), &host).await;
    assert_eq!(error_code(&out), "not_found");
    let err = out.error.unwrap_or_else(|| unreachable!());
    assert_eq!(err.message, "no such repo");
    assert_eq!(err.hint.as_deref(), Some("check the owner"));
}

#[tokio::test]
async fn unknown_tool_names_the_closest() {
    let out = run("return github.createIssue").await;
    assert_eq!(error_code(&out), "runtime_error");
    let msg = out.error.map(|e| e.message).unwrap_or_default();
    assert!(
        msg.starts_with("TypeError: github.createIssue is not a tool."),
        "{msg}"
    );
    assert!(msg.contains("Did you mean github.create_issue"), "{msg}");

    let out = run(
        "try { github.serch_issues({}) } catch (e) { return [e instanceof TypeError, e.message] }",
    )
    .await;
    let v = value(&out);
    assert_eq!(v[0], json!(true));
    assert!(
        v[1].as_str()
            .unwrap_or("")
            .contains("Did you mean github.search_issues"),
        "{v}"
    );

    let out = run("try { github.delete_everything() } catch (e) { return e.message }").await;
    let msg = value(&out).as_str().unwrap_or("").to_string();
    assert!(
        msg.contains("github has: github.create_issue, github.search_issues, github.get_repo"),
        "{msg}"
    );

    // Generic reads still work: await, JSON, in, typeof of members.
    let out = run(
        "return [typeof github.create_issue, 'create_issue' in github, 'x' in github,
                 JSON.stringify(Object.keys(github)), Object.isFrozen(github), await github === github]",
    )
    .await;
    assert_eq!(
        value(&out),
        json!([
            "function",
            true,
            false,
            "[\"create_issue\",\"search_issues\",\"get_repo\"]",
            true,
            true
        ])
    );
}

#[tokio::test]
async fn namespaces_are_frozen() {
    let out = run(
        r#"
        const tries = [
          () => { github.create_issue = () => "evil"; },
          () => { github.newtool = 1; },
          () => { delete github.create_issue; },
          () => { Object.defineProperty(github, "x", { value: 1 }); },
          () => { Object.setPrototypeOf(github, {}); },
          () => { globalThis.github = {}; },
          () => { "use strict"; github = {}; },
        ];
        const failures = [];
        for (const t of tries) { try { t(); failures.push("no error"); } catch (e) { failures.push(e.name); } }
        return [failures, (await github.get_repo({})).address];
        "#,
    )
    .await;
    let v = value(&out);
    assert_eq!(v[1], json!("github.get_repo"));
    // Sloppy-mode assignment to the read-only global fails silently; everything else throws.
    let names = v[0].as_array().cloned().unwrap_or_default();
    assert_eq!(names[..5], vec![json!("TypeError"); 5], "{v}");
}

#[tokio::test]
async fn hub_search_and_describe() {
    let out = run(r#"
        const s = await hub.search("create issue");
        const d = await hub.describe("github.create_issue");
        const d2 = await hub.describe(["a", "b"]);
        let e; try { await hub.describe("missing") } catch (x) { e = [x.code, x.address] }
        let u; try { await hub.read("h_x") } catch (x) { u = [x.code, x.address] }
        let t; try { await hub.read(3) } catch (x) { t = x.name }
        let o; try { await hub.read("h_x", [1]) } catch (x) { o = x.message }
        let r; try { await hub.resource("file:///etc/passwd") } catch (x) { r = [x.code, x.address] }
        let rt; try { await hub.resource({ uri: "x" }) } catch (x) { rt = x.name }
        let rl; try { await hub.resource("x".repeat(9000)) } catch (x) { rl = x.code }
        return [s, d, d2, e, u, t, o, r, rt, rl];
        "#)
    .await;
    let v = value(&out);
    assert_eq!(v[0], json!("results for create issue"));
    assert_eq!(v[1], json!("declare const github.create_issue;"));
    assert_eq!(v[2], json!("declare const a, b;"));
    assert_eq!(v[3], json!(["not_found", "hub.describe"]));
    // A host that keeps no results: every handle is unknown; bad arguments never reach it.
    assert_eq!(v[4], json!(["handle_not_found", "hub.read"]));
    assert_eq!(v[5], json!("TypeError"));
    assert!(
        v[6].as_str()
            .unwrap_or("")
            .contains("{ offset, length } or { path }"),
        "{v}"
    );
    // A host that relays no resources has none; a URI that is no string, or too long, is
    // refused before it reaches the host.
    assert_eq!(v[7], json!(["resource_not_found", "hub.resource"]));
    assert_eq!(v[8], json!("TypeError"));
    assert_eq!(v[9], json!("invalid_arguments"));
    assert!(out.calls.is_empty(), "lookups are not tool calls");
}

#[tokio::test]
async fn console_is_captured_with_levels() {
    let out = run(r#"
        console.log("plain", 1, { a: [1, 2] }, [3], null, undefined);
        console.info("i"); console.warn("w"); console.error("e"); console.debug("d");
        const o = { self: null }; o.self = o; console.log(o);
        console.log(new Map([["k", 1]]), new Set([1]), 10n, Symbol("s"), () => 1);
        "#)
    .await;
    assert_eq!(out.status, RunStatus::Completed);
    assert_eq!(
        out.logs,
        vec![
            "plain 1 {\"a\":[1,2]} [3] null undefined",
            "[info] i",
            "[warn] w",
            "[error] e",
            "[debug] d",
            "{\"self\":\"[Circular]\"}",
            "{\"k\":1} [1] 10n Symbol(s) [Function (anonymous)]",
        ]
    );
}

#[tokio::test]
async fn uncaught_errors_carry_message_and_line() {
    let out = run("const a = 1;\nconst b = 2;\nnull.boom;\n").await;
    assert_eq!(error_code(&out), "runtime_error");
    let err = out.error.unwrap_or_else(|| unreachable!());
    assert!(err.message.starts_with("TypeError: "), "{err:?}");
    assert_eq!(err.hint.as_deref(), Some("at line 3, column 1 of the code"));

    let out = run("throw 'plain string'").await;
    assert_eq!(out.error.map(|e| e.message), Some("plain string".into()));
    let out = run("throw new Error('custom')").await;
    assert_eq!(out.error.map(|e| e.message), Some("custom".into()));
    let out = run("throw new ToolError('mine', { code: 'my_code' })").await;
    assert_eq!(error_code(&out), "my_code");
}

#[tokio::test]
async fn syntax_errors_have_a_position() {
    let out = run("const a = 1;\nconst = 2;").await;
    assert_eq!(error_code(&out), "syntax_error");
    let err = out.error.unwrap_or_else(|| unreachable!());
    assert!(
        err.hint.as_deref().unwrap_or("").starts_with("at line 2"),
        "{err:?}"
    );
}

#[tokio::test]
async fn result_must_be_json() {
    for (code, needle) in [
        ("return 10n", "BigInt"),
        ("const a = {}; a.a = a; return a", "circular"),
        ("return () => 1", "function"),
        ("return Symbol('x')", "symbol"),
        ("return { toJSON() { throw new Error('nope') } }", "nope"),
    ] {
        let out = run(code).await;
        assert_eq!(error_code(&out), "result_not_json", "{code}");
        let msg = out.error.map(|e| e.message).unwrap_or_default();
        assert!(msg.contains(needle), "{code}: {msg}");
    }
    // JSON conversions: functions in objects dropped, Date as ISO string, NaN as null.
    assert_eq!(
        value(&run("return { f() {}, d: new Date(0), n: NaN, m: new Map() }").await),
        json!({"d": "1970-01-01T00:00:00.000Z", "n": null, "m": {}})
    );
}

#[tokio::test]
async fn web_apis_work() {
    let out = run(
        r#"
        const enc = new TextEncoder().encode("héllo €😀");
        const dec = new TextDecoder().decode(enc);
        const bad = new TextDecoder().decode(new Uint8Array([0x61, 0xff, 0x62, 0xe2, 0x82]));
        let fatal; try { new TextDecoder("utf-8", { fatal: true }).decode(new Uint8Array([0xff])) } catch (e) { fatal = e.name }
        const clone = structuredClone({ a: [1, { b: 2 }], d: new Date(5), m: new Map([[1, new Set([2])]]), u: new Uint8Array([1, 2]) });
        const cyc = { }; cyc.me = cyc; const c2 = structuredClone(cyc);
        let fnClone; try { structuredClone({ f() {} }) } catch (e) { fnClone = e.name }
        return {
          enc: Array.from(enc), dec, bad,  fatal,
          b64: btoa("hello\u00ff"), unb64: atob("aGVsbG8="), unb64ws: atob(" aGVs bG8 "),
          badAtob: (() => { try { atob("a") } catch (e) { return e.name } })(),
          badBtoa: (() => { try { btoa("€") } catch (e) { return e.name } })(),
          clone: [clone.a, clone.d.getTime(), clone.m.get(1).has(2), Array.from(clone.u)],
          cyc: c2.me === c2 && c2 !== cyc, fnClone,
          uuid: /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/.test(crypto.randomUUID()),
          rv: crypto.getRandomValues(new Uint32Array(4)).length,
          queue: await new Promise(r => queueMicrotask(() => r("micro"))),
        };
        "#,
    )
    .await;
    assert_eq!(
        value(&out),
        json!({
            "enc": [104, 195, 169, 108, 108, 111, 32, 226, 130, 172, 240, 159, 152, 128],
            "dec": "héllo €😀", "bad": "a\u{fffd}b\u{fffd}", "fatal": "TypeError",
            "b64": "aGVsbG//", "unb64": "hello", "unb64ws": "hello",
            "badAtob": "InvalidCharacterError", "badBtoa": "InvalidCharacterError",
            "clone": [[1, {"b": 2}], 5, true, [1, 2]], "cyc": true, "fnClone": "DataCloneError",
            "uuid": true, "rv": 4, "queue": "micro",
        })
    );
}

#[tokio::test]
async fn timers_run_on_the_logical_clock() {
    // 25 s of timers in a run allowed 3 s of wall time: they complete only if no timer waits
    // for real.
    let out = run_with(
        with_limits(
            r#"
        const order = [];
        const t0 = Date.now();
        setTimeout(() => order.push(["b", Date.now() - t0]), 20000);
        setTimeout(() => order.push(["a", Date.now() - t0]), 10000);
        setTimeout((x) => order.push([x, Date.now() - t0]), 10000, "a2");
        const cancelled = setTimeout(() => order.push("never"), 5);
        clearTimeout(cancelled);
        await new Promise(r => setTimeout(r, 25000));
        order.push(["end", Date.now() - t0, new Date().getTime() - t0]);
        let over; try { setTimeout(() => {}, 30001) } catch (e) { over = [e.name, e.message] }
        return { order, over };
        "#,
            |l| l.wall_ms = 3_000,
        ),
        &FakeHost::echo(),
    )
    .await;
    assert_eq!(
        value(&out),
        json!({
            "order": [["a", 10000], ["a2", 10000], ["b", 20000], ["end", 25000, 25000]],
            "over": ["RangeError", "setTimeout delay 30001 ms is over the sandbox's limit of 30000 ms"],
        })
    );
}

#[tokio::test]
async fn timer_callback_errors_fail_the_run() {
    let out = run("setTimeout(() => { throw new Error('in timer') }, 10); await new Promise(r => setTimeout(r, 20));").await;
    assert_eq!(error_code(&out), "runtime_error");
    let msg = out.error.map(|e| e.message).unwrap_or_default();
    assert!(msg.contains("in timer"), "{msg}");
}

#[tokio::test]
async fn a_promise_that_never_settles_is_reported() {
    let out = run("await new Promise(() => {});").await;
    assert_eq!(error_code(&out), "never_settled");
}

#[tokio::test]
async fn abandoned_calls_are_cancelled_with_a_notice() {
    // The host would answer after 5 s: a run that waited for it would record the call as ok
    // and the host would log its answer.
    let host = FakeHost::slow(5_000);
    let out = run_with(input("github.get_repo({}); return 'done'"), &host).await;
    assert_eq!(value(&out), json!("done"));
    // Whether the call reached the host before the run ended is a race (the run may end before
    // the call leaves the queue); what matters is that it was never waited for nor answered.
    let events = host.events();
    assert!(
        events.is_empty() || events == [Event::Arrived(0)],
        "{events:?}"
    );
    assert_eq!(out.calls.len(), 1);
    assert!(!out.calls[0].ok);
    assert!(
        out.notices.iter().any(|n| n.contains("cancelled")),
        "{:?}",
        out.notices
    );
}

#[tokio::test]
async fn output_serialises_as_the_envelope_fields() {
    let out = run("console.warn('w'); return { ok: true }").await;
    let text = serde_json::to_string(&out).unwrap_or_default();
    assert_eq!(
        text,
        r#"{"status":"completed","result":{"ok":true},"logs":["[warn] w"],"calls":[]}"#
    );
    let back: capa_sandbox::RunOutput =
        serde_json::from_str(&text).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(back, out);
}

/// Issue 16: a namespace answers its tools' remote names (the address after the source's name)
/// as well as their identifier forms, without listing them or letting them shadow anything.
#[tokio::test]
async fn remote_names_answer_like_their_members() {
    let binding = |source: &str, member: &str, remote: &str| capa_sandbox::ToolBinding {
        member: member.into(),
        address: format!("{source}.{remote}"),
    };
    let mut i = input(
        r#"
        const sum = await everything["get-sum"]({ a: 1 });
        const issue = await github["create-issue"]({ t: 2 });
        const probes = [
          everything["get-sum"] === everything.get_sum,
          "get-sum" in everything,
          Object.hasOwn(everything, "get-sum"),
          JSON.stringify(Object.keys(everything)),
          JSON.stringify(Object.getOwnPropertyNames(github)),
          // `get_repo_2`'s remote name is the member `get_repo`: the member keeps it.
          (await github.get_repo({})).address,
          (await github["get-repo"]({})).address,
          // Names generic code reads are never taken over.
          typeof everything.toString,
          await everything === everything,
        ];
        const tries = [
          () => { everything["get-sum"] = 1; },
          () => { delete everything["get-sum"]; },
          () => { Object.defineProperty(everything, "get-sum", { value: 1 }); },
        ];
        const failures = [];
        for (const t of tries) { try { t(); failures.push("no error"); } catch (e) { failures.push(e.message); } }
        let hint;
        try { everything["get-summ"] } catch (e) { hint = e.message }
        return { sum: sum.address, issue: issue.address, probes, failures, hint };
        "#,
    );
    i.namespaces = Arc::from(vec![
        capa_sandbox::Namespace {
            global: "everything".into(),
            tools: vec![
                binding("everything", "get_sum", "get-sum"),
                binding("everything", "echo", "echo"),
                binding("everything", "to_string", "toString"),
            ],
            unlisted_source: None,
        },
        capa_sandbox::Namespace {
            global: "github".into(),
            tools: vec![
                binding("github", "create_issue", "create-issue"),
                binding("github", "get_repo", "get_repo"),
                binding("github", "get_repo_2", "get_repo"),
                binding("github", "get_repo_3", "get-repo"),
            ],
            unlisted_source: None,
        },
    ]);
    let out = run_with(i, &FakeHost::echo()).await;
    let v = value(&out);
    assert_eq!(v["sum"], json!("everything.get-sum"), "{v:#}");
    assert_eq!(v["issue"], json!("github.create-issue"));
    assert_eq!(
        v["probes"],
        json!([
            true,
            true,
            false,
            "[\"get_sum\",\"echo\",\"to_string\"]",
            "[\"create_issue\",\"get_repo\",\"get_repo_2\",\"get_repo_3\"]",
            "github.get_repo",
            "github.get-repo",
            "function",
            true
        ]),
        "{v:#}"
    );
    assert_eq!(
        v["failures"],
        json!([
            "everything is read-only",
            "everything is read-only",
            "everything is read-only"
        ])
    );
    assert!(
        v["hint"]
            .as_str()
            .is_some_and(|h| h.starts_with("everything.get-summ is not a tool.")
                && h.contains("Did you mean everything.get_sum")),
        "{v:#}"
    );
}
