//! What the hub signals about approvals in memory: a decision was taken, how many inputs are
//! pending, whether approvals are paused (kept across restarts by a file), and the approval
//! page the HTTP server can open. [`crate::Approvals`] reads and changes them (its methods for
//! these are in `hub/signals.rs`).

use std::sync::{Arc, RwLock};

use tokio::sync::watch;

/// Opens the approval page of a run on the user's screen; returns whether it did.
pub type PageOpener = Arc<dyn Fn(&str) -> bool + Send + Sync>;

pub(crate) struct ApprovalSignals {
    decisions: watch::Sender<u64>,
    /// How many inputs are pending, refreshed when one is recorded or decided.
    pending: watch::Sender<u64>,
    /// While true, calls that would ask are denied instead ("pause approvals").
    paused: watch::Sender<bool>,
    /// Exists while paused: a person who paused approvals and restarts stays paused.
    paused_file: std::path::PathBuf,
    page: RwLock<Option<PageOpener>>,
}

impl std::fmt::Debug for ApprovalSignals {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ApprovalSignals").finish_non_exhaustive()
    }
}

impl ApprovalSignals {
    /// Paused when `paused_file` exists.
    pub(crate) fn new(paused_file: std::path::PathBuf) -> Self {
        Self {
            decisions: watch::channel(0).0,
            pending: watch::channel(0).0,
            paused: watch::channel(paused_file.exists()).0,
            paused_file,
            page: RwLock::new(None),
        }
    }
}

impl ApprovalSignals {
    pub(crate) fn notify_decision(&self) {
        self.decisions.send_modify(|n| *n = n.wrapping_add(1));
    }

    /// Changes whenever a person decides something.
    pub(crate) fn watch_decisions(&self) -> watch::Receiver<u64> {
        self.decisions.subscribe()
    }

    /// Publishes the number of pending inputs (sent only when it changed).
    pub(crate) fn set_pending_count(&self, count: u64) {
        self.pending.send_if_modified(|n| {
            let changed = *n != count;
            *n = count;
            changed
        });
    }

    /// The number of pending inputs, updated whenever one is recorded or decided.
    pub(crate) fn watch_pending(&self) -> watch::Receiver<u64> {
        self.pending.subscribe()
    }

    pub(crate) fn set_paused(&self, paused: bool) {
        self.paused.send_if_modified(|p| {
            let changed = *p != paused;
            *p = paused;
            changed
        });
        let kept = if paused {
            std::fs::write(
                &self.paused_file,
                "approvals are paused; resume them in the app\n",
            )
        } else {
            match std::fs::remove_file(&self.paused_file) {
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
                other => other,
            }
        };
        if let Err(e) = kept {
            tracing::warn!(error = %e, file = %self.paused_file.display(), "could not keep the approvals pause for the next start");
        }
    }

    pub(crate) fn paused(&self) -> bool {
        *self.paused.borrow()
    }

    /// Changes when approvals are paused or resumed.
    pub(crate) fn watch_paused(&self) -> watch::Receiver<bool> {
        self.paused.subscribe()
    }

    /// Installs the approval page opener (the HTTP server does, when it starts).
    pub(crate) fn set_page_opener(&self, opener: PageOpener) {
        if let Ok(mut page) = self.page.write() {
            *page = Some(opener);
        }
    }

    /// Opens the approval page of `run_id`; false when no page can be opened here.
    pub(crate) fn open_page(&self, run_id: &str) -> bool {
        let opener = self.page.read().ok().and_then(|p| p.clone());
        opener.is_some_and(|open| open(run_id))
    }
}
