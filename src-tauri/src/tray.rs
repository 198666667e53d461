//! The tray icon: its picture and tooltip say whether the hub is idle, has pending approvals (with
//! the count) or a failing source; its menu routes through the same commands tests call.

use std::sync::Mutex;

use tauri::image::Image;
use tauri::menu::{CheckMenuItem, Menu, MenuItem, PredefinedMenuItem};
use tauri::tray::{TrayIcon, TrayIconBuilder};
use tauri::{AppHandle, Manager};

use crate::commands;
use crate::popups::AppState;

const IDLE: &[u8] = include_bytes!("../../icons/tray-idle.png");
const PENDING: &[u8] = include_bytes!("../../icons/tray-pending.png");
const ERROR: &[u8] = include_bytes!("../../icons/tray-error.png");

/// The tray and the menu items whose text or check mark follows the hub.
pub struct Tray {
    icon: TrayIcon,
    pending: MenuItem<tauri::Wry>,
    pause: CheckMenuItem<tauri::Wry>,
    /// The last look shown, so that the icon is only replaced when it changes.
    shown: Mutex<Option<Look>>,
}

impl std::fmt::Debug for Tray {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Tray").finish_non_exhaustive()
    }
}

#[derive(Debug, Clone, PartialEq)]
struct Look {
    icon: &'static str,
    tooltip: String,
    pending_text: String,
    pending: usize,
    paused: bool,
}

fn look(state: &AppState) -> Look {
    let failing: Vec<&str> = state
        .sources
        .iter()
        .filter(|s| s.failing())
        .map(|s| s.id.as_str())
        .collect();
    let pending_text = match state.pending {
        0 => "No pending approvals".to_owned(),
        1 => "1 pending approval".to_owned(),
        n => format!("{n} pending approvals"),
    };
    let mut tooltip = String::from("Capabilities");
    if state.pending > 0 {
        tooltip.push_str(&format!(": {pending_text}"));
    }
    if !failing.is_empty() {
        tooltip.push_str(&format!(" · source error: {}", failing.join(", ")));
    }
    if state.paused {
        tooltip.push_str(" · approvals paused");
    }
    let icon = if state.pending > 0 {
        "pending"
    } else if !failing.is_empty() {
        "error"
    } else {
        "idle"
    };
    Look {
        icon,
        tooltip,
        pending_text,
        pending: state.pending,
        paused: state.paused,
    }
}

fn image(name: &str) -> tauri::Result<Image<'static>> {
    Image::from_bytes(match name {
        "pending" => PENDING,
        "error" => ERROR,
        _ => IDLE,
    })
}

/// Builds the tray. Where the desktop has no tray (no status notifier host), the app still runs
/// and the error is returned for the log.
pub fn build(app: &AppHandle) -> tauri::Result<Tray> {
    let pending = MenuItem::with_id(app, "pending", "No pending approvals", false, None::<&str>)?;
    let settings = MenuItem::with_id(app, "settings", "Open settings", true, None::<&str>)?;
    let pause = CheckMenuItem::with_id(app, "pause", "Pause approvals", true, false, None::<&str>)?;
    let quit = MenuItem::with_id(app, "quit", "Quit", true, None::<&str>)?;
    let separator = PredefinedMenuItem::separator(app)?;
    let menu = Menu::with_items(app, &[&pending, &settings, &pause, &separator, &quit])?;
    let icon = TrayIconBuilder::with_id("capabilities")
        .icon(image("idle")?)
        .tooltip("Capabilities")
        .menu(&menu)
        .show_menu_on_left_click(true)
        .on_menu_event(|app, event| on_menu(app, event.id().as_ref()))
        .build(app)?;
    Ok(Tray {
        icon,
        pending,
        pause,
        shown: Mutex::new(None),
    })
}

fn on_menu(app: &AppHandle, id: &str) {
    let app = app.clone();
    let id = id.to_owned();
    tauri::async_runtime::spawn(async move {
        let result = match id.as_str() {
            "pending" => commands::open_next_approval(app.clone()).await.map(drop),
            "settings" => commands::open_settings(app.clone()).await,
            "pause" => {
                let paused = app
                    .try_state::<crate::Desktop>()
                    .is_some_and(|d| d.hosted.hub.approvals_paused());
                commands::pause_approvals(app.clone(), !paused)
                    .await
                    .map(drop)
            }
            "quit" => {
                app.exit(0);
                Ok(())
            }
            _ => Ok(()),
        };
        if let Err(e) = result {
            tracing::warn!(menu = %id, error = %e.message, "tray action failed");
        }
    });
}

/// Makes the tray show `state`.
pub fn refresh(app: &AppHandle, state: &AppState) {
    let Some(desktop) = app.try_state::<crate::Desktop>() else {
        return;
    };
    let Ok(tray) = desktop.tray.lock() else {
        return;
    };
    let Some(tray) = tray.as_ref() else {
        return;
    };
    let next = look(state);
    let Ok(mut shown) = tray.shown.lock() else {
        return;
    };
    if shown.as_ref() == Some(&next) {
        return;
    }
    if shown.as_ref().map(|l| l.icon) != Some(next.icon)
        && let Ok(icon) = image(next.icon)
    {
        let _ = tray.icon.set_icon(Some(icon));
    }
    let _ = tray.icon.set_tooltip(Some(&next.tooltip));
    let title = (next.pending > 0).then(|| next.pending.to_string());
    let _ = tray.icon.set_title(title.as_deref());
    let _ = tray.pending.set_text(&next.pending_text);
    let _ = tray.pending.set_enabled(next.pending > 0);
    let _ = tray.pause.set_checked(next.paused);
    *shown = Some(next);
}
