//! Issue 16, "deeply nested code aborts the hub": code that nests 1,500 levels and more, in six
//! shapes (and two more that nest without brackets), up to the 64 KB code limit. Each answer is
//! an envelope — `code_too_deep` with the line for brackets, a result or a clean error for the
//! rest — and the same hub then runs `return 1+1`. Before, 1,500 `(` overflowed the stack of the
//! tokio worker that ran the pipeline and aborted the process.

use serde_json::Value;

use crate::support::{TestHub, execute_json};

/// The spec's `codeBytes`.
const CODE_LIMIT: usize = 64 * 1024;

/// `(shape, code at depth n)`: the opening, the middle and the closing of each shape.
fn shapes() -> Vec<(
    &'static str,
    &'static str,
    &'static str,
    &'static str,
    &'static str,
)> {
    vec![
        ("brackets", "return ", "[", "1", "]"),
        ("parentheses", "return ", "(", "1", ")"),
        ("template literals", "return ", "`${", "1", "}`"),
        ("blocks", "", "{", "", "}"),
        ("arrow functions", "const f = ", "x=>", "1", ""),
        ("TypeScript generics", "let a: ", "Array<", "number", ">"),
        ("unary operators", "return ", "!", "1", ""),
        ("conditionals", "return ", "a?1:", "2", ""),
    ]
}

fn deep(prefix: &str, open: &str, middle: &str, close: &str, depth: usize) -> String {
    let tail = if prefix.starts_with("let a") {
        " = [];\nreturn 1"
    } else if prefix.starts_with("const f") {
        ";\nreturn 1"
    } else if prefix.is_empty() {
        "\nreturn 1"
    } else {
        ""
    };
    format!(
        "{prefix}{}{middle}{}{tail}",
        open.repeat(depth),
        close.repeat(depth)
    )
}

/// The deepest level of a shape whose code still fits in the limit.
fn deepest(prefix: &str, open: &str, middle: &str, close: &str) -> usize {
    (CODE_LIMIT - prefix.len() - middle.len() - 32) / (open.len() + close.len())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_nesting_up_to_the_code_limit_ends_the_hub() {
    let hub = TestHub::start("options:\n  demo: true\n  toolExposure: code\n").await;
    for (shape, prefix, open, middle, close) in shapes() {
        for depth in [1_500, 5_000, deepest(prefix, open, middle, close)] {
            let code = deep(prefix, open, middle, close, depth);
            assert!(
                code.len() <= CODE_LIMIT,
                "{shape} at {depth}: {} bytes",
                code.len()
            );
            let envelope = execute_json(&hub, Some(&code), None).await;
            let bracketed = !close.is_empty() && shape != "TypeScript generics";
            if bracketed {
                assert_eq!(
                    envelope["error"]["code"], "code_too_deep",
                    "{shape} at {depth}: {envelope:#}"
                );
                let message = envelope["error"]["message"].as_str().unwrap_or_default();
                assert!(message.contains("at line 1"), "{shape}: {message}");
            } else {
                // Answered either way: a result, or an error the model can read.
                assert!(
                    envelope["status"] == "completed" || envelope["error"]["code"].is_string(),
                    "{shape} at {depth}: {envelope:#}"
                );
            }
            let after = execute_json(&hub, Some("return 1+1"), None).await;
            assert_eq!(
                after["result"],
                Value::from(2),
                "after {shape} at {depth}: {after:#}"
            );
        }
    }
}

/// Code up to `INLINE_CODE_BYTES` is prepared on the tokio worker that runs `execute` (a 2 MiB
/// stack here, as in the hub): every shape at the deepest level that fits must be answered, and
/// the hub go on.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_deepest_short_code_is_prepared_on_a_worker_without_ending_the_hub() {
    let hub = TestHub::start("options:\n  demo: true\n  toolExposure: code\n").await;
    // Two more shapes that nest one level per byte or two, after an expression.
    let postfix = [
        ("TypeScript non-null assertions", "return a", "!", "", ""),
        ("member chains", "return a", ".a", "", ""),
    ];
    for (shape, prefix, open, middle, close) in shapes().into_iter().chain(postfix) {
        let tail = deep(prefix, open, middle, close, 0).len();
        let depth = (capa_core::INLINE_CODE_BYTES - tail) / (open.len() + close.len());
        let code = deep(prefix, open, middle, close, depth);
        assert!(
            code.len() <= capa_core::INLINE_CODE_BYTES,
            "{shape}: {} bytes",
            code.len()
        );
        let envelope = execute_json(&hub, Some(&code), None).await;
        assert!(
            envelope["status"] == "completed" || envelope["error"]["code"].is_string(),
            "{shape} at {depth}: {envelope:#}"
        );
    }
    let after = execute_json(&hub, Some("return 1+1"), None).await;
    assert_eq!(after["result"], Value::from(2), "{after:#}");
}

#[tokio::test]
async fn ordinary_nesting_still_runs() {
    let hub = TestHub::start("options:\n  demo: true\n  toolExposure: code\n").await;
    let code = format!("return {}1{}", "[".repeat(100), "]".repeat(100));
    let envelope = execute_json(&hub, Some(&code), None).await;
    assert_eq!(envelope["status"], "completed", "{envelope:#}");
}
