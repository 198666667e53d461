//! `capa mcp`: MCP over stdio, forwarded to the running hub or served by a hub in this process.

use std::io::IsTerminal;
use std::process::ExitCode;
use std::sync::Arc;

use capa_core::{HubPaths, Redactor};
use capa_server::bridge::RemoteSurface;
use capa_server::{McpFront, Surface};

use crate::cli::GlobalArgs;
use crate::setup;

pub async fn run(
    global: &GlobalArgs,
    paths: &HubPaths,
    redactor: Arc<Redactor>,
) -> anyhow::Result<ExitCode> {
    let files = setup::config_files(global, paths)?;
    if let Some(running) = capa_host::matching_hub(paths, &files).await {
        let check = capa_server::bridge::HubCheck {
            paths: paths.clone(),
            found: running.found.clone(),
        };
        match RemoteSurface::connect(&running.mcp_url(), &running.token, check).await {
            Ok(remote) => {
                tracing::info!(url = %running.mcp_url(), "forwarding MCP over stdio to the running hub");
                let surface: Arc<dyn Surface> = Arc::new(remote);
                capa_server::serve_stdio(McpFront::new(surface))
                    .await
                    .map_err(anyhow::Error::msg)?;
                return Ok(ExitCode::SUCCESS);
            }
            Err(e) => {
                tracing::warn!(error = %e, "running hub unreachable; serving from this process")
            }
        }
    }
    let config = setup::load_config(&files)?;
    // A project file's sources wait for the person's trust. Only a person running `capa mcp`
    // at a terminal is asked; a client that runs it (stdin and stdout are its pipes) is served
    // them as `needs_confirmation`, whose reason names `capa sources confirm` and the app.
    let person = crate::terminal::interactive() && std::io::stdout().is_terminal();
    let hub = setup::start_hub_asking(config, paths, redactor, person).await?;
    // The first `tools/list` waits for sources still starting (Hub::startup_done), so the
    // client sees every source without delaying its handshake.
    let surface: Arc<dyn Surface> = capa_server::surface_for(hub.clone());
    let served = capa_server::serve_stdio(McpFront::new(surface)).await;
    hub.shutdown().await;
    served.map_err(anyhow::Error::msg)?;
    Ok(ExitCode::SUCCESS)
}
