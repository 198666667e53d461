//! The Capabilities desktop app: hosts the same hub as `capa hub serve` (same data dir,
//! configuration and HTTP endpoint, discovery file for `capa mcp`), and adds a tray, approval
//! popups and a settings window over the hub's web UI. Thin: the hub's logic lives in crates/.
//! It is also the `capa` command line ([`capa_install::running::runs_as_cli`]), so the package carries the hub's code
//! once: `/usr/bin/capa` and `/usr/bin/capabilities` run this binary under those names.

// No console window on Windows release builds.
#![cfg_attr(not(debug_assertions), windows_subsystem = "windows")]

#[cfg(target_os = "linux")]
mod code_pages;
mod commands;
#[cfg(windows)]
mod console;
mod desktop;
mod fatal;
mod hub_origin;
mod labels;
mod notify;
mod popups;
#[cfg(target_os = "linux")]
mod quiet;
mod sign_ins;
mod tray;
mod tray_host;
mod view;
mod windows;

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::{Arc, Mutex};

use capa_core::Redactor;
use clap::Parser;
use tauri::{Manager, RunEvent, WindowEvent};

use capa_core::HubPaths;
use capa_host::{HostError, HostOptions, Hosted};
use capa_install::running::RunningProgram;
use capa_server::ServeError;

use desktop::Desktop;
use hub_origin::HubOrigin;
use popups::Popups;
use tray::TraySlot;

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

