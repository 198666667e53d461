fn main() {
    // The app's own commands, so that capabilities can grant them (to the hub's UI, a remote URL).
    let commands = &[
        "open_settings",
        "open_next_approval",
        "pause_approvals",
        "state",
        "close_window",
        "popup_shown",
        "popup_ready",
        "open_run",
        "quit",
    ];
    tauri_build::try_build(
        tauri_build::Attributes::new()
            .app_manifest(tauri_build::AppManifest::new().commands(commands)),
    )
    .expect("failed to run tauri-build");
}
