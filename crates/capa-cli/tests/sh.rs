//! `capa sh <group> <tool>` as a person runs it in a `toolExposure: none` project: the tool's
//! text, `--output-json`, exit 1 on a tool error and on a tool the policy denies; a tool the
//! policy asks for waits for a person without a terminal (`--yes` is refused there) and is
//! confirmed at the prompt on a pseudo-terminal (util-linux `script`). Upstream: the real
//! server-everything from the repository's node_modules.

mod support;

use std::path::Path;
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use support::{everything_js, node};

/// A temp project: capabilities.yaml with `toolExposure: none`, the demo source and
/// server-everything, which the person trusted at a terminal (`capa sources confirm`; a
/// project's file runs nothing before); `data/` and `config/` are its CAPA_DATA_DIR and
/// CAPA_CONFIG_DIR.
fn none_project() -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("tempdir");
    let file = serde_json::json!({
        "options": {"toolExposure": "none", "demo": true},
        "servers": [{
            "id": "everything",
            "type": "mcp",
            "def": {"command": node(), "args": [everything_js(), "stdio"]},
        }],
    });
    std::fs::write(
        dir.path().join("capabilities.yaml"),
        serde_json::to_string_pretty(&file).expect("json"),
    )
    .expect("write");
    let trusted = support::at_terminal(dir.path(), &["sources", "confirm", "everything"], "");
    assert!(
        trusted.status.success(),
        "{}",
        String::from_utf8_lossy(&trusted.stdout)
    );
    dir
}

fn command(dir: &Path, args: &[&str]) -> Command {
    let mut cmd = support::in_dir(env!("CARGO_BIN_EXE_capa"), dir);
    cmd.args(args).stdin(Stdio::null());
    cmd
}

fn capa(dir: &Path, args: &[&str]) -> Output {
    command(dir, args).output().expect("capa runs")
}

fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

fn show(output: &Output) -> String {
    format!(
        "exit {:?}\n--- stdout\n{}--- stderr\n{}",
        output.status.code(),
        stdout(output),
        stderr(output)
    )
}

const SUM_2_3: &str = "The sum of 2 and 3 is 5.";

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

