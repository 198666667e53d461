//! `capa-bench`: measures what the hub costs, against the same upstream called directly with the
//! same client in the same run, and writes the table to `docs/benchmarks.md`.
//!
//! - one `tools/call` through the hub vs direct, over stdio and over Streamable HTTP;
//! - the hub's resident memory, idle, with three upstreams (and with none, as a baseline);
//! - code mode's lookups over the real catalogs: index build, `search` and `describe` latency,
//!   search quality against two baselines, and the surface's token cost;
//! - search by meaning (issue 20): quality by kind of BM25F, embeddings and the hybrid, hybrid
//!   latency over 1,400 and 7,400 tools, first embedding, a warm-cache index build, the hub's
//!   memory with the model;
//! - `execute` (issue 17's targets first): through the front with rmcp and the official TS and
//!   Python clients, sandbox cold start and guest calls in process beside Executor's sandbox,
//!   guest calls vs direct, fan-out vs its floor, load;
//! - approvals: replay of a 500-call run on resume, and decision-to-result per delivery path;
//! - the desktop app (`--desktop BIN`, under a display): its resident memory, and the time from a
//!   call that asks to its approval popup.
//!
//! Ratios come from interleaved rounds (direct, hub, direct, hub, …) so that a noisy neighbour on
//! the shared machine slows both sides alike. No number here is asserted: they are reported.

mod approvals;
mod calls;
mod clients;
mod desktop;
mod execute;
mod executor_daemon;
mod hub_calls;
mod inprocess;
mod lookup;
mod memory;
mod package;
mod peer;
mod procs;
mod replicas;
mod report;
mod semantic;
mod semantic_hub;
mod speed;

use std::path::PathBuf;

use anyhow::Context;

fn main() -> anyhow::Result<()> {
    // SAFETY: the first thing the bench does, before its runtime starts any thread. The hub's
    // binaries do the same, so the model is measured as they run it.
    #[expect(
        unsafe_code,
        reason = "sets an environment variable, sound only before any thread starts"
    )]
    unsafe {
        capa_embed::prepare_process();
    }
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("starting the async runtime")?
        .block_on(run())
}

/// One section printed alone (`--only-…`), instead of the whole report.
#[derive(Debug, Clone, Copy)]
enum Only {
    Approvals,
    Desktop,
    Speed,
    /// The sandbox and demo calls in process, in a line: for a profiler's run.
    InProcess,
    Search,
    /// The query's embedding alone, in a line: for a profiler's run.
    QueryEmbedding,
    Package,
    /// A team hub's replicas behind HAProxy.
    Replicas,
}