fn main() -> ExitCode {
    if capa_install::running::runs_as_cli(&std::env::args_os().take(2).collect::<Vec<_>>()) {
        #[cfg(windows)]
        console::attach_to_parent();
        return capa_cli::main();
    }
    no_gl_in_the_app_process();
    // SAFETY: as above, no other thread has started yet.
    #[expect(
        unsafe_code,
        reason = "sets an environment variable, sound only before any thread starts"
    )]
    unsafe {
        capa_embed::prepare_process();
    }
    let args = Args::parse();
    let redactor = Redactor::new();
    capa_host::init_logging(&redactor, "info,rmcp=warn");

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
            commands::popup_ready,
            commands::open_run,
            commands::quit,
        ])
        .on_window_event(|window, event| match event {
            WindowEvent::Destroyed
                if window.label().starts_with(windows::POPUP_PREFIX)
                    && let Some(popups) = window.app_handle().try_state::<Popups>() =>
            {
                popups.closed(window.label());
            }
            // Without a tray host, a closed settings window would leave an app nobody can find
            // or quit: it is minimised instead (issue 41).
            WindowEvent::CloseRequested { api, .. }
                if window.label() == windows::SETTINGS
                    && tray_host::find() == tray_host::TrayHost::None =>
            {
                api.prevent_close();
                windows::minimise_without_tray(window);
            }
            _ => {}
        })
        .setup(move |app| {
            let options = HostOptions {
                paths: HubPaths::from_env(),
                http: args.http,
                config: args.config.clone(),
                project: None,
                // Packaged (`npm run desktop:build`), the UI ships in the resource dir's `ui/`.
                ui_dir: app.path().resource_dir().ok().map(|dir| dir.join("ui")),
                // Fail before any upstream starts when the port is taken.
                check_port_first: true,
                // The app hosts a person's hub; a team hub is `capa hub serve`'s.
                sign_in: None,
            };
            if let Err(e) = start(app, options, redactor, background) {
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

/// GTK 3 on X11 loads OpenGL (and with it the GPU driver: Mesa's llvmpipe alone maps 44 MiB of
/// LLVM) when it opens the display, to pick GL-capable visuals, although the app's own process
/// draws nothing with GL: its windows are webviews, which WebKit renders in its web processes.
/// `GDK_GL=disable` skips that, and the app sits in the tray in about a third less memory
/// (docs/benchmarks.md). A `GDK_GL` the person set is kept.
#[cfg(target_os = "linux")]
#[expect(
    unsafe_code,
    reason = "set_var is unsafe only with other threads running; this is the first thing main does, before any thread starts"
)]
fn no_gl_in_the_app_process() {
    if std::env::var_os("GDK_GL").is_none() {
        // SAFETY: no other thread exists yet (nothing has run before main's first line but the
        // Rust runtime's set-up), so nothing can read the environment while it changes.
        unsafe { std::env::set_var("GDK_GL", "disable") };
    }
}

#[cfg(not(target_os = "linux"))]
fn no_gl_in_the_app_process() {}

/// Starts the hub the way `capa hub serve` does (capa-host), in this process, so that `capa
/// mcp` and every client reach the app's hub exactly as they would reach the headless one.
/// Fails, saying why, when a hub already runs for this data dir or the address is taken.
fn host(options: HostOptions, redactor: Arc<Redactor>) -> anyhow::Result<Hosted> {
    let hosted = match tauri::async_runtime::block_on(capa_host::serve(options, redactor)) {
        Ok(hosted) => hosted,
        Err(HostError::AlreadyRunning { url, data_dir, pid }) => {
            return Err(already_running(&url, &data_dir, pid));
        }
        Err(
            HostError::Bind { addr, source } | HostError::Serve(ServeError::Bind { addr, source }),
        ) => return Err(port_taken(addr, &source)),
        Err(e) => return Err(e.into()),
    };
    eprintln!(
        "capabilities: MCP endpoint {} ({} mode; bearer token in {})",
        hosted.mcp_url,
        hosted.mode,
        hosted.token_file.display()
    );
    Ok(hosted)
}

/// Why the app cannot start beside the hub process `pid`: said of the app itself when that is
/// what runs (a second launch that could not hand over to the first: no D-Bus session).
fn already_running(url: &str, data_dir: &std::path::Path, pid: u32) -> anyhow::Error {
    match capa_install::running::running_program(pid) {
        Some(RunningProgram::App) => anyhow::anyhow!(
            "Capabilities is already running (process {pid}), in the tray or as its own window; this second launch could not bring it forward (no D-Bus session). Open its settings with `capa ui`, or quit it and start again"
        ),
        Some(RunningProgram::CommandLine) => anyhow::anyhow!(
            "`capa hub serve` (process {pid}) already serves this data dir ({}) at {url}; stop it first (the app hosts the hub itself), or set CAPA_DATA_DIR for a second one",
            data_dir.display()
        ),
        None => anyhow::anyhow!(
            "a hub (process {pid}) is already running at {url} for this data dir ({}); stop it first (the app hosts the hub itself), or set CAPA_DATA_DIR for a second one",
            data_dir.display()
        ),
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

/// The setup hook's work: the hub, the commands for its origin, the tray, the settings window.
fn start(
    app: &mut tauri::App,
    options: HostOptions,
    redactor: Arc<Redactor>,
    background: bool,
) -> anyhow::Result<()> {
    let hosted = host(options, redactor)?;
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
    app.manage(Popups::default());
    app.manage(TraySlot::default());
    app.manage(Desktop { hosted, origin });
    let handle = app.handle().clone();
    match tray::build(&handle, commands::on_tray_menu) {
        Ok(built) => {
            if let Some(slot) = handle.try_state::<TraySlot>()
                && let Ok(mut tray) = slot.0.lock()
            {
                *tray = Some(built);
            }
        }
        Err(e) => tracing::warn!(error = %e, "no tray icon on this desktop"),
    }
    popups::watch(handle.clone());
    #[cfg(target_os = "linux")]
    quiet::watch(handle.clone());
    // Ctrl-C or SIGTERM quits like the tray's "Quit": the hub stops cleanly.
    let quitting = handle.clone();
    tauri::async_runtime::spawn(async move {
        capa_host::shutdown_signal().await;
        quitting.exit(0);
    });
    // Started in the background on a desktop without a tray host, the app would have nothing on
    // screen at all: its settings window opens, minimised (issue 41).
    let no_tray = tray_host::find() == tray_host::TrayHost::None;
    if !background || no_tray {
        windows::open_settings(&handle)?;
    }
    if background
        && no_tray
        && let Some(window) = handle.get_webview_window(windows::SETTINGS)
    {
        windows::minimise_without_tray(&window);
    }
    Ok(())
}
