//! What the sandbox does not offer, each proven absent.

use capa_sandbox::RunStatus;
use serde_json::json;

use crate::support::*;

#[tokio::test]
async fn absent_globals_are_undefined() {
    for name in [
        "fetch",
        "require",
        "process",
        "Buffer",
        "eval",
        "Function",
        "URL",
        "URLSearchParams",
        "std",
        "os",
        "WebAssembly",
        "performance",
        "WeakRef",
        "FinalizationRegistry",
        "Atomics",
        "SharedArrayBuffer",
        "XMLHttpRequest",
        "WebSocket",
        "Deno",
        "Bun",
        "importScripts",
        "module",
        "exports",
        "global",
        "navigator",
        "setInterval",
        "gc",
        "print",
        "scriptArgs",
    ] {
        let out = run(&format!(
            "return [typeof {name}, '{name}' in globalThis, Object.getOwnPropertyNames(globalThis).includes('{name}')]"
        ))
        .await;
        assert_eq!(value(&out), json!(["undefined", false, false]), "{name}");
    }
}

#[tokio::test]
async fn function_constructors_are_unreachable() {
    for expr in [
        "(function(){}).constructor",
        "(async function(){}).constructor",
        "(function*(){}).constructor",
        "(async function*(){}).constructor",
        "(() => 1).constructor",
        "Object.getPrototypeOf(function(){}).constructor",
        "console.log.constructor",
        "github.get_repo.constructor",
        "Reflect.getPrototypeOf(async () => {}).constructor",
        "Object.getOwnPropertyDescriptor(Object.getPrototypeOf(function*(){}), 'constructor').value",
    ] {
        for call in [
            format!("return ({expr})('return 1')"),
            format!("return new ({expr})('return 1')"),
            format!("return Reflect.construct({expr}, ['return 1'])"),
            format!("return ({expr}).call(null, 'return 1')"),
        ] {
            let out = run(&call).await;
            assert_eq!(error_code(&out), "runtime_error", "{call}");
            let msg = out.error.map(|e| e.message).unwrap_or_default();
            assert!(
                msg.contains("not available in this sandbox"),
                "{call}: {msg}"
            );
        }
        // And it cannot be put back.
        let out = run(&format!(
            "try {{ Object.defineProperty(Object.getPrototypeOf({expr}), 'constructor', {{ value: 1 }}) }} catch (e) {{}}
             return typeof ({expr})"
        ))
        .await;
        assert_eq!(value(&out), json!("function"), "{expr}");
    }
}

#[tokio::test]
async fn eval_is_unreachable_in_every_form() {
    for code in [
        "return eval('1')",
        "return globalThis.eval('1')",
        "return (0, eval)('1')",
        "return globalThis['ev' + 'al']('1')",
        "return new Function('return 1')()",
        "return setTimeout('globalThis.x = 1', 0)",
    ] {
        let out = run(code).await;
        assert_eq!(out.status, RunStatus::Failed, "{code}");
    }
}

#[tokio::test]
async fn modules_cannot_be_loaded() {
    // Static import is a syntax error in a function body.
    let out = run("import fs from 'fs'; return 1").await;
    assert_eq!(error_code(&out), "syntax_error");
    // Dynamic import() has no loader behind it.
    for spec in [
        "fs",
        "./x.js",
        "node:child_process",
        "data:text/javascript,export default 1",
    ] {
        let out = run(&format!(
            "try {{ await import('{spec}') }} catch (e) {{ return 'refused: ' + e.message }}"
        ))
        .await;
        let v = value(&out);
        assert!(
            v.as_str().unwrap_or("").starts_with("refused"),
            "{spec}: {v}"
        );
    }
    // The prelude is read as a module, which stays in the context's list under its name: it
    // resolves, to a namespace with nothing in it (it exports nothing), and leaves nothing on
    // the global object.
    let out = run(
        "const m = await import('prelude.js'); \
         return [Object.getOwnPropertyNames(m).length, typeof m.default, typeof globalThis.__capaPrelude]",
    )
    .await;
    assert_eq!(value(&out), json!([0, "undefined", "undefined"]));
    let out = run("return typeof require === 'undefined' && typeof module === 'undefined'").await;
    assert_eq!(value(&out), json!(true));
}

#[tokio::test]
async fn globals_list_is_what_we_expect() {
    // A guard against QuickJS upgrades adding a global: the full list, sorted.
    let out = run("return Object.getOwnPropertyNames(globalThis).sort()").await;
    let names: Vec<String> = serde_json::from_value(value(&out)).unwrap_or_default();
    let expected = [
        "AggregateError",
        "Array",
        "ArrayBuffer",
        "AsyncDisposableStack",
        "BigInt",
        "BigInt64Array",
        "BigUint64Array",
        "Boolean",
        "DOMException",
        "DataView",
        "Date",
        "DisposableStack",
        "Error",
        "EvalError",
        "Float16Array",
        "Float32Array",
        "Float64Array",
        "Infinity",
        "Int16Array",
        "Int32Array",
        "Int8Array",
        "InternalError",
        "Iterator",
        "JSON",
        "Map",
        "Math",
        "NaN",
        "Number",
        "Object",
        "Promise",
        "Proxy",
        "RangeError",
        "ReferenceError",
        "Reflect",
        "RegExp",
        "Set",
        "String",
        "SuppressedError",
        "Symbol",
        "SyntaxError",
        "TextDecoder",
        "TextEncoder",
        "ToolError",
        "TypeError",
        "URIError",
        "Uint16Array",
        "Uint32Array",
        "Uint8Array",
        "Uint8ClampedArray",
        "WeakMap",
        "WeakSet",
        "atob",
        "btoa",
        "clearTimeout",
        "console",
        "crypto",
        "decodeURI",
        "decodeURIComponent",
        "encodeURI",
        "encodeURIComponent",
        "escape",
        "github",
        "globalThis",
        "hub",
        "isFinite",
        "isNaN",
        "parseFloat",
        "parseInt",
        "queueMicrotask",
        "setTimeout",
        "slack",
        "structuredClone",
        "undefined",
        "unescape",
    ];
    assert_eq!(names, expected);
}
