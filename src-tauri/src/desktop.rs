//! What the app keeps while it runs (Tauri's managed state): the hosted hub and its origin.
//! The popup queue (`popups::Popups`) and the tray (`tray::TraySlot`) are managed beside it.

use capa_host::Hosted;

use crate::hub_origin::HubOrigin;

/// The hub this app hosts, and the origin its windows load.
pub(crate) struct Desktop {
    pub hosted: Hosted,
    /// The hub's origin: the only one the windows load and grant the app's commands to.
    pub origin: HubOrigin,
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
    pub(crate) fn login_path(&self) -> String {
        let link = self.hosted.ui.issue_link();
        if link.is_empty() {
            // No randomness for a link: the UI shows its signed-out page.
            "/app/".to_owned()
        } else {
            link
        }
    }
}
