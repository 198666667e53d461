//! What frontends watch and install: the decisions, pause and page of
//! [`ApprovalSignals`](crate::approval::signals::ApprovalSignals) through the approvals'
//! facade, and redaction of what they show.

use tokio::sync::watch;

use super::Hub;
use crate::approval::Approvals;
use crate::approval::signals::PageOpener;

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

impl Approvals<'_> {
    /// Changes whenever a person decides something.
    pub fn watch_decisions(&self) -> watch::Receiver<u64> {
        self.hub.approval_signals.watch_decisions()
    }

    /// Changes when approvals are paused or resumed.
    pub fn watch_paused(&self) -> watch::Receiver<bool> {
        self.hub.approval_signals.watch_paused()
    }

    /// Installs the approval page opener (the HTTP server does, when it starts; the desktop
    /// app replaces it with its popups).
    pub fn set_page_opener(&self, opener: PageOpener) {
        self.hub.approval_signals.set_page_opener(opener);
    }

    /// Opens the approval page of `run_id`; false when no page can be opened here.
    pub fn open_page(&self, run_id: &str) -> bool {
        self.hub.approval_signals.open_page(run_id)
    }
}
