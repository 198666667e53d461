//! The same guest code through both code-mode hubs (issue 42): ours (`capa hub serve`) and
//! Executor's daemon, each with the same stdio upstream (`bench-mcp-server.mjs` of
//! `../shared/peers/executor/`: `echo`, and `sleep10`, which answers after 10 ms), driven by the
//! same TS SDK 1.x client over Streamable HTTP (`tests/bench/hub_calls.mjs`): an empty run, awaited
//! `echo` calls in a row, and `Promise.all` of 40 `sleep10` calls.

use std::fmt::Write;
use std::path::{Path, PathBuf};

use anyhow::Context;
use tokio::process::Command;

use crate::calls::Samples;
use crate::clients::{json_from, samples};
use crate::procs::{self, BenchEnv};

/// Rounds of (empty run, awaited calls, fan-out) against our hub.
pub(crate) const OUR_ROUNDS: usize = 40;
/// Awaited `echo` calls in one of our runs.
pub(crate) const OUR_CALLS: usize = 50;
/// Executor's daemon starts the upstream for every call (about 0.2 s each, see its README), so
/// it gets fewer of both: enough for a median, in a bearable time.
pub(crate) const PEER_ROUNDS: usize = 6;
pub(crate) const PEER_CALLS: usize = 5;

/// One hub's samples, µs per run.
#[derive(Debug)]
pub(crate) struct HubCalls {
    /// Awaited calls in each run of `awaited`.
    pub calls: usize,
    /// Calls in each `Promise.all` of `fan_out`.
    pub fan_out_calls: usize,
    pub empty: Samples,
    pub awaited: Samples,
    pub fan_out: Samples,
}

impl HubCalls {
    /// One awaited call, µs: (the run of calls − the empty run) / calls, at the medians.
    pub(crate) fn per_call(&self) -> f64 {
        #[expect(clippy::cast_precision_loss, reason = "a handful of calls")]
        let calls = self.calls as f64;
        (self.awaited.percentile(0.5) - self.empty.percentile(0.5)) / calls
    }
}

/// The upstream both hubs have, or `None` when the peer's folder is not beside this repository
/// or the SDK it imports (installed with Executor by its `setup.sh`) is missing.
pub(crate) fn bench_server() -> Option<PathBuf> {
    let path = std::env::current_dir()
        .ok()?
        .join("../shared/peers/executor/bench-mcp-server.mjs");
    let sdk = procs::peer_dir().join("node_modules/@modelcontextprotocol/sdk/package.json");
    (path.is_file() && sdk.is_file()).then_some(path)
}

/// Runs the driver against the hub at `url` whose tools of the bench upstream are at `tools`.
pub(crate) async fn drive(
    env: &BenchEnv,
    url: &str,
    token: Option<&str>,
    tools: &str,
    rounds: usize,
    calls: usize,
) -> anyhow::Result<HubCalls> {
    let mut driver = Command::new("node");
    driver
        .arg(&env.hub_calls)
        .args([url, tools, &rounds.to_string(), &calls.to_string()]);
    if let Some(token) = token {
        driver.env("CAPA_BENCH_TOKEN", token);
    }
    let value = json_from(
        &mut driver,
        &format!("the same code through the hub at {url}"),
    )
    .await?;
    Ok(HubCalls {
        calls: value["calls"].as_u64().context("calls")?.try_into()?,
        fan_out_calls: value["fanOutCalls"]
            .as_u64()
            .context("fanOutCalls")?
            .try_into()?,
        empty: samples(&value, "empty")?,
        awaited: samples(&value, "awaited")?,
        fan_out: samples(&value, "fanOut")?,
    })
}

/// Our hub in code mode with the bench upstream as the source `bench` (no demo source), its
/// tools allowed as any tool without annotations is.
pub(crate) async fn ours(env: &BenchEnv, server: &Path) -> anyhow::Result<HubCalls> {
    eprintln!("capa-bench: the same code through our hub (TS SDK 1.x over HTTP)…");
    let mut yaml = format!(
        "options: {{ demo: false, toolExposure: code }}\nservers:\n  - id: bench\n    type: mcp\n    def:\n      command: node\n      args: [\"{}\"]\n",
        server.display()
    );
    if let Some(dir) = std::env::var_os("EXECUTOR_CLI_DIR") {
        // The server imports the SDK installed beside Executor.
        let _ = writeln!(
            yaml,
            "      env: {{ EXECUTOR_CLI_DIR: \"{}\" }}",
            PathBuf::from(dir).display()
        );
    }
    let hub = procs::hub(env, &yaml).await?;
    drive(
        env,
        &format!("{}/mcp", hub.url),
        Some(&hub.token),
        "bench",
        OUR_ROUNDS,
        OUR_CALLS,
    )
    .await
}
