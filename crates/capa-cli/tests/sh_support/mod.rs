//! Helpers of the `capa sh` tests (`sh.rs`, `sh_approvals.rs`): a `toolExposure: none` project
//! with server-everything, and capa run in it.
// Each test binary uses some of these helpers.
#![allow(dead_code)]

use std::path::Path;
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use crate::support::{self, everything_js, node};

/// A temp project: capabilities.yaml with `toolExposure: none`, the demo source and
/// server-everything, which the person trusted at a terminal (`capa sources confirm`; a
/// project's file runs nothing before); `data/` and `config/` are its `CAPA_DATA_DIR` and
/// `CAPA_CONFIG_DIR`.
pub(crate) fn none_project() -> tempfile::TempDir {
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
    // The person trusts the whole file: its source and its options (`toolExposure: none`).
    let trusted = support::at_terminal(dir.path(), &["config", "trust"], "y\n");
    assert!(
        trusted.status.success(),
        "{}",
        String::from_utf8_lossy(&trusted.stdout)
    );
    dir
}

pub(crate) fn command(dir: &Path, args: &[&str]) -> Command {
    let mut cmd = support::in_dir(env!("CARGO_BIN_EXE_capa"), dir);
    cmd.args(args).stdin(Stdio::null());
    cmd
}

pub(crate) fn capa(dir: &Path, args: &[&str]) -> Output {
    command(dir, args).output().expect("capa runs")
}

pub(crate) fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

pub(crate) fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

pub(crate) fn show(output: &Output) -> String {
    format!(
        "exit {:?}\n--- stdout\n{}--- stderr\n{}",
        output.status.code(),
        stdout(output),
        stderr(output)
    )
}

pub(crate) const SUM_2_3: &str = "The sum of 2 and 3 is 5.";

/// The text blocks of a printed result: the result itself, or under `result` in an envelope.
pub(crate) fn texts(value: &serde_json::Value) -> Vec<String> {
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

pub(crate) fn notes(dir: &Path) -> Vec<String> {
    let out = capa(dir, &["sh", "demo", "list_notes"]);
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
    serde_json::from_str(stdout(&out).trim()).unwrap_or_else(|e| panic!("{e}: {}", show(&out)))
}

/// The pending approvals in the project's database, as `capabilities hub pending --json` lists
/// them (no hub runs: the command reads the database).
pub(crate) fn pending_ids(dir: &Path) -> Vec<String> {
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
pub(crate) fn one_pending(dir: &Path) -> String {
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

/// `capa hub serve` for the project; SIGTERM (then SIGKILL) when dropped.
pub(crate) struct Hub(pub Child);

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

/// The state of each source as `capa sources list --json` reports it.
pub(crate) fn source_states(dir: &Path) -> Vec<(String, String)> {
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
