//! Our side of the sandbox comparisons, in process: the cold start + `return 1` of
//! `capa_sandbox::run` (with the pool) and of `run_unpooled` (a fresh runtime every time),
//! interleaved, and one awaited call from guest code to the built-in demo source through a hub
//! in this process (code with 400 sequential `demo.add` calls minus an empty run, per call:
//! enough calls that the empty run's own noise is small beside them).

use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use capa_config::ConfigFiles;
use capa_core::{EnvelopeStatus, ExecuteRequest, Hub, HubOptions, HubPaths, Redactor};
use capa_sandbox::{CallStop, Host, HostCall, Limits, RunInput, ToolFailure};
use futures::future::BoxFuture;
use serde_json::Value;

use crate::calls::Samples;

/// Cold starts a side, per chunk.
const COLD_STARTS: usize = 60;
/// The pause before each pair of cold starts: a client's next run seldom comes sooner.
const RUN_GAP: Duration = Duration::from_millis(40);
/// Rounds of (calls, empty run) through the in-process hub, per chunk.
const DEMO_ROUNDS: usize = 10;
/// Awaited calls in the calling run.
pub(crate) const DEMO_CALLS: usize = 400;
/// Awaited calls to a host that answers at once, in one run (the run's limit is 500).
const HAND_OFF_CALLS: usize = 400;

#[derive(Debug)]
pub(crate) struct InProcessReport {
    /// `capa_sandbox::run` of `return 1`, µs.
    pub pooled: Samples,
    /// `capa_sandbox::run_unpooled` of `return 1` (a fresh runtime every time), µs.
    pub unpooled: Samples,
    /// One awaited `demo.add` from guest code through the hub, µs (one sample a round).
    pub demo_call: Samples,
    /// One awaited call to a host that answers at once, µs (one sample a round): the guest's
    /// side of any call (its JSON both ways, the sandbox's event loop; the answer is polled on
    /// the sandbox's thread), the floor of any guest call.
    pub hand_off: Samples,
}

struct NoHost;

impl Host for NoHost {
    fn call(&self, _call: HostCall) -> BoxFuture<'static, Result<Value, CallStop>> {
        Box::pin(async { Ok(Value::Null) })
    }
    fn search(&self, _query: String) -> BoxFuture<'static, Result<String, ToolFailure>> {
        Box::pin(async { Ok(String::new()) })
    }
    fn describe(&self, _targets: Vec<String>) -> BoxFuture<'static, Result<String, ToolFailure>> {
        Box::pin(async { Ok(String::new()) })
    }
}

fn return_one(seed: u64) -> RunInput {
    RunInput {
        code: "return 1".to_owned(),
        namespaces: std::sync::Arc::from(vec![capa_sandbox::Namespace {
            global: "now".to_owned(),
            tools: vec![capa_sandbox::ToolBinding {
                member: "answer".to_owned(),
                address: "now.answer".to_owned(),
            }],
            unlisted_source: None,
        }]),
        seed,
        clock_start_ms: 0,
        limits: Limits::default(),
        calls_before: 0,
        keep_whole: false,
    }
}

fn micros(since: Instant) -> f64 {
    since.elapsed().as_secs_f64() * 1e6
}

/// Cold start + `return 1`, pooled and unpooled, alternating.
async fn cold_starts() -> (Samples, Samples) {
    let host: Arc<dyn Host> = Arc::new(NoHost);
    // As the hub does when it starts: the pool fills in the background.
    capa_sandbox::prewarm();
    tokio::time::sleep(Duration::from_millis(200)).await;
    let (mut pooled, mut unpooled) = (Vec::new(), Vec::new());
    for i in 0..COLD_STARTS {
        // Runs come from a model that thinks between them; back to back, faster than the
        // pool refills (it waits 20 ms after a take so that the run has the cores), every
        // run would find the pool empty and start cold. Both sides get the same pause.
        tokio::time::sleep(RUN_GAP).await;
        let started = Instant::now();
        let _ = capa_sandbox::run(return_one(i as u64), host.clone()).await;
        pooled.push(micros(started));
        let started = Instant::now();
        let _ = capa_sandbox::run_unpooled(return_one(i as u64), host.clone()).await;
        unpooled.push(micros(started));
    }
    (Samples(pooled), Samples(unpooled))
}

