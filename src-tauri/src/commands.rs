//! The app's Tauri commands. The tray menu calls them, the hub's UI calls them through
//! `window.__TAURI__` (the `hub-ui` capability), and the desktop tests invoke them too.

use serde::Serialize;
use tauri::{AppHandle, Manager, WebviewWindow};

use crate::desktop::Desktop;
use crate::popups::Popups;
use crate::view::AppState;
use crate::{sign_ins, tray, windows};

/// An error across the UI boundary: the UI matches on `code`, never on `message`.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct CommandError {
    pub code: &'static str,
    pub message: String,
}

impl From<tauri::Error> for CommandError {
    fn from(e: tauri::Error) -> Self {
        Self {
            code: "window",
            message: e.to_string(),
        }
    }
}

fn starting() -> CommandError {
    CommandError {
        code: "starting",
        message: "the hub is still starting".to_owned(),
    }
}

fn desktop(app: &AppHandle) -> Result<tauri::State<'_, Desktop>, CommandError> {
    app.try_state::<Desktop>().ok_or_else(starting)
}

fn popups(app: &AppHandle) -> Result<tauri::State<'_, Popups>, CommandError> {
    app.try_state::<Popups>().ok_or_else(starting)
}

/// Shows (or opens) the settings window.
#[tauri::command]
pub(crate) async fn open_settings(app: AppHandle) -> Result<(), CommandError> {
    windows::open_settings(&app)?;
    Ok(())
}

/// Shows the approval popup of the next pending run; returns its run id, none when nothing waits.
#[tauri::command]
pub(crate) async fn open_next_approval(app: AppHandle) -> Result<Option<String>, CommandError> {
    let desktop = desktop(&app)?;
    Ok(popups(&app)?.open_next(&app, &desktop.hosted.hub)?)
}

/// Pauses approvals (calls that would ask are denied until resumed) or resumes them.
#[tauri::command]
pub(crate) async fn pause_approvals(
    app: AppHandle,
    paused: bool,
) -> Result<AppState, CommandError> {
    let desktop = desktop(&app)?;
    desktop.hosted.hub.approvals().set_paused(paused);
    let mut state = popups(&app)?.state(&desktop.hosted.hub);
    tray::refresh(&app, &state);
    state.tray = tray::shown(&app);
    Ok(state)
}

/// Pending approvals, whether approvals are paused, the sources, the popup on screen (with
/// whether it has the focus) and what the tray shows.
/// Async, as every command here: a synchronous command runs on the main thread, which the tray's
/// setters (called from the popup watcher) wait for.
#[tauri::command]
pub(crate) async fn state(app: AppHandle) -> Result<AppState, CommandError> {
    let desktop = desktop(&app)?;
    let mut state = popups(&app)?.state(&desktop.hosted.hub);
    state.tray = tray::shown(&app);
    state.tray_host = Some(crate::tray_host::find());
    if let Some(popup) = state.popup.as_mut() {
        popup.focused = app
            .get_webview_window(&popup.label)
            .and_then(|window| window.is_focused().ok());
    }
    Ok(state)
}

/// The approval popup calling it has painted the pending call of `run_id`, at `painted_at_ms`
/// (Unix milliseconds by the page's clock, when it says): the app records and logs how long
/// after the call that was. Returns the milliseconds; none from another window.
#[tauri::command]
pub(crate) async fn popup_shown(
    app: AppHandle,
    window: WebviewWindow,
    run_id: String,
    painted_at_ms: Option<u64>,
) -> Result<Option<u64>, CommandError> {
    let desktop = desktop(&app)?;
    Ok(popups(&app)?.painted(&desktop.hosted.hub, window.label(), &run_id, painted_at_ms))
}

/// The warm popup calling it has loaded its page and waits for a run (`popups.rs`). Returns
/// whether it is the warm popup.
#[tauri::command]
pub(crate) async fn popup_ready(
    app: AppHandle,
    window: WebviewWindow,
) -> Result<bool, CommandError> {
    Ok(popups(&app)?.ready(window.label()))
}

/// Opens the run `run_id` in the settings window (the popup's run link): the popup stays, with
/// its choices.
#[tauri::command]
pub(crate) async fn open_run(app: AppHandle, run_id: String) -> Result<(), CommandError> {
    if !windows::is_run_id(&run_id) {
        return Err(CommandError {
            code: "invalid_arguments",
            message: "not a run id".to_owned(),
        });
    }
    windows::open_settings_at(&app, Some(&format!("#/runs/{run_id}")))?;
    Ok(())
}

/// Quits the app (its hub stops cleanly): the settings window's "Quit Capabilities", one click
/// away on a desktop without a tray, where the tray's "Quit" is not on screen.
#[tauri::command]
pub(crate) async fn quit(app: AppHandle) -> Result<(), CommandError> {
    app.exit(0);
    Ok(())
}

/// Closes the window that calls it (the popup after a decision); the next queued popup follows.
#[tauri::command]
pub(crate) async fn close_window(window: WebviewWindow) -> Result<(), CommandError> {
    window.close()?;
    Ok(())
}

/// What the tray's menu items do: the same commands the UI and the tests call.
pub(crate) fn on_tray_menu(app: &AppHandle, id: &str) {
    let app = app.clone();
    let id = id.to_owned();
    tauri::async_runtime::spawn(async move {
        let result = match id.as_str() {
            "pending" => open_next_approval(app.clone()).await.map(drop),
            "settings" => open_settings(app.clone()).await,
            "pause" => {
                let paused = app
                    .try_state::<Desktop>()
                    .is_some_and(|d| d.hosted.hub.approvals().paused());
                pause_approvals(app.clone(), !paused).await.map(drop)
            }
            "quit" => {
                app.exit(0);
                Ok(())
            }
            // "Sign in to <source>…": says what fails in a notification of its own.
            other => {
                if let Some(source) = other.strip_prefix(sign_ins::MENU_PREFIX) {
                    sign_ins::sign_in(app.clone(), source.to_owned()).await;
                }
                Ok(())
            }
        };
        if let Err(e) = result {
            tracing::warn!(menu = %id, error = %e.message, "tray action failed");
        }
    });
}
