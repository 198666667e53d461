//! The one start-up of a hosted hub, shared by `capa hub serve` and the desktop app: the
//! running-hub check, the configuration files, the hub, the loopback HTTP server, the bearer
//! token and the discovery file, so that `capa mcp` and every client reach either shell's hub
//! the same way.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use capa_config::{ConfigFiles, ExposureMode};
use capa_core::{Hub, HubPaths, Redactor};
use capa_server::ui::UiAccess;
use capa_server::{HttpServer, ServeError};

use crate::start::{StartHubError, load_config, start_hub};

/// What to host, and where.
#[derive(Debug, Clone)]
pub struct HostOptions {
    /// The data and configuration dirs (`HubPaths::from_env`).
    pub paths: HubPaths,
    /// Loopback address of the HTTP server (`--http`, `CAPA_HTTP`).
    pub http: SocketAddr,
    /// `--config FILE`: only this capabilities file.
    pub config: Option<PathBuf>,
    /// `--project DIR`: where the project file is looked for (else the working directory).
    pub project: Option<PathBuf>,
    /// The web UI's built files, when the caller knows them (the app's bundled resources).
    pub ui_dir: Option<PathBuf>,
    /// Try the address before any upstream starts, so that a taken port fails at once (the
    /// app); otherwise the server's own bind reports it after the hub started.
    pub check_port_first: bool,
    /// A team hub's sign-in: only the provider's access tokens open it (docs/team.md).
    pub sign_in: Option<capa_signin::Settings>,
}

/// Why a hub could not be hosted. Each shell words the advice for its own person.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum HostError {
    /// Sign-in could not be set up: a setting is not a URL, or the provider could not be read.
    #[error(
        "{0}; check --sign-in-issuer (the provider's issuer URL, as its tokens name it) and --resource (the hub's URL as clients reach it)"
    )]
    SignIn(#[from] capa_signin::SetupError),
    /// A hub already serves this data dir (it proved itself through its discovery file).
    #[error("a hub is already running at {url} for this data dir ({}), process {pid}", data_dir.display())]
    AlreadyRunning {
        url: String,
        data_dir: PathBuf,
        pid: u32,
    },
    /// The address could not be bound before start-up ([`HostOptions::check_port_first`]).
    #[error("cannot listen on {addr}: {source}")]
    Bind {
        addr: SocketAddr,
        #[source]
        source: std::io::Error,
    },
    /// The configuration files could not be chosen or loaded, or the hub did not start.
    #[error(transparent)]
    Start(#[from] StartHubError),
    /// The bearer token file could not be written.
    #[error("creating the access token {}", path.display())]
    Token {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// The HTTP server did not start.
    #[error(transparent)]
    Serve(#[from] ServeError),
    /// The discovery file could not be written.
    #[error("writing the discovery file {}", path.display())]
    Publish {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

/// The hub and its HTTP server, running in this process until [`Hosted::shutdown`].
pub struct Hosted {
    pub hub: Arc<Hub>,
    /// `http://127.0.0.1:4477`.
    pub base_url: String,
    /// `http://127.0.0.1:4477/mcp`.
    pub mcp_url: String,
    /// Where the bearer token is.
    pub token_file: PathBuf,
    /// The tool exposure in force, and what decided it.
    pub mode: ExposureMode,
    pub decided_by: String,
    /// One-time login links to the hub's web UI, for the app's windows.
    pub ui: Arc<UiAccess>,
    server: Mutex<Option<HttpServer>>,
}

impl std::fmt::Debug for Hosted {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Hosted")
            .field("base_url", &self.base_url)
            .finish_non_exhaustive()
    }
}

impl Hosted {
    /// The capabilities files the hub reads.
    pub fn files(&self) -> Vec<PathBuf> {
        self.hub.config().files.clone()
    }

    /// Removes the discovery file, stops the HTTP server, then the hub (upstreams, journal).
    /// A second call does nothing.
    pub async fn shutdown(&self) {
        let server = self.server.lock().ok().and_then(|mut s| s.take());
        if let Some(server) = server {
            server.shutdown().await;
            self.hub.shutdown().await;
        }
    }
}

/// Starts the hub, its HTTP server, the token and the discovery file. Fails, saying why, when a
/// hub already runs for the data dir, the configuration is invalid or the address is taken;
/// whatever started is stopped again before it returns an error.
pub async fn serve(options: HostOptions, redactor: Arc<Redactor>) -> Result<Hosted, HostError> {
    let paths = options.paths;
    if let Some(running) = capa_server::discovery::find(&paths).await {
        return Err(HostError::AlreadyRunning {
            url: running.url,
            data_dir: paths.data_dir.clone(),
            pid: running.pid,
        });
    }
    if options.check_port_first
        && let Err(source) = std::net::TcpListener::bind(options.http)
    {
        return Err(HostError::Bind {
            addr: options.http,
            source,
        });
    }
    // The provider is read before anything starts: a hub that cannot check tokens serves no one.
    let sign_in = match options.sign_in {
        Some(settings) => Some(capa_signin::SignIn::discover(settings).await?),
        None => None,
    };
    let files = ConfigFiles::select(
        options.config.as_deref(),
        options.project.as_deref(),
        &paths.config_dir,
    )
    .map_err(StartHubError::from)?;
    let config = load_config(&files, &paths)?;
    let decided_by = config.exposure.decided_by.clone();
    let mode = config.exposure.mode;
    let hub = start_hub(config, &paths, redactor).await?;
    hub.prewarm_sandboxes();
    // A team hub's replicas accept one token, kept in their database; a person's hub makes a
    // new one at every start.
    let token = match hub.shared_token() {
        Some(shared) => {
            capa_core::write_private_file(&paths.token(), shared.as_bytes()).map(|()| shared)
        }
        None => capa_server::token::rotate(&paths.token()),
    };
    let token = match token {
        Ok(token) => token,
        Err(source) => {
            hub.shutdown().await;
            return Err(HostError::Token {
                path: paths.token(),
                source,
            });
        }
    };
    let serve = capa_server::ServeOptions {
        ui_dir: options.ui_dir,
        sign_in,
    };
    let server = match capa_server::serve_with(hub.clone(), options.http, token, serve).await {
        Ok(server) => server,
        Err(e) => {
            hub.shutdown().await;
            return Err(e.into());
        }
    };
    if let Err(source) = server.publish(&paths) {
        server.shutdown().await;
        hub.shutdown().await;
        return Err(HostError::Publish {
            path: paths.discovery(),
            source,
        });
    }
    tracing::info!(url = %server.mcp_url(), token_file = %paths.token().display(), %mode, %decided_by, "hub listening");
    Ok(Hosted {
        hub,
        base_url: server.base_url(),
        mcp_url: server.mcp_url(),
        token_file: paths.token(),
        mode,
        decided_by,
        ui: server.ui().clone(),
        server: Mutex::new(Some(server)),
    })
}

/// Waits for Ctrl-C or (on Unix) SIGTERM: the shells stop their hub cleanly on either.
pub async fn shutdown_signal() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        if let Ok(mut term) = signal(SignalKind::terminate()) {
            tokio::select! {
                _ = tokio::signal::ctrl_c() => {}
                _ = term.recv() => {}
            }
            return;
        }
    }
    let _ = tokio::signal::ctrl_c().await;
}
