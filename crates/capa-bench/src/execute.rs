//! `execute` measured with rmcp clients: through the MCP front (stdio and HTTP) against a `search`
//! round trip in the same session, the cost of a tool call made from guest code against the same
//! call made directly, `Promise.all` of 40 slow calls under `maxConcurrent` against its floor
//! (five waves of 8 parallel direct calls to the same upstream), and runs per second with 16
//! concurrent clients. The official clients, the in-process sandbox and the peer are measured in
//! `clients.rs`, `inprocess.rs` and `peer.rs`.

use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use rmcp::model::CallToolRequestParams;
use serde_json::{Value, json};
use tokio::process::Command;

use crate::calls::{Client, Samples, http_client, stdio_client, wait_for_tool};
use crate::memory::rss_kib;
use crate::procs::{self, BenchEnv};

/// Calls in the run that measures a guest call to a stdio upstream.
pub(crate) const GUEST_CALLS: usize = 400;
/// Calls in the run that measures a run's first calls.
pub(crate) const FIRST_CALLS: usize = 5;

#[derive(Debug)]
pub(crate) struct FrontRow {
    pub transport: &'static str,
    pub search: Samples,
    pub execute: Samples,
}

#[derive(Debug)]
pub(crate) struct ExecuteReport {
    pub fronts: Vec<FrontRow>,
    /// Per call: direct `tools/call` to server-everything's echo, and the same call from guest
    /// code through the hub (execute of [`GUEST_CALLS`] calls minus execute of none, per call).
    pub direct_call_us: Samples,
    pub guest_call_us: f64,
    /// The same for a run of [`FIRST_CALLS`] calls: a run's first calls, which cost more.
    pub first_calls_us: f64,
    /// `Promise.all` of 40 calls to a 10 ms upstream, maxConcurrent 8.
    pub fan_out_ms: Samples,
    /// Its floor, interleaved with it: five sequential waves of 8 parallel direct calls to the
    /// same upstream over one session.
    pub fan_out_floor_ms: Samples,
    /// One direct call to that upstream (10 ms delay), ms.
    pub slow_call_ms: Samples,
    pub runs_per_second: f64,
    pub clients: usize,
    pub load_rss_kib: u64,
}

async fn call(client: &Client, name: &str, arguments: Value) -> anyhow::Result<Value> {
    let mut params = CallToolRequestParams::new(name.to_owned());
    params.arguments = arguments.as_object().cloned();
    let result = client.peer().call_tool(params).await?;
    if result.is_error == Some(true) {
        bail!("{name} failed: {result:?}");
    }
    Ok(result.structured_content.unwrap_or(Value::Null))
}

async fn execute(client: &Client, code: &str) -> anyhow::Result<Value> {
    let envelope = call(client, "execute", json!({ "code": code })).await?;
    if envelope["status"] != "completed" {
        bail!("execute did not complete: {envelope}");
    }
    Ok(envelope)
}

async fn time<F, T>(f: F) -> anyhow::Result<f64>
where
    F: std::future::Future<Output = anyhow::Result<T>>,
{
    let started = Instant::now();
    f.await?;
    Ok(started.elapsed().as_secs_f64() * 1e6)
}

fn code_mode_yaml(env: &BenchEnv, extra: &str) -> String {
    format!(
        "options: {{ demo: true, toolExposure: code }}\nservers:\n  - id: everything\n    type: mcp\n    def: {{ command: node, args: [\"{}\", stdio] }}\n{extra}",
        env.everything_js.display()
    )
}

/// `execute` of trivial code and a `search`, alternating, in one session.
async fn front(client: &Client, transport: &'static str, n: usize) -> anyhow::Result<FrontRow> {
    for _ in 0..20 {
        execute(client, "return 1").await?;
    }
    let (mut search, mut execute_samples) = (Vec::new(), Vec::new());
    for _ in 0..n {
        search.push(time(call(client, "search", json!({"query": "add numbers"}))).await?);
        execute_samples.push(time(execute(client, "return 1")).await?);
    }
    Ok(FrontRow {
        transport,
        search: Samples(search),
        execute: Samples(execute_samples),
    })
}

