//! OS notifications, for the popups and the sign-in needs alike.

use tauri::AppHandle;

/// An OS notification. Needs a notification server; failures are logged only.
pub(crate) fn notify(app: &AppHandle, title: String, body: String) {
    use tauri_plugin_notification::NotificationExt;
    let builder = app.notification().builder().title(title).body(body);
    tauri::async_runtime::spawn_blocking(move || {
        if let Err(e) = builder.show() {
            tracing::debug!(error = %e, "no notification shown");
        }
    });
}
