//! `execute` through the MCP front with the official clients: the TypeScript SDK 1.x and 2.x and
//! the Python SDK 2.x, each a driver in tests/bench/ that runs its own session and prints its
//! samples as JSON. In each session the driver alternates one baseline request (`ping`, or
//! `server/discover` under 2026-07-28, which removed `ping`) with one `execute` of `return 1`.
//!
//! Over stdio each driver starts `capa mcp` itself, all on one data dir whose first session is
//! measured apart (the hub's one-time start work happens in it); over HTTP all drivers talk to
//! one `capa hub serve`, token from its data dir.

use std::process::Stdio;

use anyhow::{Context, bail};
use serde_json::Value;
use tokio::process::Command;

use crate::calls::Samples;
use crate::procs::{self, BenchEnv};

/// Rounds of (baseline, `execute`) in each session.
const ROUNDS: usize = 200;
/// Awaited `demo.add` calls in a run, in the TS SDK 1.x sessions (issue 42's row measured from a
/// client: a run of calls minus an empty run, per call).
const GUEST_CALLS: usize = 200;
/// The hub the clients talk to: code mode with the demo source only, so no upstream start-up
/// shows in a session.
const YAML: &str = "options: { demo: true, toolExposure: code }\n";

/// Which official client a driver runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Sdk {
    /// `@modelcontextprotocol/sdk` 1.x.
    TsV1,
    /// `@modelcontextprotocol/client` 2.x.
    TsV2,
    /// Python `mcp` 2.x.
    Python,
}

impl Sdk {
    pub(crate) fn label(self) -> &'static str {
        match self {
            Self::TsV1 => "TS SDK 1.x (`@modelcontextprotocol/sdk` 1.32.2)",
            Self::TsV2 => "TS SDK 2.x (`@modelcontextprotocol/client` 2.4.0)",
            Self::Python => "Python SDK (`mcp` 2.3.0)",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Front {
    Stdio,
    Http,
}

impl Front {
    pub(crate) fn label(self) -> &'static str {
        match self {
            Self::Stdio => "stdio",
            Self::Http => "HTTP",
        }
    }
    fn arg(self) -> &'static str {
        match self {
            Self::Stdio => "stdio",
            Self::Http => "http",
        }
    }
}

/// One client session's samples, in µs.
#[derive(Debug)]
pub(crate) struct ClientRow {
    pub sdk: Sdk,
    pub front: Front,
    /// The protocol version the session negotiated (for TS 1.x: the one it asks for).
    pub protocol: String,
    /// The baseline request's method: `ping` or `server/discover`.
    pub baseline: String,
    pub ping: Samples,
    pub execute: Samples,
    /// One awaited `demo.add` from guest code, µs: (p50 of the runs of [`GUEST_CALLS`] calls −
    /// p50 of the empty runs) / [`GUEST_CALLS`]; TS SDK 1.x sessions only.
    pub guest_call_us: Option<f64>,
}

const SESSIONS: [(Sdk, Front); 6] = [
    (Sdk::TsV1, Front::Stdio),
    (Sdk::TsV2, Front::Stdio),
    (Sdk::Python, Front::Stdio),
    (Sdk::TsV1, Front::Http),
    (Sdk::TsV2, Front::Http),
    (Sdk::Python, Front::Http),
];

/// The clients' sessions, and the first session of a new data dir apart.
#[derive(Debug)]
pub(crate) struct ClientRows {
    pub rows: Vec<ClientRow>,
    /// TS SDK 1.x over stdio in a data dir nobody used: the hub `capa mcp` starts does its
    /// one-time work (a new database, the search index) during that session.
    pub first_session: ClientRow,
}

