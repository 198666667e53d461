//! What the hub recorded, for the people who look: runs with their journals and inputs, and
//! the `requestState` values it handed out. Frontends read history through these, never the
//! store itself.

use capa_store::{
    ApprovalRecord, HandleSummary, JournalEntry, RunFilter, RunRecord, RunSummary, StoreError,
};

use super::Hub;

/// One run as its history shows it: the record, its journal of calls, its inputs and its kept
/// results.
#[derive(Debug, Clone)]
pub struct RunHistory {
    pub run: RunRecord,
    pub journal: Vec<JournalEntry>,
    pub inputs: Vec<ApprovalRecord>,
    /// What its attempts kept whole for `hub.read` and is still kept.
    pub handles: Vec<HandleSummary>,
}

/// The runs the hub recorded, for the people who look and for the replicas that share them:
/// their history and kept results, the leases of this hub's attempts, the runs nobody came back
/// for, the tasks kept for clients and the `requestState` keys and values. Get it with
/// [`Hub::runs`].
#[derive(Clone, Copy)]
pub struct Runs<'a> {
    pub(crate) hub: &'a Hub,
}

impl Hub {
    /// The runs and what is kept about them.
    pub fn runs(&self) -> Runs<'_> {
        Runs { hub: self }
    }
}

impl Runs<'_> {
    /// Commits now the writes that wait to share a transaction (call history, the journal
    /// entries of calls that only read); they are otherwise committed within milliseconds, and
    /// before any read of this hub's. For readers of the database file beside the hub.
    pub fn commit_writes(&self) -> Result<(), StoreError> {
        self.hub.store.flush()
    }

    /// Runs matching `filter`, newest first.
    pub fn find(&self, filter: &RunFilter) -> Result<Vec<RunSummary>, StoreError> {
        self.hub.store.find_runs(filter)
    }

    /// Run `id` with its journal and inputs; `None` when there is no such run.
    pub fn history(&self, id: &str) -> Result<Option<RunHistory>, StoreError> {
        let Some(run) = self.hub.store.run(id)? else {
            return Ok(None);
        };
        Ok(Some(RunHistory {
            journal: self.hub.store.journal(id)?,
            inputs: self.hub.store.approvals_of_run(id)?,
            handles: self
                .hub
                .store
                .handles_of_run(id, capa_runner::handles::kept_since(crate::clock::now_ms()))?,
            run,
        }))
    }

    /// A piece of a handle run `run_id` kept, for a person in the run history (every client's):
    /// `options` as `hub.read` takes them, the piece redacted again (a secret added since).
    /// `None` when the run has no such handle (any more).
    pub fn read_handle(
        &self,
        run_id: &str,
        handle: &str,
        options: &str,
    ) -> Result<Option<Result<serde_json::Value, capa_sandbox::ToolFailure>>, StoreError> {
        if !self
            .hub
            .store
            .handles_of_run(
                run_id,
                capa_runner::handles::kept_since(crate::clock::now_ms()),
            )?
            .iter()
            .any(|h| h.id == handle)
        {
            return Ok(None);
        }
        let piece = capa_runner::handles::read(
            &self.hub.store,
            capa_runner::Reader::Person,
            handle,
            options,
            capa_runner::handles::DEFAULT_READ_BYTES,
        );
        Ok(Some(piece.map(|mut value| {
            self.hub.redactor.redact_json(&mut value);
            value
        })))
    }

    /// Marks the `requestState` with SHA-256 `digest` used; false when it was used already
    /// (each is accepted once, by every hub sharing the data dir).
    pub fn consume_request_state(&self, digest: &str) -> Result<bool, StoreError> {
        self.hub.store.consume_state(digest, crate::clock::now_ms())
    }

    /// The keys that sign and open the `requestState` of approvals sent to clients: a
    /// person's hub keeps one in the data dir, so states survive a restart; a team hub's
    /// replicas share rotating ones through the store (replicas.rs). Secrets: the redactor
    /// holds them.
    pub fn state_keys(&self) -> std::sync::Arc<crate::state_keys::StateKeys> {
        self.hub.state_keys.get()
    }
}
