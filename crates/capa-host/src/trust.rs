//! A person's trust of a project file, asked at a terminal by the shell (`capa`) before it
//! starts a hub for that file: what waits (capa-core's [`ProjectTrustQuestion`]) and the
//! record of a yes, which a running hub reading the same files is told about.

use anyhow::Context;
use capa_config::{ConfigFiles, HubConfig, ProjectConnections};
use capa_core::{HubPaths, ProjectTrustQuestion};

use crate::client::RemoteHub;
use crate::running::RunningHub;
use crate::store::open_store;

/// What of `config`'s project file waits for the person's trust; `None` when nothing does.
pub fn project_trust_question(
    paths: &HubPaths,
    config: &HubConfig,
) -> anyhow::Result<Option<ProjectTrustQuestion>> {
    if config.project.is_none() && !config.sources.iter().any(|s| s.scope.is_project()) {
        return Ok(None);
    }
    let store = open_store(paths)?;
    Ok(capa_core::project_trust_question(&store, config))
}

/// Records a person's yes to `question` (each source with the connections `grants` names).
/// A running hub that reads `files` restarts the trusted sources; the settings (skills,
/// profiles, options) apply from its next start, which the returned flag says is needed.
pub async fn record_project_trust(
    paths: &HubPaths,
    files: &ConfigFiles,
    question: &ProjectTrustQuestion,
    grants: &[(String, ProjectConnections)],
) -> anyhow::Result<RunningHubTrust> {
    let store = open_store(paths)?;
    capa_core::record_project_trust(&store, question, grants)
        .context("recording the trusted project file")?;
    let running = match RunningHub::find(paths).await {
        Some(running) if running.uses_files(files).await => running,
        _ => return Ok(RunningHubTrust::NoneRunning),
    };
    let hub = RemoteHub::new(running);
    // A source that replaces a global one while the settings were held is not served by that
    // hub: under its id the hub serves the person's own, which must not be restarted for it.
    let held = |id: &str| {
        question
            .settings
            .as_ref()
            .is_some_and(|s| s.replacing.iter().any(|r| r.id == id))
    };
    for untrusted in question.sources.iter().filter(|u| !held(&u.source.id)) {
        if let Err(e) = hub.restart_source(&untrusted.source.id).await {
            tracing::debug!(error = %e, source = %untrusted.source.id, "the running hub did not restart the source");
        }
    }
    Ok(if question.settings.is_some() {
        RunningHubTrust::RestartForSettings
    } else {
        RunningHubTrust::SourcesStarted
    })
}

/// What a running hub that reads the trusted file does with the trust.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RunningHubTrust {
    /// No running hub reads the file: the next hub started for it applies all of it.
    NoneRunning,
    /// The running hub started the trusted sources.
    SourcesStarted,
    /// The running hub started the trusted sources; the settings apply once it restarts.
    RestartForSettings,
}
