//! The Capabilities desktop app: hosts the same hub as `capa hub serve` (same data dir,
//! configuration and HTTP endpoint, discovery file for `capa mcp`), and adds a tray, approval
//! popups and a settings window over the hub's web UI. Thin: the hub's logic lives in crates/.

// No console window on Windows release builds.
#![cfg_attr(not(debug_assertions), windows_subsystem = "windows")]

mod commands;
mod fatal;
mod hosted;
mod hub_origin;
mod popups;
mod tray;
mod windows;

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::{Arc, Mutex};

use capa_core::Redactor;
use clap::Parser;
use tauri::{Manager, RunEvent, WindowEvent};
use tracing_subscriber::EnvFilter;

use crate::hosted::{HostOptions, HostedHub};
use crate::hub_origin::HubOrigin;
use crate::popups::Popups;

/// Capabilities: one hub for your MCP servers, in the tray.
#[derive(Debug, Parser)]
#[command(name = "capabilities-desktop", version, about)]
struct Args {
    /// Address the hub listens on (loopback only), as `capa hub serve --http`.
    #[arg(
        long,
        env = "CAPA_HTTP",
        value_name = "ADDR",
        default_value = "127.0.0.1:4477"
    )]
    http: SocketAddr,
    /// Use only this capabilities file (no global file, no project lookup).
    #[arg(long, value_name = "FILE")]
    config: Option<PathBuf>,
    /// Start in the tray without opening the settings window.
    #[arg(long)]
    background: bool,
}

/// What the app keeps: the hub, the popup queue, the tray.
pub struct Desktop {
    pub hosted: HostedHub,
    /// The hub's origin: the only one the windows load and grant the app's commands to.
    pub origin: HubOrigin,
    pub popups: Popups,
    pub tray: Mutex<Option<tray::Tray>>,
}

impl std::fmt::Debug for Desktop {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Desktop")
            .field("hosted", &self.hosted)
            .finish_non_exhaustive()
    }
}

impl Desktop {
    /// Path of the UI's entry for a window of this app: a fresh one-time login link
    /// (`/app/login/<token>`), which starts the window's UI session and lands on `/app/`.
    pub fn login_path(&self) -> String {
        let link = self.hosted.ui.issue_link();
        if link.is_empty() {
            // No randomness for a link: the UI shows its signed-out page.
            "/app/".to_owned()
        } else {
            link
        }
    }
}

fn main() -> ExitCode {
    let args = Args::parse();
    let redactor = Redactor::new();
    let filter =
        EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info,rmcp=warn"));
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(redactor.writer(std::io::stderr))
        .with_ansi(false)
        .try_init();

    // Why start-up failed. Tauri panics when the setup hook returns an error (exit 101, a
    // backtrace), so the hook keeps the reason here, asks the event loop to end, and `main`
    // reports it once the loop is over (fatal.rs).
    let failure: Arc<Mutex<Option<anyhow::Error>>> = Arc::default();
    let setup_failure = failure.clone();
    let background = args.background;

    let built = tauri::Builder::default()
        // First: a second launch hands over to this one (which shows its settings) and exits.
        .plugin(tauri_plugin_single_instance::init(|app, _args, _cwd| {
            if let Err(e) = windows::open_settings(app) {
                tracing::warn!(error = %e, "could not show the settings window");
            }
        }))
        .plugin(tauri_plugin_notification::init())
        .invoke_handler(tauri::generate_handler![
            commands::open_settings,
            commands::open_next_approval,
            commands::pause_approvals,
            commands::state,
            commands::close_window,
            commands::popup_shown,
        ])
        .on_window_event(|window, event| {
            if let WindowEvent::Destroyed = event
                && window.label().starts_with(windows::POPUP_PREFIX)
                && let Some(desktop) = window.app_handle().try_state::<Desktop>()
            {
                desktop.popups.closed(window.label());
            }
        })
        .setup(move |app| {
            let options = HostOptions {
                http: args.http,
                config: args.config.clone(),
                // Packaged (`npm run desktop:build`), the UI ships in the resource dir's `ui/`.
                ui_dir: app.path().resource_dir().ok().map(|dir| dir.join("ui")),
            };
            if let Err(e) = start(app, &options, redactor, background) {
                if let Ok(mut failure) = setup_failure.lock() {
                    *failure = Some(e);
                }
                app.handle().exit(1);
            }
            Ok(())
        })
        .build(tauri::generate_context!());

    let app = match built {
        Ok(app) => app,
        Err(e) => {
            fatal::report(&anyhow::Error::new(e));
            return ExitCode::FAILURE;
        }
    };
    let code = app.run_return(|app, event| match event {
        // Closing the last window keeps the app in the tray; "Quit" exits with a code.
        RunEvent::ExitRequested { api, code, .. } if code.is_none() => api.prevent_exit(),
        RunEvent::Exit => {
            if let Some(desktop) = app.try_state::<Desktop>() {
                eprintln!("capabilities: stopping");
                tauri::async_runtime::block_on(desktop.hosted.shutdown());
            }
        }
        _ => {}
    });
    if let Some(e) = failure.lock().ok().and_then(|mut f| f.take()) {
        fatal::report(&e);
        return ExitCode::FAILURE;
    }
    match u8::try_from(code) {
        Ok(0) => ExitCode::SUCCESS,
        Ok(code) => ExitCode::from(code),
        Err(_) => ExitCode::FAILURE,
    }
}

/// The setup hook's work: the hub, the commands for its origin, the tray, the settings window.
fn start(
    app: &mut tauri::App,
    options: &HostOptions,
    redactor: Arc<Redactor>,
    background: bool,
) -> anyhow::Result<()> {
    let hosted = tauri::async_runtime::block_on(HostedHub::start(options, redactor))?;
    // The commands for the hub's origin, now that its port is known (hub_origin.rs).
    let origin = match HubOrigin::parse(&hosted.base_url)
        .and_then(|origin| origin.grant_ipc(app).map(|()| origin))
    {
        Ok(origin) => origin,
        Err(e) => {
            tauri::async_runtime::block_on(hosted.shutdown());
            return Err(e);
        }
    };
    app.manage(Desktop {
        hosted,
        origin,
        popups: Popups::default(),
        tray: Mutex::new(None),
    });
    let handle = app.handle().clone();
    match tray::build(&handle) {
        Ok(built) => {
            if let Some(desktop) = handle.try_state::<Desktop>()
                && let Ok(mut tray) = desktop.tray.lock()
            {
                *tray = Some(built);
            }
        }
        Err(e) => tracing::warn!(error = %e, "no tray icon on this desktop"),
    }
    popups::watch(handle.clone());
    // Ctrl-C or SIGTERM quits like the tray's "Quit": the hub stops cleanly.
    let quitting = handle.clone();
    tauri::async_runtime::spawn(async move {
        shutdown_signal().await;
        quitting.exit(0);
    });
    if !background {
        windows::open_settings(&handle)?;
    }
    Ok(())
}

async fn shutdown_signal() {
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
