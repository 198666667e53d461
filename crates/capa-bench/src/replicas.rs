//! A team hub's replicas behind HAProxy (issue 44, docs/team.md): two `capa hub serve` on one
//! PostgreSQL database, HAProxy with `docs/team-haproxy.cfg` as it is in front. `execute` of
//! `return 1 + 1` from 16 and 64 concurrent rmcp clients of each protocol era, through one
//! replica (both of HAProxy's servers the same hub) and through two; then the time from killing
//! the replica that holds a paused, approved run to that run completing through HAProxy on the
//! other. Needs `CAPA_TEST_POSTGRES` (a server: `scripts/test` starts one) and `haproxy`.

use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use rmcp::model::{CallToolRequestParams, ProtocolVersion};
use rmcp::service::{ClientLifecycleMode, ClientServiceExt};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use serde_json::{Value, json};
use tokio::process::Command;

use crate::calls::{Client, Samples};
use crate::procs::{self, BenchEnv, Owned};

/// How long each load runs.
const WINDOW: Duration = Duration::from_secs(4);
/// Concurrent clients of each load.
const CLIENTS: [usize; 2] = [16, 64];

/// The protocol era a client speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Era {
    /// 2026-07-28: no session; any replica answers.
    Stateless,
    /// 2025-11-25: a session, kept on its replica by HAProxy.
    Session,
}

impl Era {
    pub(crate) fn label(self) -> &'static str {
        match self {
            Self::Stateless => "2026-07-28 (no session)",
            Self::Session => "2025-11-25 (session, sticky)",
        }
    }

    fn lifecycle(self) -> ClientLifecycleMode {
        match self {
            Self::Stateless => ClientLifecycleMode::Discover {
                preferred_versions: vec![ProtocolVersion::V_2026_07_28],
            },
            Self::Session => ClientLifecycleMode::Initialize,
        }
    }
}

/// One load: its setup and what it measured.
#[derive(Debug)]
pub(crate) struct LoadRow {
    pub replicas: usize,
    pub era: Era,
    pub clients: usize,
    pub runs_per_second: f64,
    /// `execute` round trips, µs.
    pub latency: Samples,
    pub failed: usize,
}

#[derive(Debug)]
pub(crate) enum ReplicasReport {
    Measured {
        rows: Vec<LoadRow>,
        /// From the SIGKILL of the replica holding a paused, approved run to that run's
        /// completion through HAProxy on the other, ms.
        failover_ms: f64,
    },
    NotMeasured(String),
}

/// A replica: `capa hub serve` on the shared database.
struct Replica {
    child: Owned,
    host: String,
    token: String,
    pid: u32,
    _dir: tempfile::TempDir,
}

pub(crate) async fn measure(env: &BenchEnv) -> anyhow::Result<ReplicasReport> {
    let Some(admin) = std::env::var("CAPA_TEST_POSTGRES")
        .ok()
        .filter(|a| !a.is_empty())
    else {
        return Ok(ReplicasReport::NotMeasured(
            "no PostgreSQL server (`CAPA_TEST_POSTGRES`; `scripts/test` starts one)".into(),
        ));
    };
    if Command::new("haproxy").arg("-v").output().await.is_err() {
        return Ok(ReplicasReport::NotMeasured(
            "haproxy is not installed (`apt-get install haproxy`)".into(),
        ));
    }
    eprintln!("capa-bench: replicas behind HAProxy…");
    let database = tokio::task::spawn_blocking(move || {
        capa_store_pg::scratch::ScratchDatabase::new(&admin, "bench")
    })
    .await??;
    let config = tempfile::tempdir()?;
    let config_file = procs::write_config(
        config.path(),
        "options: { demo: true, toolExposure: code }\n",
    )?;
    let a = replica(env, &config_file, &database.url()).await?;
    let b = replica(env, &config_file, &database.url()).await?;
    if a.token != b.token {
        bail!("the replicas do not share their token");
    }
    let mut rows = Vec::new();
    for replicas in [1, 2] {
        let second = if replicas == 1 { &a.host } else { &b.host };
        let (_lb, url) = haproxy(&a.host, second, &a.token).await?;
        for era in [Era::Stateless, Era::Session] {
            for clients in CLIENTS {
                rows.push(load(&url, &a.token, replicas, era, clients).await?);
            }
        }
    }
    let failover_ms = failover(a, b, &database.url()).await?;
    drop(database);
    Ok(ReplicasReport::Measured { rows, failover_ms })
}