pub(crate) async fn measure(env: &BenchEnv) -> anyhow::Result<ClientRows> {
    let hub = procs::hub(env, YAML).await?;
    let url = format!("{}/mcp", hub.url);
    // One data dir for every stdio session, as a person's: its first session is measured
    // apart, and the others find the hub's one-time work done.
    let dir = tempfile::tempdir()?;
    let config = procs::write_config(dir.path(), YAML)?;
    let stdio = |sdk: Sdk| {
        let mut command = driver(env, sdk, Front::Stdio);
        command
            .arg(&env.capa)
            .arg("--config")
            .arg(&config)
            .arg("mcp")
            .env("CAPA_DATA_DIR", dir.path().join("data"))
            .env("CAPA_CONFIG_DIR", dir.path().join("config"))
            .env("RUST_LOG", "warn");
        command
    };
    eprintln!(
        "capa-bench: execute from the TS SDK 1.x over stdio, first session of a new data dir…"
    );
    let first_session = run_driver(stdio(Sdk::TsV1), Sdk::TsV1, Front::Stdio).await?;
    let mut rows = Vec::new();
    for (sdk, front) in SESSIONS {
        eprintln!(
            "capa-bench: execute from {} over {}…",
            sdk.label(),
            front.label()
        );
        let command = match front {
            Front::Stdio => stdio(sdk),
            Front::Http => {
                let mut command = driver(env, sdk, front);
                command.arg(&url).env("CAPA_BENCH_TOKEN", &hub.token);
                command
            }
        };
        rows.push(run_driver(command, sdk, front).await?);
    }
    Ok(ClientRows {
        rows,
        first_session,
    })
}

/// `node ts_client.mjs v1|v2 <front> <rounds>` or `python py_client.py <front> <rounds>`; the
/// target follows.
fn driver(env: &BenchEnv, sdk: Sdk, front: Front) -> Command {
    let mut command = match sdk {
        Sdk::TsV1 | Sdk::TsV2 => {
            let mut c = Command::new("node");
            c.arg(&env.ts_client)
                .arg(if sdk == Sdk::TsV1 { "v1" } else { "v2" });
            if sdk == Sdk::TsV1 {
                c.env("CAPA_BENCH_GUEST_CALLS", GUEST_CALLS.to_string());
            }
            c
        }
        Sdk::Python => {
            let mut c = Command::new(&env.python);
            c.arg(&env.py_client);
            c
        }
    };
    command.arg(front.arg()).arg(ROUNDS.to_string());
    command
}

async fn run_driver(mut command: Command, sdk: Sdk, front: Front) -> anyhow::Result<ClientRow> {
    let value = json_from(&mut command, &format!("{sdk:?} over {front:?}")).await?;
    Ok(ClientRow {
        sdk,
        front,
        protocol: text(&value, "protocol")?,
        baseline: text(&value, "baseline")?,
        ping: samples(&value, "ping")?,
        execute: samples(&value, "execute")?,
        guest_call_us: guest_call_us(&value)?,
    })
}

/// The driver's `guest` rounds as µs a call, if it ran them.
fn guest_call_us(value: &Value) -> anyhow::Result<Option<f64>> {
    let guest = &value["guest"];
    if guest.is_null() {
        return Ok(None);
    }
    let calls = guest["calls"].as_f64().context("guest.calls")?;
    let (with_calls, empty) = (samples(guest, "withCalls")?, samples(guest, "empty")?);
    if calls < 1.0 || with_calls.0.is_empty() || empty.0.is_empty() {
        bail!("the driver's guest rounds are empty: {guest}");
    }
    Ok(Some(
        (with_calls.percentile(0.5) - empty.percentile(0.5)) / calls,
    ))
}

/// Runs a driver to its end and parses the JSON it prints; its stderr is shown on failure.
pub(crate) async fn json_from(command: &mut Command, what: &str) -> anyhow::Result<Value> {
    let output = command
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .output()
        .await
        .with_context(|| format!("starting the driver for {what}"))?;
    if !output.status.success() {
        bail!(
            "the driver for {what} failed ({}): {}",
            output.status,
            String::from_utf8_lossy(&output.stderr)
        );
    }
    serde_json::from_slice(&output.stdout).with_context(|| {
        format!(
            "the driver for {what} printed no JSON: {}",
            String::from_utf8_lossy(&output.stdout)
        )
    })
}

fn text(value: &Value, key: &str) -> anyhow::Result<String> {
    Ok(value[key].as_str().context(key.to_owned())?.to_owned())
}

pub(crate) fn samples(value: &Value, key: &str) -> anyhow::Result<Samples> {
    let list = value[key].as_array().with_context(|| format!("{key}[]"))?;
    Ok(Samples(list.iter().filter_map(Value::as_f64).collect()))
}
