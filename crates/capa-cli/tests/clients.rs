//! `capa clients`: the Clients page's user-wide files from the terminal, on a throwaway HOME.

use std::path::Path;
use std::process::{Command, Output};

use serde_json::Value;

fn capa(home: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_capa"))
        .args(args)
        .env("HOME", home)
        .env("CAPA_DATA_DIR", home.join("data"))
        .env("CAPA_CONFIG_DIR", home.join("config"))
        .env_remove("XDG_CONFIG_HOME")
        .env_remove("CODEX_HOME")
        .env_remove("CLAUDE_CONFIG_DIR")
        .env("PATH", "/usr/bin:/bin")
        .stdin(std::process::Stdio::null())
        .output()
        .expect("runs")
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

fn statuses(home: &Path) -> Value {
    let out = capa(home, &["clients", "list", "--json"]);
    assert!(out.status.success(), "{}", stderr(&out));
    serde_json::from_slice(&out.stdout).expect("json")
}

#[test]
fn connect_and_disconnect_the_global_hub_from_the_terminal() {
    let dir = tempfile::tempdir().expect("tempdir");
    let home = dir.path();
    let claude = home.join(".claude.json");
    let original = "{\n  \"numStartups\": 3,\n  \"mcpServers\": {\n    \"mine\": {\n      \"command\": \"npx\"\n    }\n  },\n  \"userID\": \"x\"\n}";
    std::fs::write(&claude, original).expect("write");

    let listed = statuses(home);
    let ids: Vec<&str> = listed
        .as_array()
        .expect("list")
        .iter()
        .map(|c| c["id"].as_str().unwrap_or_default())
        .collect();
    assert_eq!(
        ids,
        ["claude-code", "claude-desktop", "cursor", "vscode", "codex"]
    );
    assert_eq!(listed[0]["status"], "not_connected");
    assert_eq!(listed[2]["status"], "not_installed");

    // Not a terminal and no --yes: the diff is shown and nothing is written.
    let refused = capa(home, &["clients", "connect", "claude-code"]);
    assert!(!refused.status.success());
    assert!(
        stderr(&refused).contains("Pass --yes"),
        "{}",
        stderr(&refused)
    );
    assert!(String::from_utf8_lossy(&refused.stdout).contains("+    \"capa\": {"));
    assert_eq!(std::fs::read_to_string(&claude).expect("read"), original);

    let out = capa(home, &["clients", "connect", "claude-code", "--yes"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let value: Value =
        serde_json::from_str(&std::fs::read_to_string(&claude).expect("read")).expect("json");
    // The program by its real path (target/ may be a link to the build cache).
    let program = std::path::Path::new(env!("CARGO_BIN_EXE_capa"))
        .canonicalize()
        .expect("capa");
    assert_eq!(
        value["mcpServers"]["capa"]["command"],
        program.display().to_string()
    );
    assert_eq!(
        value["mcpServers"]["capa"]["args"],
        serde_json::json!(["mcp"])
    );
    assert_eq!(statuses(home)[0]["status"], "connected");

    let out = capa(home, &["clients", "disconnect", "claude-code", "--yes"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(std::fs::read_to_string(&claude).expect("read"), original);

    let unknown = capa(home, &["clients", "connect", "claude"]);
    assert!(!unknown.status.success());
    assert!(
        stderr(&unknown).contains("no client `claude`"),
        "{}",
        stderr(&unknown)
    );
}
