//! The hub this app hosts: the same start-up as `capa hub serve` (configuration files, hub,
//! loopback HTTP server, bearer token, discovery file), in this process, so that `capa mcp` and
//! every client reach the app's hub exactly as they would reach the headless one.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use anyhow::{Context, bail};
use capa_config::ConfigFiles;
use capa_core::{Hub, HubOptions, HubPaths, Redactor};
use capa_secrets::Keychain;
use capa_server::ui::UiAccess;
use capa_server::{HttpServer, ServeError, ServeOptions};

/// Where and with which files the hub runs.
#[derive(Debug, Clone)]
pub struct HostOptions {
    /// Loopback address of the HTTP server (`--http`, `CAPA_HTTP`).
    pub http: SocketAddr,
    /// `--config FILE`: only this capabilities file.
    pub config: Option<PathBuf>,
    /// The web UI's files bundled with the app (its resource dir), when packaged.
    pub ui_dir: Option<PathBuf>,
}

/// The hub and its HTTP server, running in this process.
pub struct HostedHub {
    pub hub: Arc<Hub>,
    /// `http://127.0.0.1:4477`.
    pub base_url: String,
    /// One-time login links to the hub's web UI, for the app's windows.
    pub ui: Arc<UiAccess>,
    server: Mutex<Option<HttpServer>>,
}

impl std::fmt::Debug for HostedHub {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HostedHub")
            .field("base_url", &self.base_url)
            .finish_non_exhaustive()
    }
}

impl HostedHub {
    /// Starts the hub the way `capa hub serve` does. Fails, saying why, when a hub already runs
    /// for this data dir or the address is taken.
    pub async fn start(options: &HostOptions, redactor: Arc<Redactor>) -> anyhow::Result<Self> {
        let paths = HubPaths::from_env();
        if let Some(running) = capa_server::discovery::find(&paths).await {
            let url = running.url;
            bail!(
                "a hub is already running at {url} for this data dir ({}), probably `capa hub serve`; stop it first (the app hosts the hub itself), or set CAPA_DATA_DIR for a second one",
                paths.data_dir.display()
            );
        }
        // Fail before any upstream starts when the port is taken.
        if let Err(e) = std::net::TcpListener::bind(options.http) {
            return Err(port_taken(options.http, &e));
        }
        let files = ConfigFiles::select(options.config.as_deref(), None, &paths.config_dir)?;
        let config = capa_config::load(&files)
            .map_err(|e| anyhow::anyhow!("invalid configuration:\n{e}"))?;
        for warning in &config.warnings {
            tracing::warn!("{warning}");
        }
        let mode = config.exposure.mode;
        let hub = Hub::start(HubOptions {
            config,
            paths: paths.clone(),
            redactor,
            keychain: Keychain::default(),
        })
        .await
        .context("starting the hub")?;
        let token = match capa_server::token::rotate(&paths.token()) {
            Ok(token) => token,
            Err(e) => {
                hub.shutdown().await;
                return Err(anyhow::Error::new(e).context(format!(
                    "creating the access token {}",
                    paths.token().display()
                )));
            }
        };
        let serve = ServeOptions {
            ui_dir: options.ui_dir.clone(),
        };
        let server = match capa_server::serve_with(hub.clone(), options.http, token, serve).await {
            Ok(server) => server,
            Err(e) => {
                hub.shutdown().await;
                return Err(match e {
                    ServeError::Bind { addr, source } => port_taken(addr, &source),
                    other => other.into(),
                });
            }
        };
        let base_url = format!("http://{}", server.addr);
        let ui = server.ui().clone();
        if let Err(e) = server.publish(&paths) {
            server.shutdown().await;
            hub.shutdown().await;
            return Err(anyhow::Error::new(e).context(format!(
                "writing the discovery file {}",
                paths.discovery().display()
            )));
        }
        tracing::info!(url = %server.mcp_url(), %mode, "hub listening");
        eprintln!(
            "capabilities: MCP endpoint {} ({mode} mode; bearer token in {})",
            server.mcp_url(),
            paths.token().display()
        );
        Ok(Self {
            hub,
            base_url,
            ui,
            server: Mutex::new(Some(server)),
        })
    }

    /// Removes the discovery file, stops the HTTP server, then the hub (upstreams, journal).
    pub async fn shutdown(&self) {
        let server = self.server.lock().ok().and_then(|mut s| s.take());
        if let Some(server) = server {
            server.shutdown().await;
            self.hub.shutdown().await;
        }
    }
}

fn port_taken(addr: SocketAddr, error: &std::io::Error) -> anyhow::Error {
    if error.kind() == std::io::ErrorKind::AddrInUse {
        anyhow::anyhow!(
            "{addr} is already in use, probably by a running `capa hub serve`; stop it first (the app hosts the hub itself), or start the app with --http 127.0.0.1:<other port>"
        )
    } else {
        anyhow::anyhow!("cannot listen on {addr}: {error}")
    }
}