async fn replica(env: &BenchEnv, config: &Path, store: &str) -> anyhow::Result<Replica> {
    let dir = tempfile::tempdir()?;
    let data = dir.path().join("data");
    let child = Command::new(&env.capa)
        .arg("--config")
        .arg(config)
        .args(["hub", "serve", "--http", "127.0.0.1:0"])
        .env("CAPA_DATA_DIR", &data)
        .env("CAPA_CONFIG_DIR", dir.path().join("config"))
        .env("CAPA_STORE", store)
        .env("RUST_LOG", "warn")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .context("starting a replica")?;
    let pid = child.id().context("replica pid")?;
    for _ in 0..400 {
        if let Some((url, token)) = procs::discovery(&data)? {
            let host = url.trim_start_matches("http://").to_owned();
            return Ok(Replica {
                child: Owned(child),
                host,
                token,
                pid,
                _dir: dir,
            });
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    bail!("a replica did not start")
}

/// HAProxy with the sample configuration in front of `a` and `b`; its URL once it serves.
async fn haproxy(a: &str, b: &str, token: &str) -> anyhow::Result<(Owned, String)> {
    let port = std::net::TcpListener::bind("127.0.0.1:0")?
        .local_addr()?
        .port();
    let config = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/team-haproxy.cfg");
    let child = Command::new("haproxy")
        .arg("-db")
        .arg("-f")
        .arg(&config)
        .env("CAPA_LISTEN", format!("127.0.0.1:{port}"))
        .env("CAPA_HUB_A", a)
        .env("CAPA_HUB_B", b)
        .env("CAPA_TOKEN", token)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .context("starting haproxy")?;
    let url = format!("http://127.0.0.1:{port}");
    let http = reqwest::Client::new();
    for _ in 0..200 {
        let health = http
            .get(format!("{url}/api/health"))
            .bearer_auth(token)
            .send()
            .await;
        if health.is_ok_and(|r| r.status().is_success()) {
            return Ok((Owned(child), url));
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    bail!("haproxy did not serve")
}

async fn client(url: &str, token: &str, era: Era) -> anyhow::Result<Client> {
    let config = StreamableHttpClientTransportConfig::with_uri(format!("{url}/mcp"))
        .auth_header(token.to_owned());
    Ok(()
        .serve_with_lifecycle(
            StreamableHttpClientTransport::from_config(config),
            era.lifecycle(),
        )
        .await?)
}

async fn execute(client: &Client, arguments: Value) -> anyhow::Result<Value> {
    let mut params = CallToolRequestParams::new("execute");
    params.arguments = arguments.as_object().cloned();
    let result = client.peer().call_tool(params).await?;
    Ok(result.structured_content.unwrap_or(Value::Null))
}

/// `clients` clients running `return 1 + 1` back to back for [`WINDOW`].
async fn load(
    url: &str,
    token: &str,
    replicas: usize,
    era: Era,
    clients: usize,
) -> anyhow::Result<LoadRow> {
    let mut sessions = Vec::new();
    for _ in 0..clients {
        sessions.push(client(url, token, era).await?);
    }
    let started = Instant::now();
    let results = futures::future::join_all(sessions.iter().map(|session| async move {
        let (mut latencies, mut failed) = (Vec::new(), 0);
        while started.elapsed() < WINDOW {
            let sent = Instant::now();
            match execute(session, json!({ "code": "return 1 + 1" })).await {
                Ok(envelope) if envelope["status"] == "completed" => {
                    latencies.push(sent.elapsed().as_secs_f64() * 1e6);
                }
                _ => failed += 1,
            }
        }
        (latencies, failed)
    }))
    .await;
    let elapsed = started.elapsed().as_secs_f64();
    for session in sessions {
        let _ = session.cancel().await;
    }
    let failed = results.iter().map(|(_, f)| f).sum();
    let latency: Vec<f64> = results.into_iter().flat_map(|(l, _)| l).collect();
    Ok(LoadRow {
        replicas,
        era,
        clients,
        runs_per_second: latency.len() as f64 / elapsed,
        latency: Samples(latency),
        failed,
    })
}

/// A run paused for a person through HAProxy and approved; the replica holding it is killed;
/// ms until the run completes through HAProxy on the other.
async fn failover(a: Replica, b: Replica, store_url: &str) -> anyhow::Result<f64> {
    let (lb, url) = haproxy(&a.host, &b.host, &a.token).await?;
    let asking = client(&url, &a.token, Era::Stateless).await?;
    let paused = execute(
        &asking,
        json!({ "code": "try { return await demo.delete_note({ title: 'x' }); } catch (e) { return e.code; }" }),
    )
    .await?;
    let _ = asking.cancel().await;
    if paused["status"] != "awaiting_approval" {
        bail!("the failover run did not pause: {paused}");
    }
    let run_id = paused["runId"].as_str().context("runId")?.to_owned();
    let store_url = store_url.to_owned();
    let id = run_id.clone();
    // Approved as a person at a terminal would: in the database (`capa hub approve` writes there).
    let owner = tokio::task::spawn_blocking(move || approve(&store_url, &id)).await??;
    let (dead, alive) = if owner == a.pid { (a, b) } else { (b, a) };
    let token = alive.token.clone();
    let started = Instant::now();
    drop(dead.child);
    loop {
        if let Ok(session) = client(&url, &token, Era::Stateless).await {
            let done = execute(&session, json!({ "resume": run_id })).await;
            let _ = session.cancel().await;
            if done.is_ok_and(|d| d["status"] == "completed") {
                break;
            }
        }
        if started.elapsed() > Duration::from_mins(1) {
            bail!("the paused run never completed on the replica left");
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let failover_ms = started.elapsed().as_secs_f64() * 1000.0;
    drop((lb, alive));
    Ok(failover_ms)
}

/// Approves the run's pending input in the database; the pid of the replica that recorded the
/// run.
fn approve(store_url: &str, run_id: &str) -> anyhow::Result<u32> {
    let store = capa_store::Store::from_backend(capa_store_pg::PgStore::connect(store_url)?);
    for input in store.approvals_of_run(run_id)? {
        capa_core::decide_in_store(&store, &input.id, capa_core::Choice::Once, "terminal")?;
    }
    let run = store.run(run_id)?.context("the paused run")?;
    Ok(run.owner.context("the run's owner")?.pid)
}
