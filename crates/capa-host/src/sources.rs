//! Sources a person confirms at a terminal, and reloads a running hub is told about.

use anyhow::Context;
use capa_config::{ProjectConnections, SourceConfig};
use capa_core::{Hub, HubPaths};

use crate::client::RemoteHub;
use crate::running::{ClientError, RunningHub};
use crate::store::open_store;

/// Records a person's confirmation of `source` as its file says now (for a project file's
/// source: trust, and whether it may use the connections of the global source it replaces);
/// a running hub restarts it (and so starts it).
pub async fn confirm_source(
    paths: &HubPaths,
    source: &SourceConfig,
    connections: ProjectConnections,
) -> anyhow::Result<()> {
    let store = open_store(paths)?;
    Hub::record_confirmation(&store, source, connections)?;
    if let Some(running) = RunningHub::find(paths).await {
        RemoteHub::new(running)
            .restart_source(&source.id)
            .await
            .context("restarting the source in the running hub")?;
    }
    Ok(())
}

/// Tells a running hub to re-read the connections (none running: nothing to do).
pub async fn reload_connections(paths: &HubPaths) -> Result<(), ClientError> {
    if let Some(running) = RunningHub::find(paths).await {
        RemoteHub::new(running).reload_connections().await?;
    }
    Ok(())
}
