//! The Executor project's QuickJS sandbox (`@executor-js/runtime-quickjs` under Node) measured
//! in the same run as ours, by `tests/bench/executor_peer.mjs`: its cold start + `return 1` and
//! the cost of one awaited tool call: in process with no transport, the peer of the in-process
//! rows (Executor's daemon through MCP is `executor_daemon.rs`).

use tokio::process::Command;

use crate::calls::Samples;
use crate::clients::{json_from, samples};
use crate::procs::BenchEnv;

/// Rounds the peer driver runs: 10 cold starts and one per-call sample each.
const ROUNDS: usize = 10;

#[derive(Debug)]
pub(crate) struct PeerReport {
    /// Name and version of the runtime measured.
    pub runtime: String,
    /// The first `execute` in the process, WASM module load included, µs.
    pub module_load_us: f64,
    /// Each later `execute` of `return 1` (fresh runtime and context), µs.
    pub cold_start_us: Samples,
    /// One awaited call to a tool answering from memory, µs.
    pub per_call_us: Samples,
}

pub(crate) async fn measure(env: &BenchEnv) -> anyhow::Result<PeerReport> {
    eprintln!("capa-bench: the Executor sandbox as a peer…");
    let mut command = Command::new("node");
    command.arg(&env.executor_peer).arg(ROUNDS.to_string());
    let value = json_from(&mut command, "the Executor peer").await?;
    Ok(PeerReport {
        runtime: value["runtime"].as_str().unwrap_or("?").to_owned(),
        module_load_us: value["moduleLoadUs"].as_f64().unwrap_or(f64::NAN),
        cold_start_us: samples(&value, "coldStartUs")?,
        per_call_us: samples(&value, "perCallUs")?,
    })
}
