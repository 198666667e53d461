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

/// Shows `window` and gives it the focus (where the window manager lets it take the focus).
pub(crate) fn focus(window: &WebviewWindow) {
    let _ = window.unminimize();
    let _ = window.show();
    let _ = window.set_focus();
}

/// Minimises `window` where closing it would hide the app for good (no tray host): it stays in
/// the taskbar, and the first time an OS notification says so and how to get a tray.
pub(crate) fn minimise_without_tray(window: &impl tauri::Manager<tauri::Wry>) {
    static SAID: std::sync::Once = std::sync::Once::new();
    let Some(settings) = window.get_webview_window(SETTINGS) else {
        return;
    };
    if let Err(e) = settings.minimize() {
        tracing::warn!(error = %e, "could not minimise the settings window");
    }
    SAID.call_once(|| {
        tracing::info!("no tray host on this desktop: the settings window was minimised instead of closed");
        crate::notify::notify(
            window.app_handle(),
            "Capabilities is still running".into(),
            "This desktop shows no tray icons, so Capabilities stays in the taskbar. Quit it from its window.".into(),
        );
    });
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
/// call, its client and arguments, and the choices in view; the run's code below them), always on
/// top, not resizable, centered, and with the focus where the window manager gives it (issue 41: a
/// popup without it ignored the person's first click and every key, with no sign why). A popup
/// that comes up on its own may take keys meant for the app the person types into: its choices
/// ignore input for a moment after it appears or gets the focus, and every key in that moment
/// starts it again, so a burst of typing never decides (ui/src/lib/arming.ts, ui/src/pages/queue.ts).
pub(crate) fn open_popup(app: &AppHandle, label: &str, run_id: &str) -> tauri::Result<()> {
    let Some(window) = build_popup(app, label, run_id, true)? else {
        return Ok(());
    };
    focus(&window);
    Ok(())
}

/// Opens a hidden popup window `label` at the approval route with no run: it loads the UI (and
/// WebKit starts its web process) ahead of time, so that a call that asks only changes its
/// route and shows it ([`reveal_popup`]) instead of waiting for a new webview and a page load.
pub(crate) fn open_warm_popup(app: &AppHandle, label: &str) -> tauri::Result<()> {
    build_popup(app, label, "", false).map(drop)
}

/// Points the hidden popup `label` at `run_id`'s approvals and shows it with the focus, as
/// [`open_popup`] would (it was built hidden and without the focus, while nothing asked).
pub(crate) fn reveal_popup(app: &AppHandle, label: &str, run_id: &str) -> tauri::Result<()> {
    let window = app
        .get_webview_window(label)
        .ok_or(tauri::Error::WindowNotFound)?;
    // Shown first: WebKit may hold back a page's frames (and so its paint) while its window is
    // hidden.
    window.set_focusable(true)?;
    focus(&window);
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
        // The warm popup, built hidden ahead of any call, takes the focus only when shown.
        .focused(visible)
        .visible(visible)
        .build()?;
    Ok(Some(window))
}
