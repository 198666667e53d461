//! Overhead of one `tools/call` through the hub against the same upstream called directly.

use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use rmcp::model::{CallToolRequestParams, ProtocolVersion};
use rmcp::service::{ClientLifecycleMode, ClientServiceExt, RoleClient, RunningService};
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::transport::{StreamableHttpClientTransport, TokioChildProcess};
use tokio::process::Command;

use crate::procs::{self, BenchEnv};

#[derive(Debug, Clone, Copy)]
pub(crate) enum Transport {
    Stdio,
    Http,
}

/// Latencies of one side, in microseconds.
#[derive(Debug, Clone)]
pub(crate) struct Samples(pub Vec<f64>);

impl Samples {
    #[expect(
        clippy::cast_possible_truncation,
        clippy::cast_sign_loss,
        reason = "the index is rounded and within 0..len for p in 0..=1"
    )]
    pub(crate) fn percentile(&self, p: f64) -> f64 {
        let mut sorted = self.0.clone();
        sorted.sort_by(f64::total_cmp);
        let index = ((sorted.len() as f64 - 1.0) * p).round() as usize;
        sorted.get(index).copied().unwrap_or(f64::NAN)
    }
}

/// One row of the table.
#[derive(Debug)]
pub(crate) struct OverheadRow {
    pub transport: Transport,
    pub direct: Samples,
    pub hub: Samples,
}

pub(crate) type Client = RunningService<RoleClient, ()>;

fn lifecycle() -> ClientLifecycleMode {
    ClientLifecycleMode::Auto {
        preferred_versions: vec![ProtocolVersion::V_2026_07_28],
        legacy_version: None,
    }
}

pub(crate) async fn stdio_client(mut command: Command) -> anyhow::Result<Client> {
    command.stderr(std::process::Stdio::null());
    let transport = TokioChildProcess::new(command)?;
    Ok(().serve_with_lifecycle(transport, lifecycle()).await?)
}

pub(crate) async fn http_client(url: &str, token: Option<&str>) -> anyhow::Result<Client> {
    let mut config = StreamableHttpClientTransportConfig::with_uri(url.to_owned());
    if let Some(token) = token {
        config = config.auth_header(token.to_owned());
    }
    Ok(()
        .serve_with_lifecycle(
            StreamableHttpClientTransport::from_config(config),
            lifecycle(),
        )
        .await?)
}

async fn call_once(client: &Client, tool: &str) -> anyhow::Result<Duration> {
    let mut params = CallToolRequestParams::new(tool.to_owned());
    params.arguments = serde_json::json!({"message": "benchmark"})
        .as_object()
        .cloned();
    let started = Instant::now();
    let result = client
        .peer()
        .call_tool(params)
        .await
        .with_context(|| format!("calling {tool}"))?;
    let elapsed = started.elapsed();
    if result.is_error == Some(true) {
        bail!("{tool} returned an error: {result:?}");
    }
    Ok(elapsed)
}

/// Waits until the hub lists `tool` (its upstream connected).
pub(crate) async fn wait_for_tool(client: &Client, tool: &str) -> anyhow::Result<()> {
    for _ in 0..200 {
        let tools = client.peer().list_all_tools().await?;
        if tools.iter().any(|t| t.name == tool) {
            return Ok(());
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    bail!("the hub never listed {tool}")
}

pub(crate) async fn overhead(
    env: &BenchEnv,
    transport: Transport,
    per_round: usize,
) -> anyhow::Result<OverheadRow> {
    let dir = tempfile::tempdir()?;
    let (direct, hub, _keep) = match transport {
        Transport::Stdio => {
            let mut direct = Command::new("node");
            direct.arg(&env.everything_js).arg("stdio");
            let yaml = format!(
                "options: {{ demo: false }}\nservers:\n  - id: everything\n    type: mcp\n    def: {{ command: node, args: [\"{}\", stdio] }}\n",
                env.everything_js.display()
            );
            let via_hub = procs::capa_mcp(env, dir.path(), &yaml)?;
            (
                stdio_client(direct).await?,
                stdio_client(via_hub).await?,
                None,
            )
        }
        Transport::Http => {
            let (server, url) = procs::everything_http(env).await?;
            let yaml = format!(
                "options: {{ demo: false }}\nservers:\n  - id: everything\n    type: mcp\n    def: {{ url: \"{url}\" }}\n"
            );
            let hub = procs::hub(env, &yaml).await?;
            let direct = http_client(&url, None).await?;
            let via_hub = http_client(&format!("{}/mcp", hub.url), Some(&hub.token)).await?;
            (direct, via_hub, Some((server, hub)))
        }
    };
    wait_for_tool(&hub, "everything.echo").await?;
    for _ in 0..30 {
        call_once(&direct, "echo").await?;
        call_once(&hub, "everything.echo").await?;
    }
    let mut direct_samples = Vec::new();
    let mut hub_samples = Vec::new();
    for _ in 0..6 {
        for _ in 0..per_round {
            direct_samples.push(call_once(&direct, "echo").await?.as_secs_f64() * 1e6);
        }
        for _ in 0..per_round {
            hub_samples.push(call_once(&hub, "everything.echo").await?.as_secs_f64() * 1e6);
        }
    }
    let _ = direct.cancel().await;
    let _ = hub.cancel().await;
    Ok(OverheadRow {
        transport,
        direct: Samples(direct_samples),
        hub: Samples(hub_samples),
    })
}
