//! A start that fails (the port taken, a hub already running, a broken configuration): the
//! reason on stderr as `error: …`, as the CLI prints errors, and exit status 1. Started from a
//! desktop launcher nobody reads stderr, so then the same words also show in a native dialog
//! until the person closes it (docs/desktop.md, "When the app cannot start").

use std::io::IsTerminal;

/// Set (to anything) to never show the dialog: for tests and scripts that read stderr through
/// a pipe, where the dialog would wait for a click nobody makes. Launchers never set it.
pub(crate) const NO_DIALOG_ENV: &str = "CAPA_NO_DIALOG";

/// Prints `error` and, when stderr is no terminal, shows it in a dialog; returns once the
/// dialog is closed. GTK must be initialised on this thread, or be initialisable.
pub(crate) fn report(error: &anyhow::Error) {
    let message = format!("{error:#}");
    eprintln!("error: {message}");
    if !std::io::stderr().is_terminal() && std::env::var_os(NO_DIALOG_ENV).is_none() {
        dialog(&message);
    }
}

#[cfg(target_os = "linux")]
fn dialog(message: &str) {
    use gtk::prelude::*;
    // Tauri's event loop has initialised GTK when start-up failed in the app's setup; when the
    // app failed before that, there may be no display to show anything on.
    if !gtk::is_initialized_main_thread() && gtk::init().is_err() {
        return;
    }
    let dialog = gtk::MessageDialog::new(
        None::<&gtk::Window>,
        gtk::DialogFlags::MODAL,
        gtk::MessageType::Error,
        gtk::ButtonsType::Close,
        "Capabilities could not start",
    );
    dialog.set_title("Capabilities");
    dialog.set_secondary_text(Some(message));
    dialog.set_keep_above(true);
    dialog.run();
    dialog.close();
}

/// No native dialog here yet: stderr (the system log for a launched app) carries the reason.
#[cfg(not(target_os = "linux"))]
fn dialog(_message: &str) {}
