//! Resident memory of an idle hub.

use std::time::Duration;

use anyhow::{Context, bail};

use crate::procs::{self, BenchEnv};

#[derive(Debug)]
pub(crate) struct MemoryRow {
    pub label: String,
    /// The hub process alone, KiB.
    pub hub_kib: u64,
    /// Its children (the upstream servers), KiB.
    pub children_kib: u64,
}

pub(crate) fn rss_kib(pid: u32) -> anyhow::Result<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).context("reading /proc")?;
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .context("VmRSS in /proc status")
}

/// Proportional set size, KiB: each shared page divided among the processes that map it, so
/// that the sizes of several processes add up (RSS counts shared libraries in each).
pub(crate) fn pss_kib(pid: u32) -> anyhow::Result<u64> {
    let rollup = std::fs::read_to_string(format!("/proc/{pid}/smaps_rollup"))
        .context("reading /proc smaps_rollup")?;
    rollup
        .lines()
        .find_map(|l| l.strip_prefix("Pss:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .context("Pss in /proc smaps_rollup")
}

/// This process's own RSS, KiB.
pub(crate) fn own_rss_kib() -> anyhow::Result<u64> {
    rss_kib(std::process::id())
}

/// Children of every thread of `pid` (tokio spawns children from its worker threads).
pub(crate) fn children(pid: u32) -> Vec<u32> {
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return Vec::new();
    };
    tasks
        .flatten()
        .flat_map(|task| {
            std::fs::read_to_string(task.path().join("children"))
                .unwrap_or_default()
                .split_whitespace()
                .filter_map(|p| p.parse().ok())
                .collect::<Vec<u32>>()
        })
        .collect()
}

/// All descendants' RSS (node and python servers may fork).
pub(crate) fn descendants_kib(pid: u32) -> u64 {
    children(pid)
        .into_iter()
        .map(|c| rss_kib(c).unwrap_or(0) + descendants_kib(c))
        .sum()
}

async fn measure(
    env: &BenchEnv,
    label: &str,
    yaml: &str,
    expect_ready: usize,
) -> anyhow::Result<MemoryRow> {
    let hub = procs::resting_hub(env, yaml).await?;
    let pid = hub.pid;
    wait_ready(&hub.url, &hub.token, expect_ready, || {
        (!std::path::Path::new(&format!("/proc/{pid}")).exists()).then(|| "hub exited".to_owned())
    })
    .await?;
    wait_at_rest(&hub.url, &hub.token).await?;
    Ok(MemoryRow {
        label: label.to_owned(),
        hub_kib: rss_kib(hub.pid)?,
        children_kib: descendants_kib(hub.pid),
    })
}

/// `GET <url><path>` with the hub's token, as JSON.
async fn api_json(url: &str, token: &str, path: &str) -> anyhow::Result<serde_json::Value> {
    Ok(reqwest::Client::new()
        .get(format!("{url}{path}"))
        .bearer_auth(token)
        .send()
        .await?
        .json()
        .await?)
}

/// What the hub at `url` says of search (`/api/config`'s `search`: `state` and the rest).
pub(crate) async fn search_status(url: &str, token: &str) -> anyhow::Result<serde_json::Value> {
    Ok(api_json(url, token, "/api/config").await?["search"].clone())
}

/// Whether the hub at `url` holds its search model in memory now (`/api/config`).
pub(crate) async fn model_loaded(url: &str, token: &str) -> anyhow::Result<bool> {
    api_json(url, token, "/api/config").await?["searchModelLoaded"]
        .as_bool()
        .context("searchModelLoaded in /api/config")
}

/// Waits until the hub at `url` has let its search model go (loaded or not before), plus a
/// second for its memory to be given back. A model still in use when its idle time is up (an
/// embedding pass) is let go about a second after its last use, so this waits at most
/// [`procs::MODEL_IDLE_SECS`] plus half a minute.
pub(crate) async fn wait_model_let_go(url: &str, token: &str) -> anyhow::Result<()> {
    for _ in 0..(procs::MODEL_IDLE_SECS + 30) * 10 {
        if !model_loaded(url, token).await? {
            tokio::time::sleep(Duration::from_secs(1)).await;
            return Ok(());
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    bail!(
        "the hub still held its search model {} s after it was set to let it go after {} s",
        procs::MODEL_IDLE_SECS + 30,
        procs::MODEL_IDLE_SECS
    )
}

/// Waits until the hub at `url` has embedded its tools for search (or has no model) and has
/// let its model go ([`procs::MODEL_IDLE_SECS`] unused), plus a second for the rest to settle.
pub(crate) async fn wait_at_rest(url: &str, token: &str) -> anyhow::Result<()> {
    for _ in 0..1200 {
        if search_status(url, token).await?["state"] != "embedding" {
            return wait_model_let_go(url, token).await;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    bail!("the hub was still embedding its tools after two minutes")
}

/// Waits until the hub at `url` reports `expect` sources ready; `exited` says why the process
/// under test is gone, if it is.
pub(crate) async fn wait_ready(
    url: &str,
    token: &str,
    expect: usize,
    exited: impl Fn() -> Option<String>,
) -> anyhow::Result<()> {
    let mut ready = 0;
    for _ in 0..600 {
        if let Some(why) = exited() {
            bail!("{why}");
        }
        ready = count_ready(url, token).await.unwrap_or(0);
        if ready >= expect {
            return Ok(());
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    bail!("only {ready} of {expect} sources became ready")
}

/// How many sources the hub at `url` reports ready.
async fn count_ready(url: &str, token: &str) -> anyhow::Result<usize> {
    let sources = api_json(url, token, "/api/sources").await?;
    Ok(sources
        .as_array()
        .map_or(0, |a| a.iter().filter(|s| s["state"] == "ready").count()))
}

pub(crate) async fn idle_memory(env: &BenchEnv) -> anyhow::Result<Vec<MemoryRow>> {
    let files = tempfile::tempdir()?;
    let three = format!(
        "options: {{ demo: false }}\nservers:\n  - id: everything\n    type: mcp\n    def: {{ command: node, args: [\"{}\", stdio] }}\n  - id: filesystem\n    type: mcp\n    def: {{ command: node, args: [\"{}\", \"{}\"] }}\n  - id: time\n    type: mcp\n    def: {{ command: \"{}\" }}\n",
        env.everything_js.display(),
        env.filesystem_js.display(),
        files.path().display(),
        env.time_server.display()
    );
    Ok(vec![
        measure(env, "demo source only", "", 1).await?,
        measure(
            env,
            "three upstreams (everything, filesystem, time)",
            &three,
            3,
        )
        .await?,
    ])
}
