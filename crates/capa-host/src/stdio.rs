//! `capa mcp`: MCP over this process's stdin and stdout, forwarded to the running hub that reads
//! the same capabilities files, or served by a hub started in this process.

use std::sync::Arc;

use capa_config::ConfigFiles;
use capa_core::{Hub, HubPaths};
use capa_server::bridge::{HubCheck, RemoteSurface};
use capa_server::{McpFront, Surface};

use crate::running::matching_hub;

/// The environment variable that carries a paired client's key to `capa mcp` (written into the
/// client's own configuration when a person pairs it: docs/security.md, "Who may say yes").
pub(crate) const CLIENT_KEY_ENV: &str = "CAPA_CLIENT_KEY";

/// The client key this process was started with, if any.
fn client_key() -> Option<String> {
    std::env::var(CLIENT_KEY_ENV)
        .ok()
        .map(|k| k.trim().to_owned())
        .filter(|k| !k.is_empty())
}

/// Serves MCP on stdio until the client closes it, as the hub's own profile or the named
/// `profile` (docs/profiles.md). `start_local` starts the hub in this process when no running
/// hub reads `files` (or the one found cannot be reached); that hub is stopped when the client
/// is done.
pub async fn serve_stdio(
    paths: &HubPaths,
    files: &ConfigFiles,
    profile: Option<&str>,
    start_local: impl AsyncFnOnce() -> anyhow::Result<Arc<Hub>>,
) -> anyhow::Result<()> {
    if let Some(running) = matching_hub(paths, files).await {
        let check = HubCheck {
            paths: paths.clone(),
            found: running.found.clone(),
        };
        let url = match profile {
            Some(name) => format!("{}/{name}", running.mcp_url()),
            None => running.mcp_url(),
        };
        // A paired client's key stands in for the hub's token, so the hub knows which client
        // speaks; without one the client is unpaired (its forms do not count).
        let key = client_key();
        let bearer = key.as_deref().unwrap_or(&running.token);
        match RemoteSurface::connect(&url, bearer, check).await {
            Ok(remote) => {
                tracing::info!(url = %url, "forwarding MCP over stdio to the running hub");
                let surface: Arc<dyn Surface> = Arc::new(remote);
                return capa_server::serve_stdio(McpFront::new(surface))
                    .await
                    .map_err(anyhow::Error::msg);
            }
            Err(e) if profile.is_some() => {
                tracing::warn!(error = %e, url = %url, "the running hub does not serve this profile (it may have started before the profile was added: restart it); serving from this process");
            }
            Err(e) if key.is_some() => {
                tracing::warn!(error = %e, "the running hub did not take this client's key ({CLIENT_KEY_ENV}); pair the client again in the app's Clients page or with `capa clients pair`. Serving from this process");
            }
            Err(e) => {
                tracing::warn!(error = %e, "running hub unreachable; serving from this process");
            }
        }
    }
    let hub = start_local().await?;
    let profile = match profile {
        Some(name) => {
            let Some(found) = hub.profile(name) else {
                let names: Vec<String> =
                    hub.profiles().iter().map(|p| p.name().to_owned()).collect();
                hub.shutdown().await;
                anyhow::bail!(capa_config::no_such_profile(
                    name,
                    names.iter().map(String::as_str)
                ));
            };
            Some(found)
        }
        None => None,
    };
    hub.prewarm_sandboxes();
    // The first `tools/list` waits for sources still starting (Hub::startup_done), so the
    // client sees every source without delaying its handshake.
    let surface: Arc<dyn Surface> = capa_server::surface_for_profile(hub.clone(), profile);
    let pairing = client_key().and_then(|key| {
        let found = hub.pairings().identify(&key);
        if found.is_none() {
            tracing::warn!("{CLIENT_KEY_ENV} is not the key of a client paired with this hub; its approval forms will not count (pair it in the app's Clients page or with `capa clients pair`)");
        }
        found
    });
    let served = capa_server::serve_stdio(McpFront::new(surface).with_pairing(pairing)).await;
    hub.shutdown().await;
    served.map_err(anyhow::Error::msg)
}