/// The tools of the largest catalog fixture (toucan-live: 6,041 tools from 500+ servers) as one
/// more source: `execute` must not grow with the hub's tools. Search by meaning is off, so that
/// the hub's first embedding pass over them (a core for a minute) is not measured with it.
async fn many_tools(env: &BenchEnv) -> anyhow::Result<[FrontRow; 2]> {
    eprintln!("capa-bench: execute over HTTP with 6,041 more tools…");
    let yaml = format!(
        "options: {{ demo: true, toolExposure: code, search: {{ semantic: off }} }}\nservers:\n  - id: toucan\n    type: mcp\n    def: {{ command: node, args: [\"{}\", toucan-live] }}\n",
        env.catalog_server.display()
    );
    let hub = procs::hub_with_model(env, &yaml, procs::ModelDir::Off, None).await?;
    let http = http_client(&format!("{}/mcp", hub.url), Some(&hub.token)).await?;
    wait_for_tool(&http, "search").await?;
    // Names the source: the run waits until its tools are listed.
    execute(&http, "return Object.keys(toucan).length").await?;
    let back_to_back = front(&http, "HTTP, 6,041 more tools (toucan-live)", 100).await?;
    // As a model sends them, with its thinking between: the pool has its next sandbox primed.
    let (mut search, mut execute_samples) = (Vec::new(), Vec::new());
    for _ in 0..30 {
        tokio::time::sleep(RUN_GAP).await;
        search.push(time(call(&http, "search", json!({"query": "add numbers"}))).await?);
        execute_samples.push(time(execute(&http, "return 1")).await?);
    }
    let _ = http.cancel().await;
    let paced = FrontRow {
        transport: "HTTP, 6,041 more tools, a run every 300 ms",
        search: Samples(search),
        execute: Samples(execute_samples),
    };
    Ok([back_to_back, paced])
}

/// The pause before each paced run: about what defining 6,041 tools in the next warm sandbox
/// takes on two cores, and less than a model thinks between runs.
const RUN_GAP: Duration = Duration::from_millis(300);

/// `Promise.all` of 40 slow calls through the hub, interleaved with its floor (five waves of 8
/// parallel direct calls to the same upstream) and one direct call; each in ms.
async fn fan_out(env: &BenchEnv, hub: &Client) -> anyhow::Result<(Vec<f64>, Vec<f64>, Vec<f64>)> {
    eprintln!("capa-bench: Promise.all of 40 slow calls, and its floor…");
    let slow_direct = stdio_client({
        let mut c = Command::new("node");
        c.arg(&env.catalog_server)
            .args(["github", "--delay-ms", "10"]);
        c
    })
    .await?;
    let fan_out = "await Promise.all(Array.from({ length: 40 }, () => slow.get_me({}))); return 1;";
    let (mut fan_out_ms, mut floor_ms, mut slow_call_ms) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..10 {
        fan_out_ms.push(time(execute(hub, fan_out)).await? / 1000.0);
        floor_ms.push(time(five_waves(&slow_direct)).await? / 1000.0);
        slow_call_ms.push(time(call(&slow_direct, "get_me", json!({}))).await? / 1000.0);
    }
    let _ = slow_direct.cancel().await;
    Ok((fan_out_ms, floor_ms, slow_call_ms))
}

/// What 40 calls under `maxConcurrent` 8 cannot beat: five waves of 8 parallel calls, each wave
/// waiting for its slowest.
async fn five_waves(client: &Client) -> anyhow::Result<()> {
    for _ in 0..5 {
        futures::future::try_join_all((0..8).map(|_| call(client, "get_me", json!({})))).await?;
    }
    Ok(())
}

