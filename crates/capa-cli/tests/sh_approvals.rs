//! `capa sh` for a tool the policy asks for: it waits for a person without a terminal (`--yes`
//! is refused there) and is confirmed at the prompt on a pseudo-terminal (util-linux
//! `script`); through a running hub; and a source added outside the app waits for a person.
//! Upstream: the real server-everything from the repository's `node_modules`.

mod sh_support;
mod support;

use std::process::Stdio;
use std::time::{Duration, Instant};

use sh_support::*;
use support::{everything_js, node};

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
