//! A hub in this process: the configuration in force and [`Hub::start`] with the OS keychain,
//! for the hosted hub ([`crate::serve`]) and for one-shot commands ([`crate::client::LocalHub`]).

use std::path::Path;
use std::sync::Arc;

use capa_config::{ConfigError, ConfigFiles, HubConfig, SelectError};
use capa_core::{Hub, HubOptions, HubPaths, Redactor, StartError};
use capa_secrets::Keychain;

/// Why the configuration could not be read or the hub did not start.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum StartHubError {
    /// `--config` or `--project` named something that cannot be used.
    #[error(transparent)]
    Files(#[from] SelectError),
    /// A capabilities file does not load; the text names the file and line.
    #[error("invalid configuration:\n{0}")]
    Invalid(ConfigError),
    /// The hub itself did not start (data dir, database, …).
    #[error("starting the hub")]
    Hub(#[source] StartError),
}

/// The configuration files in force: `config` alone, or the global file plus the project file
/// found from `project` (else the working directory) up.
pub fn config_files(
    config: Option<&Path>,
    project: Option<&Path>,
    paths: &HubPaths,
) -> Result<ConfigFiles, StartHubError> {
    Ok(ConfigFiles::select(config, project, &paths.config_dir)?)
}

/// Loads the configuration, logging its warnings.
pub fn load_config(files: &ConfigFiles) -> Result<HubConfig, StartHubError> {
    let config = capa_config::load(files).map_err(StartHubError::Invalid)?;
    for warning in &config.warnings {
        tracing::warn!("{warning}");
    }
    Ok(config)
}

/// Starts a hub in this process with the OS keychain for its connections' secrets.
pub async fn start_hub(
    config: HubConfig,
    paths: &HubPaths,
    redactor: Arc<Redactor>,
) -> Result<Arc<Hub>, StartHubError> {
    Hub::start(HubOptions {
        config,
        paths: paths.clone(),
        redactor,
        keychain: Keychain::default(),
    })
    .await
    .map_err(StartHubError::Hub)
}
