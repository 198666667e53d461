//! Telling a running hub that connections changed (set, removed, signed in from a terminal).

use capa_core::HubPaths;

/// Asks a running hub to reload its connections; a hub that is not running needs nothing.
pub(super) async fn notify_running_hub(paths: &HubPaths) {
    if let Err(e) = capa_host::sources::reload_connections(paths).await {
        let e = anyhow::Error::new(e);
        eprintln!("warning: the running hub did not reload its connections: {e:#}");
    }
}