async fn run() -> anyhow::Result<()> {
    let mut out = None;
    let mut calls_per_round = 100usize;
    let mut only = None;
    let mut desktop_app: Option<PathBuf> = std::env::var_os("CAPA_DESKTOP_BIN").map(PathBuf::from);
    let mut deb: Option<PathBuf> = None;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--out" => out = args.next().map(PathBuf::from),
            "--calls" => {
                calls_per_round = args
                    .next()
                    .and_then(|n| n.parse().ok())
                    .context("--calls N")?;
            }
            "--desktop" => {
                desktop_app = Some(args.next().map(PathBuf::from).context("--desktop BIN")?);
            }
            "--deb" => deb = Some(args.next().map(PathBuf::from).context("--deb FILE")?),
            "--only-approvals" => only = Some(Only::Approvals),
            "--only-desktop" => only = Some(Only::Desktop),
            "--only-speed" => only = Some(Only::Speed),
            "--only-in-process" => only = Some(Only::InProcess),
            "--only-search" => only = Some(Only::Search),
            "--only-query-embedding" => only = Some(Only::QueryEmbedding),
            "--only-package" => only = Some(Only::Package),
            "--only-replicas" => only = Some(Only::Replicas),
            "--help" | "-h" => {
                println!(
                    "capa-bench [--out docs/benchmarks.md] [--calls N per round] [--desktop target/dist/capabilities-desktop (needs a display)] [--deb target/dist/bundle/deb/….deb] [--only-approvals | --only-desktop | --only-speed | --only-search | --only-package | --only-replicas (print that section only) | --only-in-process | --only-query-embedding (the in-process rows or the query embedding in one line, for a profiler)]"
                );
                return Ok(());
            }
            other => anyhow::bail!("unknown argument {other}; see --help"),
        }
    }
    if let Some(only) = only {
        return run_only(only, desktop_app, deb).await;
    }
    let env = procs::BenchEnv::discover()?;
    eprintln!("capa-bench: hub binary {}", env.capa.display());
    let mut rows = Vec::new();
    for transport in [calls::Transport::Stdio, calls::Transport::Http] {
        eprintln!("capa-bench: tools/call over {transport:?}…");
        rows.push(calls::overhead(&env, transport, calls_per_round).await?);
    }
    eprintln!("capa-bench: idle memory…");
    let memory = memory::idle_memory(&env).await?;
    let lookups = tokio::task::spawn_blocking(lookup::measure).await??;
    let by_meaning = search_by_meaning(&env).await?;
    let speed = speed::measure(&env).await?;
    let approvals = approvals::measure().await?;
    let replicas = replicas::measure(&env).await?;
    let desktop = match &desktop_app {
        Some(app) => report::desktop(&desktop::measure(&env, app).await?),
        None => "\n## The desktop app\n\nNot measured in this run: `capa-bench --desktop <app binary>` under a display measures it (`scripts/test` does).\n".to_owned(),
    };
    let package = match &deb {
        Some(deb) => report::package(&package::measure(deb)?),
        None => "\n## The installed package\n\nNot measured in this run: `capa-bench --deb <file>` reads the .deb (`scripts/test` does).\n".to_owned(),
    };
    let text = report::markdown(&rows, &memory, calls_per_round)
        + &report::lookups(&lookups)
        + &by_meaning
        + &report::execute(&speed)
        + &report::approvals(&approvals)
        + &report::replicas(&replicas)
        + &desktop
        + &package;
    print!("{text}");
    if let Some(out) = out {
        std::fs::write(&out, &text).with_context(|| format!("writing {}", out.display()))?;
        eprintln!("capa-bench: wrote {}", out.display());
    }
    Ok(())
}

/// The search-by-meaning section: in process, then the hub's memory with and without the model.
async fn search_by_meaning(env: &procs::BenchEnv) -> anyhow::Result<String> {
    let started = std::time::Instant::now();
    let report = tokio::task::spawn_blocking(semantic::measure).await??;
    let hub = match &report {
        Some(r) => semantic_hub::hub_model_memory(env, &r.model_dir).await?,
        None => Vec::new(),
    };
    eprintln!(
        "capa-bench: search by meaning took {:.0} s",
        started.elapsed().as_secs_f64()
    );
    Ok(report::semantic(report.as_ref(), &hub))
}

/// Prints one section alone.
async fn run_only(
    only: Only,
    desktop_app: Option<PathBuf>,
    deb: Option<PathBuf>,
) -> anyhow::Result<()> {
    match only {
        Only::Approvals => print!("{}", report::approvals(&approvals::measure().await?)),
        Only::Replicas => {
            let env = procs::BenchEnv::discover()?;
            print!("{}", report::replicas(&replicas::measure(&env).await?));
        }
        Only::InProcess => return inprocess::print_line().await,
        Only::QueryEmbedding => {
            return tokio::task::spawn_blocking(semantic::print_query_embedding_line).await?;
        }
        Only::Package => {
            let deb = deb.context("--only-package needs --deb FILE")?;
            print!("{}", report::package(&package::measure(&deb)?));
        }
        Only::Desktop => {
            let app = desktop_app.context("--only-desktop needs --desktop BIN")?;
            let env = procs::BenchEnv::discover()?;
            print!("{}", report::desktop(&desktop::measure(&env, &app).await?));
        }
        Only::Speed => {
            let env = procs::BenchEnv::discover()?;
            print!("{}", report::execute(&speed::measure(&env).await?));
        }
        Only::Search => {
            let env = procs::BenchEnv::discover()?;
            print!("{}", search_by_meaning(&env).await?);
        }
    }
    Ok(())
}
