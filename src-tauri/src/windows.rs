//! The app's windows. Both load the hub's web UI (ui/, served at `/app/`) over loopback HTTP,
//! signed in through a one-time link, so the same UI runs in the app and in a browser. Both are
//! kept on the hub's origin, with the commands their UI needs (`hub_origin.rs`).

use tauri::{AppHandle, Manager, WebviewUrl, WebviewWindow, WebviewWindowBuilder};

use crate::desktop::Desktop;
pub(crate) use crate::labels::{POPUP_PREFIX, SETTINGS};

/// The settings window's URL: a one-time sign-in link to the UI.
fn settings_url(desktop: &Desktop) -> String {
    format!("{}{}", desktop.hosted.base_url, desktop.login_path())
}

/// The popup's URL for one run: the sign-in link, then the UI's approval route.
pub(crate) fn popup_url(desktop: &Desktop, run_id: &str) -> String {
    format!(
        "{}{}#/approve/{}",
        desktop.hosted.base_url,
        desktop.login_path(),
        run_id
    )
}

fn external(url: &str) -> tauri::Result<WebviewUrl> {
    Ok(WebviewUrl::External(
        url.parse().map_err(tauri::Error::InvalidUrl)?,
    ))
}

/// Shows `window` and gives it the focus: only for what the person asked for (the tray's items,
/// a second launch), never for a window that comes up on its own.
pub(crate) fn focus(window: &WebviewWindow) {
    let _ = window.unminimize();
    let _ = window.show();
    let _ = window.set_focus();
}

/// Shows the settings window, opening it when it is not there.
pub(crate) fn open_settings(app: &AppHandle) -> tauri::Result<()> {
    open_settings_at(app, None)
}

/// A run id as the hub makes them (`run_…`, `call_…`): safe in a URL fragment and in script.
pub(crate) fn is_run_id(id: &str) -> bool {
    !id.is_empty()
        && id.len() <= 80
        && id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

/// Shows the settings window at the UI route `route` (`#/runs/<id>`; none: where it is), opening
/// it when it is not there.
pub(crate) fn open_settings_at(app: &AppHandle, route: Option<&str>) -> tauri::Result<()> {
    if let Some(window) = app.get_webview_window(SETTINGS) {
        if let Some(route) = route {
            window.eval(format!("location.hash = {}", json_string(route)))?;
        }
        focus(&window);
        return Ok(());
    }
    let Some(desktop) = app.try_state::<Desktop>() else {
        return Ok(());
    };
    let url = format!("{}{}", settings_url(&desktop), route.unwrap_or(""));
    let builder = WebviewWindowBuilder::new(app, SETTINGS, external(&url)?);
    desktop
        .origin
        .confine(builder, SETTINGS)
        .title("Capabilities")
        .inner_size(1100.0, 760.0)
        .min_inner_size(640.0, 480.0)
        .center()
        .build()?;
    Ok(())
}

/// Opens the approval popup of `run_id` in a new window labelled `label`: small (500×640: the
/// call, its client and arguments, and the choices in view; the run's code below them), always on top,
/// not resizable, centered. `asked` is whether the person asked for it (the tray's "N pending
/// approvals"): only then does it take the focus. A popup that comes up on its own, while the
/// person types into another app, is shown without the focus (on every platform Tauri supports:
/// GTK's accept-focus, macOS `orderFront` without making it key, Windows `SW_SHOWNOACTIVATE`), so
/// their keystrokes keep going where they were typing; it is on top, and an OS notification
/// says it is there. Its choices ignore input for a moment whenever it gets the focus anyway
/// (ui/src/lib/arming.ts).
pub(crate) fn open_popup(
    app: &AppHandle,
    label: &str,
    run_id: &str,
    asked: bool,
) -> tauri::Result<()> {
    let Some(window) = build_popup(app, label, run_id, asked, true)? else {
        return Ok(());
    };
    if asked {
        focus(&window);
    }
    Ok(())
}

/// Opens a hidden popup window `label` at the approval route with no run: it loads the UI (and
/// WebKit starts its web process) ahead of time, so that a call that asks only changes its
/// route and shows it ([`reveal_popup`]) instead of waiting for a new webview and a page load.
pub(crate) fn open_warm_popup(app: &AppHandle, label: &str) -> tauri::Result<()> {
    build_popup(app, label, "", false, false).map(drop)
}

/// Points the hidden popup `label` at `run_id`'s approvals and shows it, as [`open_popup`] would
/// (the focus only when `asked`; it was built without, so a popup that comes up on its own
/// does not take it).
pub(crate) fn reveal_popup(
    app: &AppHandle,
    label: &str,
    run_id: &str,
    asked: bool,
) -> tauri::Result<()> {
    let window = app
        .get_webview_window(label)
        .ok_or(tauri::Error::WindowNotFound)?;
    // Shown first: WebKit may hold back a page's frames (and so its paint) while its window is
    // hidden.
    if asked {
        window.set_focusable(true)?;
        focus(&window);
    } else {
        window.show()?;
    }
    window.eval(format!(
        "location.hash = {}",
        json_string(&format!("#/approve/{run_id}"))
    ))?;
    Ok(())
}

fn json_string(text: &str) -> String {
    serde_json::Value::from(text).to_string()
}

fn build_popup(
    app: &AppHandle,
    label: &str,
    run_id: &str,
    asked: bool,
    visible: bool,
) -> tauri::Result<Option<WebviewWindow>> {
    let Some(desktop) = app.try_state::<Desktop>() else {
        return Ok(None);
    };
    let builder = WebviewWindowBuilder::new(app, label, external(&popup_url(&desktop, run_id))?);
    let window = desktop
        .origin
        .confine(builder, label)
        .title("Approve a call · Capabilities")
        .inner_size(500.0, 640.0)
        .resizable(false)
        .always_on_top(true)
        .center()
        .focused(asked)
        .visible(visible)
        .build()?;
    Ok(Some(window))
}
