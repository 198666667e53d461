//! A hub in this process: the configuration in force and [`Hub::start`] with the OS keychain,
//! for the hosted hub ([`crate::serve`]) and for one-shot commands ([`crate::client::LocalHub`]).

use std::path::Path;
use std::sync::Arc;

use capa_config::{ConfigError, ConfigFiles, HubConfig, SelectError};
use capa_core::{Hub, HubOptions, HubPaths, Redactor, StartError, StoreAt};

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
    /// The database another backend keeps (`CAPA_STORE`) could not be opened.
    #[error("{0:#}")]
    Store(anyhow::Error),
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

/// Loads the configuration ([`read_config`]), logging its warnings.
pub fn load_config(files: &ConfigFiles, paths: &HubPaths) -> Result<HubConfig, StartHubError> {
    let config = read_config(files, paths)?;
    for warning in &config.warnings {
        tracing::warn!("{warning}");
    }
    Ok(config)
}

/// Reads the configuration. What a found project file brings besides sources of its own
/// applies only as far as the person trusted it (the store of `paths` keeps that; capa-config's
/// project settings).
pub fn read_config(files: &ConfigFiles, paths: &HubPaths) -> Result<HubConfig, StartHubError> {
    let trusted = trusted_project_settings(files, paths);
    capa_config::load(files, trusted.as_deref()).map_err(StartHubError::Invalid)
}

/// The digest of the project settings the person trusted for `files`' project file; the store
/// is opened only when a project file was found (a file named with `--config` is the person's
/// own). A store that cannot be read counts as no trust, so the person's own settings stay.
fn trusted_project_settings(files: &ConfigFiles, paths: &HubPaths) -> Option<String> {
    files.found_project()?;
    match crate::store::open_store(paths) {
        Ok(store) => capa_core::trusted_project_settings(&store, files),
        Err(e) => {
            tracing::warn!(error = %format!("{e:#}"), "could not read which project files you trusted; their settings are held");
            None
        }
    }
}

/// Starts a hub in this process with the OS keychain for its connections' secrets (the
/// encrypted file in the data dir where no keychain answers).
pub async fn start_hub(
    config: HubConfig,
    paths: &HubPaths,
    redactor: Arc<Redactor>,
) -> Result<Arc<Hub>, StartHubError> {
    // SQLite is opened by the hub itself (its errors name the file); another database here.
    let store = match &paths.store {
        StoreAt::DataDir => None,
        StoreAt::Url(url) => {
            for password in url.passwords() {
                redactor.add(&password);
            }
            Some(crate::store::open_store(paths).map_err(StartHubError::Store)?)
        }
    };
    Hub::start(HubOptions {
        config,
        paths: paths.clone(),
        redactor,
        keychain: crate::store::hub_keychain(paths),
        store,
    })
    .await
    .map_err(StartHubError::Hub)
}
