//! `capa sh <group> <tool>` as a person runs it in a `toolExposure: none` project: the tool's
//! text, `--output-json`, a large result cut unless `--full`, exit 1 on a tool error and on a
//! tool the policy denies. What needs a person is in `sh_approvals.rs`. Upstream: the real
//! server-everything from the repository's `node_modules`.

mod sh_support;
mod support;

use sh_support::*;

#[test]
fn runs_a_tool_and_prints_its_text() {
    let dir = none_project();
    let out = capa(
        dir.path(),
        &[
            "sh",
            "everything",
            "get-sum",
            "--arg",
            "a=2",
            "--arg",
            "b=3",
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
    assert_eq!(stdout(&out).trim_end(), SUM_2_3, "{}", show(&out));

    // A value that is not JSON is a string; --json and --arg combine.
    let out = capa(
        dir.path(),
        &["sh", "everything", "echo", "--arg", "message=hello world"],
    );
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
    assert_eq!(
        stdout(&out).trim_end(),
        "Echo: hello world",
        "{}",
        show(&out)
    );
    let out = capa(
        dir.path(),
        &[
            "sh",
            "everything",
            "get-sum",
            "--json",
            r#"{"a": 2}"#,
            "--arg",
            "b=3",
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
    assert_eq!(stdout(&out).trim_end(), SUM_2_3, "{}", show(&out));
}

#[test]
fn output_json_prints_the_whole_result() {
    let dir = none_project();
    let out = capa(
        dir.path(),
        &[
            "sh",
            "everything",
            "get-sum",
            "--arg",
            "a=2",
            "--arg",
            "b=3",
            "--output-json",
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
    let value: serde_json::Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("stdout is not JSON ({e}):\n{}", show(&out)));
    assert_eq!(texts(&value), [SUM_2_3], "{value:#}");
    let result = if value.get("content").is_some() {
        &value
    } else {
        &value["result"]
    };
    assert_ne!(result["isError"], true, "{value:#}");
}

/// `capa sh` is the channel a `none` project's agent reads, so a large result is cut to
/// `inlineResultBytes` (24 KB) with a note, like every model-facing channel; `--full` prints it
/// whole.
#[test]
fn a_large_result_is_cut_to_the_inline_budget_unless_full_is_asked() {
    let dir = none_project();
    let message = format!("message={}", "é".repeat(50_000));
    let cut = capa(dir.path(), &["sh", "everything", "echo", "--arg", &message]);
    assert_eq!(cut.status.code(), Some(0), "{}", show(&cut));
    let printed = stdout(&cut);
    assert!(
        printed.len() <= 24 * 1024,
        "{} bytes printed",
        printed.len()
    );
    assert!(printed.starts_with("Echo: éé"), "{}", &printed[..64]);
    assert!(
        printed.contains("--full") || printed.to_lowercase().contains("cut"),
        "no note of the cut:
{}",
        &printed[printed.len().saturating_sub(600)..]
    );
    let json = capa(
        dir.path(),
        &[
            "sh",
            "everything",
            "echo",
            "--arg",
            &message,
            "--output-json",
        ],
    );
    assert!(
        json.stdout.len() <= 26 * 1024,
        "{} bytes of JSON",
        json.stdout.len()
    );
    let full = capa(
        dir.path(),
        &["sh", "everything", "echo", "--arg", &message, "--full"],
    );
    assert_eq!(full.status.code(), Some(0), "{}", show(&full));
    assert_eq!(
        stdout(&full).trim_end(),
        format!("Echo: {}", "é".repeat(50_000))
    );
}

#[test]
fn a_tool_error_exits_1() {
    let dir = none_project();
    // server-everything rejects a number that is not one.
    let out = capa(
        dir.path(),
        &[
            "sh",
            "everything",
            "get-sum",
            "--arg",
            "a=two",
            "--arg",
            "b=3",
        ],
    );
    assert_eq!(out.status.code(), Some(1), "{}", show(&out));
    assert!(!stdout(&out).contains("The sum of"), "{}", show(&out));
    // The demo source's tool error.
    let out = capa(
        dir.path(),
        &["sh", "demo", "divide", "--arg", "a=1", "--arg", "b=0"],
    );
    assert_eq!(out.status.code(), Some(1), "{}", show(&out));
    assert!(
        format!("{}{}", stdout(&out), stderr(&out)).contains("cannot divide by zero"),
        "{}",
        show(&out)
    );
    // With --output-json the error is in the printed result, and the exit status is still 1.
    let out = capa(
        dir.path(),
        &[
            "sh",
            "demo",
            "divide",
            "--arg",
            "a=1",
            "--arg",
            "b=0",
            "--output-json",
        ],
    );
    assert_eq!(out.status.code(), Some(1), "{}", show(&out));
    assert!(
        stdout(&out).contains("cannot divide by zero"),
        "{}",
        show(&out)
    );
}

#[test]
fn a_denied_tool_exits_1() {
    let dir = none_project();
    let set = capa(dir.path(), &["policy", "set", "everything.get-sum", "deny"]);
    assert!(set.status.success(), "{}", show(&set));
    let out = capa(
        dir.path(),
        &[
            "sh",
            "everything",
            "get-sum",
            "--arg",
            "a=2",
            "--arg",
            "b=3",
        ],
    );
    assert_eq!(out.status.code(), Some(1), "{}", show(&out));
    assert!(!stdout(&out).contains("The sum of"), "{}", show(&out));
    assert!(
        format!("{}{}", stdout(&out), stderr(&out)).contains("denied by your policy"),
        "{}",
        show(&out)
    );
    // --yes approves asking tools; it does not override a deny.
    let out = capa(
        dir.path(),
        &[
            "sh",
            "everything",
            "get-sum",
            "--arg",
            "a=2",
            "--arg",
            "b=3",
            "--yes",
        ],
    );
    assert_eq!(out.status.code(), Some(1), "{}", show(&out));
    assert!(!stdout(&out).contains("The sum of"), "{}", show(&out));
    // Other tools of the server still run.
    let out = capa(
        dir.path(),
        &["sh", "everything", "echo", "--arg", "message=hi"],
    );
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
}
