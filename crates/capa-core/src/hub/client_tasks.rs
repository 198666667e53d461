//! The tasks the hub gives its clients (SEP-2663; capa-mcp's `tasks.rs`), kept in the store so
//! that a restarted hub answers `tasks/get` for them: a task that ended is read back as it
//! ended; one whose hub process stopped while it worked is answered as such.

use capa_store::ClientTask;

use super::Runs;

/// A task of a client as the store has it, seen from this hub process.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeptTask {
    /// Its state as `tasks/get` answered it last (JSON).
    pub detail: String,
    /// It reached an end: `detail` is final.
    pub ended: bool,
    /// It was working when the hub process that followed it stopped: it will not end now.
    pub orphaned: bool,
}

impl Runs<'_> {
    /// Keeps the state of task `id` of `surface`, followed by this process, until
    /// `expires_at_ms`.
    pub fn keep_client_task(
        &self,
        id: &str,
        surface: &str,
        detail: String,
        ended: bool,
        expires_at_ms: i64,
    ) {
        let task = ClientTask {
            id: id.to_owned(),
            surface: surface.to_owned(),
            detail,
            ended,
            owner: self.hub.slots.owner(),
            expires_at_ms,
        };
        if let Err(e) = self
            .hub
            .store
            .put_client_task(&task, crate::clock::now_ms())
        {
            tracing::warn!(error = %e, task = %id, "could not keep a client's task for after a restart");
        }
    }

    /// The kept task `id` of `surface`, unless it expired.
    pub fn kept_client_task(&self, id: &str, surface: &str) -> Option<KeptTask> {
        let task = self
            .hub
            .store
            .client_task(id, surface, crate::clock::now_ms())
            .map_err(|e| tracing::warn!(error = %e, task = %id, "could not read a kept task"))
            .ok()??;
        // A kept task has no lease: its process is looked for on this machine (replicas on
        // several machines answer for their own tasks only; docs/team.md).
        let orphaned = !task.ended
            && capa_runner::progress(
                Some(task.owner),
                None,
                self.hub.slots.holder(),
                crate::clock::now_ms(),
            ) == capa_runner::Progress::Orphaned;
        Some(KeptTask {
            detail: task.detail,
            ended: task.ended,
            orphaned,
        })
    }
}