/// The text blocks of a printed result: the result itself, or under `result` in an envelope.
fn texts(value: &serde_json::Value) -> Vec<String> {
    let result = if value.get("content").is_some() {
        value
    } else {
        &value["result"]
    };
    result["content"]
        .as_array()
        .map(|blocks| {
            blocks
                .iter()
                .filter_map(|b| b["text"].as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default()
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

fn notes(dir: &Path) -> Vec<String> {
    let out = capa(dir, &["sh", "demo", "list_notes"]);
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
    serde_json::from_str(stdout(&out).trim()).unwrap_or_else(|e| panic!("{e}: {}", show(&out)))
}

/// The pending approvals in the project's database, as `capabilities hub pending --json` lists
/// them (no hub runs: the command reads the database).
fn pending_ids(dir: &Path) -> Vec<String> {
    let out = capa(dir, &["hub", "pending", "--json"]);
    assert!(out.status.success(), "{}", show(&out));
    let listed: serde_json::Value = serde_json::from_str(&stdout(&out)).expect("json");
    listed["pending"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|p| p["id"].as_str().map(str::to_owned))
        .collect()
}

/// Waits until one approval is pending, and returns its id.
fn one_pending(dir: &Path) -> String {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let ids = pending_ids(dir);
        if let [id] = ids.as_slice() {
            return id.clone();
        }
        assert!(Instant::now() < deadline, "no pending approval: {ids:?}");
        std::thread::sleep(Duration::from_millis(200));
    }
}

#[test]
fn a_tool_that_asks_waits_for_a_person_without_a_terminal() {
    let dir = none_project();
    let out = capa(
        dir.path(),
        &[
            "sh",
            "demo",
            "write_note",
            "--arg",
            "title=doomed",
            "--arg",
            "text=bye",
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
    assert_eq!(notes(dir.path()), ["doomed"]);

    // `--yes` is a person's word: refused at once without a terminal, and nothing runs.
    let out = capa(
        dir.path(),
        &[
            "sh",
            "demo",
            "delete_note",
            "--arg",
            "title=doomed",
            "--yes",
        ],
    );
    assert_eq!(out.status.code(), Some(1), "{}", show(&out));
    assert!(
        stderr(&out).contains("needs a person at an interactive terminal"),
        "{}",
        show(&out)
    );
    assert_eq!(notes(dir.path()), ["doomed"]);

    // demo.delete_note is destructive, so the default policy asks; stdin is /dev/null: the
    // command says where to decide and waits. A denial at a terminal ends it, nothing ran.
    let waiting = command(
        dir.path(),
        &["sh", "demo", "delete_note", "--arg", "title=doomed"],
    )
    .stdout(Stdio::piped())
    .stderr(Stdio::piped())
    .spawn()
    .expect("capa sh");
    let id = one_pending(dir.path());
    let refused = capa(dir.path(), &["hub", "deny", &id]);
    assert_eq!(refused.status.code(), Some(1), "{}", show(&refused));
    assert!(
        stderr(&refused).contains("needs a person at an interactive terminal"),
        "deciding without a terminal is refused: {}",
        show(&refused)
    );
    let denied = support::at_terminal(dir.path(), &["hub", "deny", &id], "");
    assert!(denied.status.success(), "{}", show(&denied));
    let out = waiting.wait_with_output().expect("capa sh ends");
    assert_eq!(out.status.code(), Some(1), "{}", show(&out));
    assert!(
        stderr(&out).contains("capabilities hub approve"),
        "{}",
        show(&out)
    );
    assert!(stderr(&out).contains("denied"), "{}", show(&out));
    assert_eq!(
        notes(dir.path()),
        ["doomed"],
        "denied, but the note is gone"
    );

    // Approved at a terminal, the waiting call runs once.
    let waiting = command(
        dir.path(),
        &["sh", "demo", "delete_note", "--arg", "title=doomed"],
    )
    .stdout(Stdio::piped())
    .stderr(Stdio::piped())
    .spawn()
    .expect("capa sh");
    let id = one_pending(dir.path());
    let approved = support::at_terminal(dir.path(), &["hub", "approve", &id], "");
    assert!(approved.status.success(), "{}", show(&approved));
    let out = waiting.wait_with_output().expect("capa sh ends");
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
    assert_eq!(
        stdout(&out).trim_end(),
        r#"deleted note "doomed""#,
        "{}",
        show(&out)
    );
    assert!(notes(dir.path()).is_empty());
}

#[test]
fn at_a_terminal_a_tool_that_asks_is_confirmed_at_the_prompt() {
    let dir = none_project();
    for title in ["kept", "gone", "yes"] {
        let out = capa(
            dir.path(),
            &[
                "sh",
                "demo",
                "write_note",
                "--arg",
                &format!("title={title}"),
                "--arg",
                "text=x",
            ],
        );
        assert_eq!(out.status.code(), Some(0), "{}", show(&out));
    }
    let no = support::at_terminal(
        dir.path(),
        &["sh", "demo", "delete_note", "--arg", "title=kept"],
        "n\n",
    );
    let screen = stdout(&no);
    assert!(screen.contains("Run it? [y/N]"), "{screen}");
    assert!(screen.contains("Not run."), "{screen}");
    let yes = support::at_terminal(
        dir.path(),
        &["sh", "demo", "delete_note", "--arg", "title=gone"],
        "y\n",
    );
    assert!(yes.status.success(), "{}", show(&yes));
    assert!(
        stdout(&yes).contains(r#"deleted note "gone""#),
        "{}",
        show(&yes)
    );
    let skip = support::at_terminal(
        dir.path(),
        &["sh", "demo", "delete_note", "--arg", "title=yes", "--yes"],
        "",
    );
    assert!(skip.status.success(), "{}", show(&skip));
    assert!(!stdout(&skip).contains("Run it?"), "{}", show(&skip));
    assert_eq!(notes(dir.path()), ["kept"]);
    // Each decision is in the history of pending inputs, nothing is left waiting.
    assert!(pending_ids(dir.path()).is_empty());
}

/// `capa hub serve` for the project; SIGTERM (then SIGKILL) when dropped.
struct Hub(Child);

impl Drop for Hub {
    fn drop(&mut self) {
        let _ = Command::new("kill")
            .args(["-TERM", &self.0.id().to_string()])
            .status();
        let deadline = Instant::now() + Duration::from_secs(10);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.0.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[test]
fn goes_through_the_running_hub_of_a_none_project() {
    let dir = none_project();
    let log = std::fs::File::create(dir.path().join("hub.log")).expect("log");
    let mut hub = Hub(
        command(dir.path(), &["hub", "serve", "--http", "127.0.0.1:0"])
            .env("CAPA_SH_TEST_WHO", "hub")
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .expect("hub serve"),
    );
    let discovery = dir.path().join("data/hub.json");
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        if let Ok(Some(status)) = hub.0.try_wait() {
            panic!(
                "hub serve exited ({status}):\n{}",
                std::fs::read_to_string(dir.path().join("hub.log")).unwrap_or_default()
            );
        }
        let text = std::fs::read_to_string(&discovery).unwrap_or_default();
        if serde_json::from_str::<serde_json::Value>(&text)
            .is_ok_and(|j| j["pid"] == hub.0.id() && j["url"].is_string())
        {
            break;
        }
        assert!(Instant::now() < deadline, "no hub.json within 30 s");
        std::thread::sleep(Duration::from_millis(100));
    }
    // server-everything's get-env shows the environment of the server process: the hub's
    // child when `capa sh` goes through the running hub, its own child when it does not.
    // The hub may still be connecting its sources: retry briefly.
    let deadline = Instant::now() + Duration::from_secs(20);
    let out = loop {
        let out = command(dir.path(), &["sh", "everything", "get-env"])
            .env("CAPA_SH_TEST_WHO", "cli")
            .output()
            .expect("capa sh");
        if out.status.success() || Instant::now() > deadline {
            break out;
        }
        std::thread::sleep(Duration::from_millis(250));
    };
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
    let env: serde_json::Value =
        serde_json::from_str(stdout(&out).trim()).unwrap_or_else(|e| panic!("{e}: {}", show(&out)));
    assert_eq!(env["CAPA_SH_TEST_WHO"], "hub", "not run by the running hub");
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
    drop(hub);
}

/// The state of each source as `capa sources list --json` reports it.
fn source_states(dir: &Path) -> Vec<(String, String)> {
    let out = capa(dir, &["sources", "list", "--json"]);
    assert!(out.status.success(), "{}", show(&out));
    let listed: serde_json::Value = serde_json::from_str(&stdout(&out)).expect("json");
    listed
        .as_array()
        .into_iter()
        .flatten()
        .map(|s| {
            (
                s["id"].as_str().unwrap_or_default().to_owned(),
                s["state"].as_str().unwrap_or_default().to_owned(),
            )
        })
        .collect()
}

#[test]
fn a_source_added_to_the_file_outside_the_app_waits_for_a_person() {
    let dir = none_project();
    // The first start counts the sources it finds as confirmed.
    let first = source_states(dir.path());
    assert!(
        first.contains(&("everything".to_owned(), "ready".to_owned())),
        "{first:?}"
    );
    // A tool (or a script) adds a source, a command to run, to the project's file.
    let file = serde_json::json!({
        "options": {"toolExposure": "none", "demo": true},
        "servers": [
            {"id": "everything", "type": "mcp", "def": {"command": node(), "args": [everything_js(), "stdio"]}},
            {"id": "more", "type": "mcp", "def": {"command": node(), "args": [everything_js(), "stdio"]}},
        ],
    });
    std::fs::write(
        dir.path().join("capabilities.yaml"),
        serde_json::to_string_pretty(&file).expect("json"),
    )
    .expect("write");
    let held = source_states(dir.path());
    assert!(
        held.contains(&("more".to_owned(), "needs_confirmation".to_owned())),
        "{held:?}"
    );
    assert!(
        held.contains(&("everything".to_owned(), "ready".to_owned())),
        "{held:?}"
    );
    let refused = capa(dir.path(), &["sources", "confirm", "more"]);
    assert_eq!(refused.status.code(), Some(1), "{}", show(&refused));
    assert!(
        stderr(&refused).contains("interactive terminal"),
        "{}",
        show(&refused)
    );
    let confirmed = support::at_terminal(dir.path(), &["sources", "confirm", "more"], "");
    assert!(confirmed.status.success(), "{}", show(&confirmed));
    let after = source_states(dir.path());
    assert!(
        after.contains(&("more".to_owned(), "ready".to_owned())),
        "{after:?}"
    );
}
