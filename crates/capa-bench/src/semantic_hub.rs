//! The headless hub's resident memory with the search model loaded, against the same hub
//! without the model: `capa hub serve` in code mode with the demo source, after its first
//! `search` (which builds the index and loads the model) and, with the model, once the
//! background pass has embedded every tool and a second `search` has ranked by meaning.

use std::path::Path;
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use rmcp::model::CallToolRequestParams;
use serde_json::json;

use crate::calls::{Client, http_client, wait_for_tool};
use crate::memory::{model_loaded, rss_kib, search_status, wait_model_let_go, wait_ready};
use crate::procs::{self, BenchEnv, ModelDir};

const YAML: &str = "options: { demo: true, toolExposure: code }\n";
/// The same hub with search by meaning off ([`ModelDir::Off`]).
const YAML_OFF: &str = "options: { demo: true, toolExposure: code, search: { semantic: off } }\n";

#[derive(Debug)]
pub(crate) struct HubModelRow {
    pub label: &'static str,
    pub hub_kib: u64,
    /// What `/api/config` said of search when RSS was read.
    pub search: String,
    /// From the first `search` to every tool embedded (with the model).
    pub embedded_after_ms: Option<f64>,
}

async fn search(client: &Client, query: &str) -> anyhow::Result<()> {
    let mut params = CallToolRequestParams::new("search".to_owned());
    params.arguments = json!({ "query": query }).as_object().cloned();
    let result = client.peer().call_tool(params).await?;
    if result.is_error == Some(true) {
        bail!("search failed: {result:?}");
    }
    Ok(())
}

async fn measure(
    env: &BenchEnv,
    label: &'static str,
    model: ModelDir<'_>,
    idle_secs: Option<u64>,
) -> anyhow::Result<HubModelRow> {
    let yaml = if matches!(model, ModelDir::Off) {
        YAML_OFF
    } else {
        YAML
    };
    let hub = procs::hub_with_model(env, yaml, model, idle_secs).await?;
    let pid = hub.pid;
    wait_ready(&hub.url, &hub.token, 1, || {
        (!Path::new(&format!("/proc/{pid}")).exists()).then(|| "hub exited".to_owned())
    })
    .await?;
    let client = http_client(&format!("{}/mcp", hub.url), Some(&hub.token)).await?;
    wait_for_tool(&client, "search").await?;
    let started = Instant::now();
    search(&client, "add two numbers").await?;
    let mut embedded_after_ms = None;
    if matches!(model, ModelDir::At(_)) {
        for _ in 0..600 {
            let status = search_status(&hub.url, &hub.token).await?;
            match status["state"].as_str() {
                Some("on") => break,
                Some("embedding") => {}
                _ => bail!("the hub with the model reports search {status}"),
            }
            // The background pass drops the index when done; a search rebuilds it.
            search(&client, "add two numbers").await?;
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        embedded_after_ms = Some(started.elapsed().as_secs_f64() * 1000.0);
        search(&client, "what time is it").await?;
    }
    // At rest: one second after the hub says its model was let go; else one second after the
    // search, with the model still held (its idle time is 5 minutes).
    if idle_secs.is_some() {
        wait_model_let_go(&hub.url, &hub.token).await?;
    } else {
        tokio::time::sleep(Duration::from_secs(1)).await;
        let loaded = model_loaded(&hub.url, &hub.token).await?;
        if loaded != matches!(model, ModelDir::At(_)) {
            bail!("the hub's model is loaded: {loaded}, one second after its last search");
        }
    }
    let hub_kib = rss_kib(pid)?;
    let status = search_status(&hub.url, &hub.token).await?;
    let _ = client.cancel().await;
    Ok(HubModelRow {
        label,
        hub_kib,
        search: status["state"].as_str().unwrap_or("?").to_owned(),
        embedded_after_ms,
    })
}

pub(crate) async fn hub_model_memory(
    env: &BenchEnv,
    model_dir: &Path,
) -> anyhow::Result<Vec<HubModelRow>> {
    eprintln!("capa-bench: hub memory with and without the search model…");
    let with = measure(
        env,
        "code mode, demo source, model present (`CAPA_MODEL_DIR`)",
        ModelDir::At(model_dir),
        None,
    )
    .await
    .context("the hub with the model")?;
    let without = measure(
        env,
        "code mode, demo source, no model (`options.search.semantic: off`)",
        ModelDir::Off,
        None,
    )
    .await
    .context("the hub without the model")?;
    let resting = measure(
        env,
        "code mode, demo source, model present, let go after 2 s unused (`CAPA_MODEL_IDLE_SECS=2`)",
        ModelDir::At(model_dir),
        Some(procs::MODEL_IDLE_SECS),
    )
    .await
    .context("the hub whose model was let go")?;
    Ok(vec![with, without, resting])
}
