//! Shared start-up: configuration files, logging, and an in-process hub.

use std::sync::Arc;

use anyhow::Context;
use capa_config::{ConfigFiles, HubConfig};
use capa_core::{Hub, HubOptions, HubPaths, Redactor};
use capa_secrets::Keychain;
use tracing_subscriber::EnvFilter;

use crate::cli::GlobalArgs;

/// The configuration files in force: `--config FILE`, or the global file plus the project file
/// found from the working directory (or `--project DIR`) up.
pub fn config_files(global: &GlobalArgs, paths: &HubPaths) -> anyhow::Result<ConfigFiles> {
    Ok(ConfigFiles::select(
        global.config.as_deref(),
        global.project.as_deref(),
        &paths.config_dir,
    )?)
}

pub fn load_config(files: &ConfigFiles) -> anyhow::Result<HubConfig> {
    let config =
        capa_config::load(files).map_err(|e| anyhow::anyhow!("invalid configuration:\n{e}"))?;
    for warning in &config.warnings {
        tracing::warn!("{warning}");
    }
    Ok(config)
}

/// Logs to stderr (never stdout, which MCP over stdio owns), through the redactor.
/// `RUST_LOG` overrides the default level.
pub fn init_tracing(redactor: &Arc<Redactor>, default_level: &str) {
    let filter =
        EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new(default_level));
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(redactor.writer(std::io::stderr))
        .with_ansi(false)
        .try_init();
}

/// Starts a hub in this process.
pub async fn start_hub(
    config: HubConfig,
    paths: &HubPaths,
    redactor: Arc<Redactor>,
) -> anyhow::Result<Arc<Hub>> {
    Hub::start(HubOptions {
        config,
        paths: paths.clone(),
        redactor,
        keychain: Keychain::default(),
    })
    .await
    .context("starting the hub")
}
