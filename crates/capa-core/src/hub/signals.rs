//! What frontends watch and install: the counts and switches the tray, the UI's event stream
//! and the popups follow, and the opener of the approval page.

use tokio::sync::watch;

use super::{Connections, Hub};
use crate::approval::Approvals;
use crate::run_state::{PageOpener, SignInLinker};

impl Hub {
    /// `text` with every known secret replaced, for any text a frontend shows.
    pub fn redact(&self, text: &str) -> String {
        self.redactor.redact(text)
    }

    /// Adds `secret` to what is redacted everywhere (the hub's own token, when it changes).
    pub fn treat_as_secret(&self, secret: &str) {
        self.redactor.add(secret);
    }
}

impl Connections<'_> {
    /// Installs the maker of one-time sign-in links (the HTTP server does, when it starts).
    pub fn set_sign_in_linker(&self, linker: SignInLinker) {
        self.hub.run_state.set_sign_in_linker(linker);
    }

    /// A one-time link to this hub's sign-in page for `source` as `connection`, for a person's
    /// browser (a client's URL elicitation); `None` without an HTTP server.
    pub fn sign_in_link(&self, source: &str, connection: Option<&str>) -> Option<String> {
        self.hub.run_state.sign_in_link(source, connection)
    }
}

impl Approvals<'_> {
    /// Changes whenever a person decides something.
    pub fn watch_decisions(&self) -> watch::Receiver<u64> {
        self.hub.run_state.watch_decisions()
    }

    /// Changes when approvals are paused or resumed.
    pub fn watch_paused(&self) -> watch::Receiver<bool> {
        self.hub.run_state.watch_paused()
    }

    /// Installs the approval page opener (the HTTP server does, when it starts; the desktop
    /// app replaces it with its popups).
    pub fn set_page_opener(&self, opener: PageOpener) {
        self.hub.run_state.set_page_opener(opener);
    }

    /// Opens the approval page of `run_id`; false when no page can be opened here.
    pub fn open_page(&self, run_id: &str) -> bool {
        self.hub.run_state.open_page(run_id)
    }
}
