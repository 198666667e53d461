//! The `capa` binary as a person uses it: messages, exit codes, both names.

mod support;

use std::path::Path;
use std::process::{Command, Output};

fn capa(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_capa"))
        .args(args)
        .current_dir(dir)
        .env("CAPA_DATA_DIR", dir.join("data"))
        .env("CAPA_CONFIG_DIR", dir.join("config"))
        .env_remove("RUST_LOG")
        .output()
        .expect("capa runs")
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

#[test]
fn both_names_are_the_same_program() {
    let a = Command::new(env!("CARGO_BIN_EXE_capa"))
        .arg("--version")
        .output()
        .expect("capa");
    let b = Command::new(env!("CARGO_BIN_EXE_capabilities"))
        .arg("--version")
        .output()
        .expect("capabilities");
    assert!(a.status.success() && b.status.success());
    let version = |o: &Output| {
        String::from_utf8_lossy(&o.stdout)
            .split_whitespace()
            .last()
            .map(str::to_owned)
    };
    assert_eq!(version(&a), version(&b));
}

#[test]
fn an_invalid_file_names_the_file_line_and_fix() {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(dir.path().join("capabilities.yaml"), "servers:\n  - id: gh\n    type: mcp\n    expose: exactly\n    def: { url: 'https://example.com/mcp' }\n").expect("write");
    let out = capa(dir.path(), &["config", "check"]);
    assert!(!out.status.success());
    let err = stderr(&out);
    assert!(
        err.contains("capabilities.yaml:4:13: `expose: exactly` needs a `tools` list"),
        "{err}"
    );
    assert!(err.contains("fix: add `tools:"), "{err}");
}

#[test]
fn the_project_file_is_found_from_a_subdirectory_and_decides_the_mode() {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(
        dir.path().join("capabilities.yaml"),
        "options:\n  toolExposure: search\n",
    )
    .expect("write");
    let sub = dir.path().join("a/b");
    std::fs::create_dir_all(&sub).expect("mkdir");
    let show = || {
        let out = Command::new(env!("CARGO_BIN_EXE_capa"))
            .args(["config", "show", "--json"])
            .current_dir(&sub)
            .env("CAPA_DATA_DIR", dir.path().join("data"))
            .env("CAPA_CONFIG_DIR", dir.path().join("config"))
            .output()
            .expect("runs");
        assert!(out.status.success(), "{}", stderr(&out));
        serde_json::from_slice::<serde_json::Value>(&out.stdout).expect("json")
    };
    // Found, but held until the person trusts it (a cloned repository's file may set it).
    let shown = show();
    assert_eq!(shown["toolExposure"], "code", "{shown}");
    assert_eq!(shown["projectSettings"]["trusted"], false, "{shown}");
    assert_eq!(
        shown["projectSettings"]["items"],
        serde_json::json!(["tool exposure search"])
    );
    let trusted = support::at_terminal(dir.path(), &["config", "trust"], "y\n");
    assert!(trusted.status.success(), "{}", stdout(&trusted));
    let shown = show();
    assert_eq!(shown["toolExposure"], "search");
    assert!(
        shown["decidedBy"]
            .as_str()
            .unwrap_or("")
            .contains("options.toolExposure in"),
        "{shown}"
    );
}

#[test]
fn the_hub_refuses_to_listen_beyond_loopback() {
    let dir = tempfile::tempdir().expect("tempdir");
    // 127.0.0.2 is loopback too, but the Host checks know 127.0.0.1, localhost and [::1] only:
    // refused at start rather than serving 403 to every request.
    for address in ["0.0.0.0:0", "127.0.0.2:0"] {
        let out = capa(dir.path(), &["hub", "serve", "--http", address]);
        assert!(!out.status.success(), "{address}");
        assert!(
            stderr(&out).contains("only binds loopback"),
            "{address}: {}",
            stderr(&out)
        );
    }
}

#[test]
fn secrets_are_never_taken_from_the_command_line() {
    let dir = tempfile::tempdir().expect("tempdir");
    // As an argument, or under any flag a person might try: refused before anything is stored.
    for secret in [
        &["hunter2"][..],
        &["--value", "hunter2"],
        &["--secret=hunter2"],
        &["--token", "hunter2"],
    ] {
        let mut args = vec!["connections", "set", "gh", "personal"];
        args.extend_from_slice(secret);
        let out = capa(dir.path(), &args);
        assert!(!out.status.success(), "{secret:?}");
        assert!(
            stderr(&out).contains("unexpected argument"),
            "{secret:?}: {}",
            stderr(&out)
        );
    }
    let out = capa(dir.path(), &["connections", "list", "--json"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let listed: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(listed, serde_json::json!([]), "nothing was saved");
}

#[test]
fn calls_from_the_command_line_reach_the_demo_source() {
    let dir = tempfile::tempdir().expect("tempdir");
    let out = capa(
        dir.path(),
        &["call", "demo.multiply", "--json", r#"{"a": 6, "b": 7}"#],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "42");
    let out = capa(
        dir.path(),
        &["call", "demo.divide", "--json", r#"{"a": 1, "b": 0}"#],
    );
    assert!(!out.status.success());
    assert!(stderr(&out).contains("cannot divide by zero"));
    let out = capa(dir.path(), &["call", "demo.nope"]);
    assert!(!out.status.success());
    assert!(
        stderr(&out).contains("unknown tool `demo.nope`"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn search_and_describe_from_the_shell() {
    let dir = tempfile::tempdir().expect("tempdir");
    let found = capa(dir.path(), &["search", "add", "two", "numbers"]);
    assert!(found.status.success(), "{}", stderr(&found));
    let text = String::from_utf8_lossy(&found.stdout);
    assert!(
        text.starts_with("demo\n  demo.add(input: { a: number; b: number }): Promise<unknown>\n"),
        "{text}"
    );
    let described = capa(dir.path(), &["describe", "demo.add", "--json"]);
    let json: serde_json::Value = serde_json::from_slice(&described.stdout).expect("json");
    assert_eq!(json["ok"], true);
    assert!(
        json["text"]
            .as_str()
            .is_some_and(|t| t.contains("declare const demo: {")),
        "{json}"
    );
    let refused = capa(dir.path(), &["search", "add", "--limit", "30"]);
    assert!(!refused.status.success());
    assert!(
        stderr(&refused).contains("pass 1 to 25"),
        "{}",
        stderr(&refused)
    );
}

fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

#[test]
fn policy_set_list_and_reset_edit_the_policy_file() {
    let dir = tempfile::tempdir().expect("tempdir");
    let file = dir.path().join("config/policy.yaml");
    let set = capa(dir.path(), &["policy", "set", "github.delete_*", "deny"]);
    assert!(set.status.success(), "{}", stderr(&set));
    assert_eq!(
        stdout(&set),
        format!("github.delete_* → deny (written to {})\n", file.display())
    );
    let set = capa(
        dir.path(),
        &[
            "policy",
            "set",
            "slack.post_message",
            "ask",
            "--connection",
            "work",
        ],
    );
    assert!(set.status.success(), "{}", stderr(&set));
    let listed = capa(dir.path(), &["policy", "list", "--json"]);
    assert!(listed.status.success(), "{}", stderr(&listed));
    let listed: serde_json::Value = serde_json::from_slice(&listed.stdout).expect("json");
    assert_eq!(
        listed,
        serde_json::json!({
            "file": file,
            "rules": [
                {"pattern": "github.delete_*", "decision": "deny"},
                {"pattern": "slack.post_message", "connection": "work", "decision": "ask"},
            ],
        })
    );
    let reset = capa(dir.path(), &["policy", "reset", "github.delete_*"]);
    assert!(reset.status.success(), "{}", stderr(&reset));
    assert_eq!(
        stdout(&reset),
        format!(
            "Removed the rule for `github.delete_*` from {}.\n",
            file.display()
        )
    );
    let text = std::fs::read_to_string(&file).expect("file");
    assert!(!text.contains("github"), "{text}");
    assert!(text.contains("connection: work"), "{text}");
    let all = capa(dir.path(), &["policy", "reset", "--all"]);
    assert_eq!(
        stdout(&all),
        format!("Removed 1 rule from {}.\n", file.display())
    );
    let bad = capa(dir.path(), &["policy", "set", "a b", "deny"]);
    assert!(!bad.status.success());
    assert!(
        stderr(&bad).contains("`a b` is not a valid policy pattern"),
        "{}",
        stderr(&bad)
    );
}

#[test]
fn policy_rules_change_what_search_shows() {
    let dir = tempfile::tempdir().expect("tempdir");
    let before = capa(dir.path(), &["search", "delete a note"]);
    assert!(before.status.success(), "{}", stderr(&before));
    assert!(
        stdout(&before).contains("   [asks]"),
        "destructive by annotation: {}",
        stdout(&before)
    );
    let set = capa(dir.path(), &["policy", "set", "demo.delete_note", "deny"]);
    assert!(set.status.success(), "{}", stderr(&set));
    let after = capa(dir.path(), &["search", "delete a note"]);
    let text = stdout(&after);
    assert!(!text.contains("demo.delete_note("), "{text}");
    assert!(
        text.contains("1 matching tool is hidden by your policy."),
        "{text}"
    );
    let listed = capa(dir.path(), &["tools", "list"]);
    let text = stdout(&listed);
    assert!(!text.contains("demo.delete_note"), "{text}");
    assert!(text.contains("1 more hidden by your policy"), "{text}");
    let json = capa(dir.path(), &["tools", "list", "--json"]);
    let tools: serde_json::Value = serde_json::from_str(&stdout(&json)).expect("json");
    let policy_of = |address: &str| {
        tools
            .as_array()
            .and_then(|t| t.iter().find(|t| t["address"] == address))
            .map(|t| t["policy"].clone())
    };
    assert_eq!(policy_of("demo.delete_note"), Some("deny".into()));
    assert_eq!(policy_of("demo.add"), Some("allow".into()));
}

#[test]
fn a_broken_policy_file_is_reported_with_its_line() {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::create_dir_all(dir.path().join("config")).expect("mkdir");
    std::fs::write(
        dir.path().join("config/policy.yaml"),
        "rules:\n  - match: demo.add\n    decision: nope\n",
    )
    .expect("write");
    for args in [&["policy", "list"][..], &["tools", "list"][..]] {
        let out = capa(dir.path(), args);
        assert!(!out.status.success(), "{args:?}");
        let err = stderr(&out);
        assert!(
            err.contains(
                "policy.yaml:3:15: unknown decision `nope`\n  fix: use allow, ask or deny"
            ),
            "{args:?}: {err}"
        );
    }
    let set = capa(dir.path(), &["policy", "set", "demo.add", "deny"]);
    assert!(!set.status.success());
    assert!(
        stderr(&set).contains("capa policy reset --all"),
        "{}",
        stderr(&set)
    );
}

#[test]
fn init_writes_a_starter_file_that_passes_check_and_keeps_an_existing_one() {
    let dir = tempfile::tempdir().expect("tempdir");
    let out = capa(dir.path(), &["init"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let file = dir.path().join("capabilities.yaml");
    let said = stdout(&out);
    assert!(
        said.contains(&format!("Wrote {}", file.display())),
        "{said}"
    );
    assert!(said.contains("capa install"), "{said}");
    let written = std::fs::read_to_string(&file).expect("written");
    assert!(written.contains("\n  toolExposure: search\n"), "{written}");

    let check = capa(dir.path(), &["config", "check"]);
    assert!(check.status.success(), "{}", stderr(&check));
    assert!(stdout(&check).contains("capabilities.yaml: ok"));
    // The mode it picks applies once the person trusts the file (`capa config trust`).
    let show = capa(dir.path(), &["config", "show", "--json"]);
    let shown: serde_json::Value = serde_json::from_slice(&show.stdout).expect("json");
    assert_eq!(
        shown["projectSettings"]["items"],
        serde_json::json!(["tool exposure search"])
    );
    assert!(said.contains("capa config trust"), "{said}");

    std::fs::write(&file, "servers: []\n").expect("edit");
    let again = capa(dir.path(), &["init"]);
    assert!(!again.status.success());
    assert!(
        stderr(&again).contains("capa init --force"),
        "{}",
        stderr(&again)
    );
    assert_eq!(
        std::fs::read_to_string(&file).expect("kept"),
        "servers: []\n"
    );
    let forced = capa(dir.path(), &["init", "--force"]);
    assert!(forced.status.success(), "{}", stderr(&forced));
    assert_eq!(std::fs::read_to_string(&file).expect("replaced"), written);
}

#[test]
fn init_writes_into_another_directory_and_respects_a_yml_file() {
    let dir = tempfile::tempdir().expect("tempdir");
    let project = dir.path().join("new-project");
    let out = capa(
        dir.path(),
        &["init", "--dir", project.to_str().expect("utf-8")],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(project.join("capabilities.yaml").is_file());
    let check = capa(
        dir.path(),
        &[
            "config",
            "check",
            project.join("capabilities.yaml").to_str().expect("utf-8"),
        ],
    );
    assert!(check.status.success(), "{}", stderr(&check));

    let other = dir.path().join("yml");
    std::fs::create_dir_all(&other).expect("mkdir");
    std::fs::write(other.join("capabilities.yml"), "servers: []\n").expect("write");
    let refused = capa(&other, &["init"]);
    assert!(!refused.status.success());
    assert!(
        stderr(&refused).contains("capabilities.yml already exists"),
        "{}",
        stderr(&refused)
    );
    assert!(!other.join("capabilities.yaml").exists());
}

#[test]
fn ui_needs_a_running_hub_and_prints_a_one_time_link_only_at_a_terminal() {
    let dir = tempfile::tempdir().expect("tempdir");
    let out = capa(dir.path(), &["ui", "--print"]);
    assert!(!out.status.success());
    let err = stderr(&out);
    assert!(
        err.contains("start it with `capa hub serve` or the desktop app"),
        "{err}"
    );
    let hub = support::ServedHub::start(Path::new(env!("CARGO_BIN_EXE_capa")), dir.path(), &[]);
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    let out = loop {
        let out = capa(dir.path(), &["ui", "--print"]);
        if stderr(&out).contains("interactive terminal") || std::time::Instant::now() > deadline {
            break out;
        }
        std::thread::sleep(std::time::Duration::from_millis(200));
    };
    // Without a terminal (an agent's shell) no link is printed: a UI session can approve calls.
    assert!(!out.status.success(), "{}", stderr(&out));
    assert!(!String::from_utf8_lossy(&out.stdout).contains("/app/login/"));
    let out = support::at_terminal(dir.path(), &["ui", "--print"], "");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    let screen = String::from_utf8_lossy(&out.stdout).into_owned();
    let url = screen
        .lines()
        .find(|l| l.contains("/app/login/"))
        .unwrap_or_else(|| panic!("no link: {screen}"))
        .trim()
        .to_owned();
    assert!(url.starts_with("http://127.0.0.1:"), "{url}");
    let first = support::http("GET", &url, &[]).0;
    assert_eq!(first, 303, "the handed-over link logs in once");
    assert_eq!(support::http("GET", &url, &[]).0, 410, "and only once");
    drop(hub);
}