pub(crate) async fn measure(env: &BenchEnv) -> anyhow::Result<ExecuteReport> {
    let dir = tempfile::tempdir()?;
    let slow = format!(
        "  - id: slow\n    type: mcp\n    def: {{ command: node, args: [\"{}\", github, \"--delay-ms\", \"10\"] }}\n",
        env.catalog_server.display()
    );
    let yaml = code_mode_yaml(env, &slow);

    eprintln!("capa-bench: execute over stdio…");
    let stdio = stdio_client(procs::capa_mcp(env, dir.path(), &yaml)?).await?;
    wait_for_tool(&stdio, "search").await?;
    execute(&stdio, "return await hub.search('echo')").await?;
    let mut fronts = vec![front(&stdio, "stdio", 200).await?];

    // Guest calls against direct calls: sequential echoes in one run, minus an empty run. The
    // direct row is 200 calls back to back; a run's first calls cost more than its later ones
    // (threads that were idle wake up, likely; measured on 2026-12-07: 630-690 µs a call over a run of
    // one to five, 270 over 400), so the per-call row counts many, as the in-process row does,
    // and a run of a few calls is reported beside it.
    let direct = stdio_client({
        let mut c = Command::new("node");
        c.arg(&env.everything_js).arg("stdio");
        c
    })
    .await?;
    let mut direct_samples = Vec::new();
    for _ in 0..200 {
        direct_samples.push(time(call(&direct, "echo", json!({"message": "x"}))).await?);
    }
    let echoes = |n: usize| {
        format!(
            "for (let i = 0; i < {n}; i++) {{ await everything.echo({{ message: 'x' }}); }} return 1;"
        )
    };
    let (many, few) = (echoes(GUEST_CALLS), echoes(FIRST_CALLS));
    let (mut with_calls, mut with_few, mut without) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..12 {
        with_calls.push(time(execute(&stdio, &many)).await?);
        without.push(time(execute(&stdio, "return 1")).await?);
        with_few.push(time(execute(&stdio, &few)).await?);
    }
    let empty = Samples(without).percentile(0.5);
    let guest_call_us = (Samples(with_calls).percentile(0.5) - empty) / GUEST_CALLS as f64;
    let first_calls_us = (Samples(with_few).percentile(0.5) - empty) / FIRST_CALLS as f64;
    let _ = direct.cancel().await;

    let (fan_out_ms, floor_ms, slow_call_ms) = fan_out(env, &stdio).await?;
    let _ = stdio.cancel().await;

    eprintln!("capa-bench: execute over HTTP, and 16 clients…");
    let hub = procs::hub(env, &yaml).await?;
    let url = format!("{}/mcp", hub.url);
    let http = http_client(&url, Some(&hub.token)).await?;
    wait_for_tool(&http, "search").await?;
    fronts.push(front(&http, "HTTP", 200).await?);
    let _ = http.cancel().await;
    let clients = 16;
    let mut sessions = Vec::new();
    for _ in 0..clients {
        sessions.push(http_client(&url, Some(&hub.token)).await?);
    }
    let window = Duration::from_secs(5);
    let started = Instant::now();
    let pid = hub.pid;
    let sampler = tokio::spawn(async move {
        let mut peak = 0;
        while started.elapsed() < window {
            peak = peak.max(rss_kib(pid).unwrap_or(0));
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
        peak
    });
    let load_code = "const xs = Array.from({ length: 1000 }, (_, i) => i * i); return xs.reduce((a, b) => a + b, 0);";
    let counts = futures::future::join_all(sessions.iter().map(|client| async move {
        let mut n = 0u64;
        while started.elapsed() < window {
            if execute(client, load_code).await.is_ok() {
                n += 1;
            }
        }
        n
    }))
    .await;
    let elapsed = started.elapsed().as_secs_f64();
    let load_rss_kib = sampler.await.context("rss sampler")?;
    for session in sessions {
        let _ = session.cancel().await;
    }
    drop(hub);
    fronts.extend(many_tools(env).await?);
    Ok(ExecuteReport {
        fronts,
        direct_call_us: Samples(direct_samples),
        guest_call_us,
        first_calls_us,
        fan_out_ms: Samples(fan_out_ms),
        fan_out_floor_ms: Samples(floor_ms),
        slow_call_ms: Samples(slow_call_ms),
        runs_per_second: counts.iter().sum::<u64>() as f64 / elapsed,
        clients,
        load_rss_kib,
    })
}
