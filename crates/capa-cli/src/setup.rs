//! Shared start-up: configuration files and an in-process hub (capa-host's). The question to
//! the person at this terminal about a project file is [`crate::trust_prompt`]'s.

use std::sync::Arc;

use capa_config::{ConfigFiles, HubConfig};
use capa_core::{Hub, HubPaths, Redactor};
use capa_host::OpenHub;

use crate::cli::GlobalArgs;

/// The configuration files in force: `--config FILE`, or the global file plus the project file
/// found from the working directory (or `--project DIR`) up.
pub(crate) fn config_files(global: &GlobalArgs, paths: &HubPaths) -> anyhow::Result<ConfigFiles> {
    Ok(capa_host::config_files(
        global.config.as_deref(),
        global.project.as_deref(),
        paths,
    )?)
}

/// The configuration of `files`, with a found project file's settings as far as the person
/// trusted them ([`capa_host::load_config`]).
pub(crate) fn load_config(files: &ConfigFiles, paths: &HubPaths) -> anyhow::Result<HubConfig> {
    Ok(capa_host::load_config(files, paths)?)
}

/// Refuses a profile `files` do not declare, naming those they do.
pub(crate) fn check_profile(
    files: &ConfigFiles,
    paths: &HubPaths,
    name: &str,
) -> anyhow::Result<()> {
    let config = load_config(files, paths)?;
    if config.profiles.contains_key(name) {
        return Ok(());
    }
    anyhow::bail!(capa_config::no_such_profile(
        name,
        config.profiles.keys().map(String::as_str)
    ))
}

/// Source `source` of `config`, or an error that lists the sources it has.
pub(crate) fn configured_source<'a>(
    config: &'a HubConfig,
    source: &str,
) -> anyhow::Result<&'a capa_config::SourceConfig> {
    config
        .sources
        .iter()
        .find(|s| s.id == source)
        .ok_or_else(|| {
            let known: Vec<&str> = config.sources.iter().map(|s| s.id.as_str()).collect();
            anyhow::anyhow!(
                "no source `{source}` in the configuration{}",
                if known.is_empty() {
                    String::from(" (it declares no sources)")
                } else {
                    format!("; known sources: {}", known.join(", "))
                }
            )
        })
}

/// The running hub that reads the same files, or a hub started here (sources connected or
/// failed before it returns). At an interactive terminal, a project file that waits for the
/// person's trust is asked about first ([`crate::trust_prompt::ask_project_trust`]).
pub(crate) async fn open_hub(
    global: &GlobalArgs,
    paths: &HubPaths,
    redactor: Arc<Redactor>,
) -> anyhow::Result<OpenHub> {
    let files = config_files(global, paths)?;
    if crate::terminal::interactive() {
        crate::trust_prompt::ask_project_trust(&files, paths).await?;
    }
    if let Some(running) = capa_host::matching_hub(paths, &files).await {
        return Ok(OpenHub::remote(running));
    }
    let config = load_config(&files, paths)?;
    let hub = start_hub(config, paths, redactor).await?;
    hub.startup_done().await;
    Ok(OpenHub::local(hub))
}

/// Starts a hub in this process with `config`, as it is.
pub(crate) async fn start_hub(
    config: HubConfig,
    paths: &HubPaths,
    redactor: Arc<Redactor>,
) -> anyhow::Result<Arc<Hub>> {
    Ok(capa_host::start_hub(config, paths, redactor).await?)
}