/// A hub in this process serving code mode with the demo source, its data in `dir`, once its
/// sources are settled.
pub(crate) async fn code_mode_hub(dir: &std::path::Path) -> anyhow::Result<Arc<Hub>> {
    let file = dir.join("capabilities.yaml");
    // Search by terms only: the model's first pass over the tools would take a core from
    // what is measured here (calls, approvals), which searches nothing.
    std::fs::write(
        &file,
        "options: { demo: true, toolExposure: code, search: { semantic: off } }\n",
    )?;
    let config = capa_config::load(&ConfigFiles::only(file), None).context("bench config")?;
    let hub = Hub::start(HubOptions {
        config,
        paths: HubPaths::in_dir(dir),
        redactor: Redactor::new(),
        keychain: capa_secrets::Keychain::default(),
        store: None,
    })
    .await?;
    hub.settled(Duration::from_secs(30)).await;
    Ok(hub)
}

async fn execute(hub: &Arc<Hub>, code: &str) -> anyhow::Result<f64> {
    let started = Instant::now();
    let envelope = hub
        .execute(ExecuteRequest {
            code: Some(code.to_owned()),
            resume: None,
            client: None,
        })
        .await?;
    let elapsed = micros(started);
    if envelope.status != EnvelopeStatus::Completed {
        bail!("execute did not complete: {:?}", envelope.error);
    }
    Ok(elapsed)
}

/// Per awaited `demo.add` through an in-process hub: (calls − empty run) / calls, a round each.
async fn demo_calls() -> anyhow::Result<Samples> {
    let dir = tempfile::tempdir()?;
    let hub = code_mode_hub(dir.path()).await?;
    let calling = format!(
        "let s = 0; for (let i = 0; i < {DEMO_CALLS}; i++) s += await demo.add({{ a: i, b: 1 }}); return s;"
    );
    for _ in 0..3 {
        execute(&hub, &calling).await?;
    }
    let mut per_call = Vec::new();
    for _ in 0..DEMO_ROUNDS {
        let with_calls = execute(&hub, &calling).await?;
        let empty = execute(&hub, "return 1").await?;
        per_call.push((with_calls - empty) / DEMO_CALLS as f64);
    }
    hub.shutdown().await;
    Ok(Samples(per_call))
}

/// Per awaited call to [`NoHost`] (it answers at once): (calls − empty run) / calls, pooled
/// runs paced as in [`cold_starts`].
async fn hand_offs() -> Samples {
    let host: Arc<dyn Host> = Arc::new(NoHost);
    let calling =
        format!("for (let i = 0; i < {HAND_OFF_CALLS}; i++) await now.answer({{}}); return 1;");
    let mut per_call = Vec::new();
    for i in 0..DEMO_ROUNDS {
        tokio::time::sleep(RUN_GAP).await;
        let started = Instant::now();
        let mut input = return_one(i as u64);
        input.code.clone_from(&calling);
        let _ = capa_sandbox::run(input, host.clone()).await;
        let with_calls = micros(started);
        tokio::time::sleep(RUN_GAP).await;
        let started = Instant::now();
        let _ = capa_sandbox::run(return_one(i as u64), host.clone()).await;
        let empty = micros(started);
        per_call.push((with_calls - empty) / HAND_OFF_CALLS as f64);
    }
    Samples(per_call)
}

pub(crate) async fn measure() -> anyhow::Result<InProcessReport> {
    eprintln!("capa-bench: sandbox cold start and demo calls in process…");
    let (pooled, unpooled) = cold_starts().await;
    Ok(InProcessReport {
        pooled,
        unpooled,
        demo_call: demo_calls().await?,
        hand_off: hand_offs().await,
    })
}

/// `--only-in-process`: the in-process rows in one line, for a profiler's run.
pub(crate) async fn print_line() -> anyhow::Result<()> {
    let measured = measure().await?;
    println!(
        "awaited demo call p50 {:.1} µs; host that answers at once p50 {:.1} µs; pooled start p50 {:.1} µs",
        measured.demo_call.percentile(0.5),
        measured.hand_off.percentile(0.5),
        measured.pooled.percentile(0.5)
    );
    Ok(())
}
