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
    if let Some(window) = app.get_webview_window(SETTINGS) {
        focus(&window);
        return Ok(());
    }
    let Some(desktop) = app.try_state::<Desktop>() else {
        return Ok(());
    };
    let builder = WebviewWindowBuilder::new(app, SETTINGS, external(&settings_url(&desktop))?);
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

/// Opens the approval popup of `run_id` in a new window labelled `label`: small, always on top,
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
    let Some(desktop) = app.try_state::<Desktop>() else {
        return Ok(());
    };
    let builder = WebviewWindowBuilder::new(app, label, external(&popup_url(&desktop, run_id))?);
    let window = desktop
        .origin
        .confine(builder, label)
        .title("Approve a call · Capabilities")
        .inner_size(480.0, 560.0)
        .resizable(false)
        .always_on_top(true)
        .center()
        .focused(asked)
        .build()?;
    if asked {
        focus(&window);
    }
    Ok(())
}
