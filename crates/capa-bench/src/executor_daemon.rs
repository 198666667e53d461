//! Executor's daemon as a peer through MCP (issue 42): npm `executor` 1.5.9, which
//! `../shared/peers/executor/setup.sh` installs under `$EXECUTOR_CLI_DIR` (default
//! `/tmp/capa-peers/executor-cli`; `scripts/setup --test` runs it when that folder is there).
//! `executor daemon run` serves MCP over Streamable HTTP at `localhost:4788`; the same TS SDK 1.x
//! driver as for our hub (`tests/bench/ts_client.mjs`) runs the same session against it: `ping`
//! then `execute` of `return 1`, alternating. Not set up: the report says so and compares with
//! Executor's sandbox alone, as before. While it serves, the same guest code as through our hub
//! (`hub_calls.rs`: awaited calls to one upstream tool, `Promise.all` fan-out) runs through it.

use anyhow::Context;
use tokio::process::Command;

use crate::calls::Samples;
use crate::clients::{json_from, samples};
use crate::hub_calls::{self, HubCalls};
use crate::procs::{BenchEnv, peer_dir};

/// Where the daemon serves MCP (fixed by Executor).
const MCP_URL: &str = "http://localhost:4788/mcp";
/// Where the daemon's code reaches the bench upstream's tools (its `setup.sh` names the
/// integration `bench` and its connection `org/default`).
const TOOLS: &str = "tools.bench.org.default";
/// Rounds of (`ping`, `execute`), as for our hub's sessions.
const ROUNDS: usize = 200;

/// The npm package, as installed by the setup script.
pub(crate) const PACKAGE: &str = "`executor` 1.5.9";

/// One session's samples against the daemon, µs.
#[derive(Debug)]
pub(crate) struct DaemonRow {
    pub protocol: String,
    pub ping: Samples,
    pub execute: Samples,
    /// The same guest code as through our hub, when the bench upstream is beside us.
    pub calls: Option<HubCalls>,
}

/// `executor daemon <verb>` with the peer's own home and scope.
fn daemon(verb: &str) -> Command {
    let dir = peer_dir();
    let mut command = Command::new(dir.join("node_modules/.bin/executor"));
    command
        .args(["daemon", verb])
        .env("HOME", dir.join("home"))
        .env("EXECUTOR_SCOPE_DIR", dir.join("scope"))
        .kill_on_drop(true);
    command
}

/// The daemon's session, or `None` when the peer is not set up on this machine.
pub(crate) async fn measure(env: &BenchEnv) -> anyhow::Result<Option<DaemonRow>> {
    if !peer_dir().join("node_modules/.bin/executor").is_file() {
        eprintln!(
            "capa-bench: Executor's daemon is not set up ({}): run ../shared/peers/executor/setup.sh",
            peer_dir().display()
        );
        return Ok(None);
    }
    eprintln!("capa-bench: execute from TS SDK 1.x over HTTP through Executor's daemon…");
    // `run` returns once the daemon is ready and leaves it serving.
    let started = daemon("run")
        .output()
        .await
        .context("starting Executor's daemon")?;
    anyhow::ensure!(
        started.status.success(),
        "Executor's daemon did not start: {}",
        String::from_utf8_lossy(&started.stderr)
    );
    let mut driver = Command::new("node");
    driver
        .arg(&env.ts_client)
        .args(["v1", "http", &ROUNDS.to_string(), MCP_URL]);
    let measured = json_from(&mut driver, "TS SDK 1.x over HTTP to Executor's daemon").await;
    let calls = match (&measured, hub_calls::bench_server()) {
        (Ok(_), Some(_)) => {
            eprintln!("capa-bench: the same code through Executor's daemon…");
            Some(
                hub_calls::drive(
                    env,
                    MCP_URL,
                    None,
                    TOOLS,
                    hub_calls::PEER_ROUNDS,
                    hub_calls::PEER_CALLS,
                )
                .await,
            )
        }
        _ => None,
    };
    let _ = daemon("stop").output().await;
    let value = measured?;
    Ok(Some(DaemonRow {
        protocol: value["protocol"].as_str().context("protocol")?.to_owned(),
        ping: samples(&value, "ping")?,
        execute: samples(&value, "execute")?,
        calls: calls.transpose()?,
    }))
}
