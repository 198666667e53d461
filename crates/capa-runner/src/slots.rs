//! Attempts in memory: one lock per run, so that two resumes of the same run never replay it at
//! once (the second waits, then finds it ended or still paused), and the slots that bound how
//! many attempts execute at once hub-wide. Also this process, as the runs it attempts record it.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use capa_store::RunOwner;

use crate::ownership::Holder;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tokio_util::sync::CancellationToken;

/// Run attempts executing at once, hub-wide. Each is a sandbox thread with a guest heap of up
/// to 64 MB and up to 8 calls in flight, so 8 bound the worst case near 512 MB of guest heap
/// and 64 upstream calls, on any machine; clients rarely run more than a few `execute` at once.
/// A paused run holds no slot: an attempt ends when a call waits for a person, and its resume
/// takes a slot again only to replay.
pub const MAX_RUNS: usize = 8;
/// How long an attempt waits for a slot before it is refused as `busy`: long enough to ride out
/// a burst, short against the client's own request timeout.
pub const RUN_SLOT_WAIT: Duration = Duration::from_secs(10);

/// Why the hub did not start an attempt of a run.
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum RunRefusal {
    /// As many runs as the hub executes at once were executing, and none ended within the
    /// wait. Retryable: the same request may start a moment later.
    #[error(
        "the hub is already executing {limit} runs, the most it runs at once, and none ended within {} s",
        waited.as_secs()
    )]
    Busy { limit: usize, waited: Duration },
    /// The client cancelled (or went away) while the attempt waited for a slot.
    #[error("the run was cancelled while it waited for the hub to start it")]
    Cancelled,
}

impl RunRefusal {
    /// A stable code for the envelope's `error.code`.
    pub fn code(&self) -> &'static str {
        match self {
            Self::Busy { .. } => "busy",
            Self::Cancelled => "cancelled",
        }
    }

    /// What the model can do about it.
    pub fn hint(&self) -> String {
        match self {
            Self::Busy { .. } => {
                "Retryable: send the same request again in a few seconds.".to_owned()
            }
            Self::Cancelled => "Nothing ran; send the request again to run it.".to_owned(),
        }
    }
}

/// Run locks and attempt slots of one hub process.
pub struct RunSlots {
    locks: Mutex<HashMap<String, Arc<tokio::sync::Mutex<()>>>>,
    /// One permit per attempt executing; [`MAX_RUNS`] in all.
    slots: Arc<Semaphore>,
    /// This hub process, as the runs it attempts record it, and its machine.
    holder: Holder,
}

impl std::fmt::Debug for RunSlots {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RunSlots")
            .field("holder", &self.holder)
            .finish_non_exhaustive()
    }
}

impl Default for RunSlots {
    fn default() -> Self {
        Self::new()
    }
}

impl RunSlots {
    /// Slots for this process, which started now.
    pub fn new() -> Self {
        Self {
            locks: Mutex::new(HashMap::new()),
            slots: Arc::new(Semaphore::new(MAX_RUNS)),
            holder: Holder {
                owner: RunOwner {
                    pid: std::process::id(),
                    started_ms: capa_domain::clock::now_ms(),
                },
                machine: crate::process::machine(),
            },
        }
    }

    /// This hub process, as the runs it attempts record it.
    pub fn owner(&self) -> RunOwner {
        self.holder.owner
    }

    /// This hub process and its machine, as the leases of its attempts name them.
    pub fn holder(&self) -> Holder {
        self.holder
    }

    /// A slot to execute an attempt in, held until the permit drops; waits up to
    /// [`RUN_SLOT_WAIT`] for one to free, or until `cancel` (the client went away).
    pub async fn slot(
        &self,
        cancel: &CancellationToken,
    ) -> Result<OwnedSemaphorePermit, RunRefusal> {
        let busy = RunRefusal::Busy {
            limit: MAX_RUNS,
            waited: RUN_SLOT_WAIT,
        };
        let wait = tokio::time::timeout(RUN_SLOT_WAIT, self.slots.clone().acquire_owned());
        tokio::select! {
            waited = wait => match waited {
                Ok(Ok(permit)) => Ok(permit),
                // The semaphore is never closed; a closed one would refuse every run the same way.
                Ok(Err(_)) | Err(_) => Err(busy),
            },
            () = cancel.cancelled() => Err(RunRefusal::Cancelled),
        }
    }

    /// The lock of one run. Locks nobody else holds are dropped on the way.
    pub fn lock_of(&self, run_id: &str) -> Arc<tokio::sync::Mutex<()>> {
        let Ok(mut locks) = self.locks.lock() else {
            // A poisoned map: hand out a fresh lock rather than fail the run.
            return Arc::new(tokio::sync::Mutex::new(()));
        };
        locks.retain(|id, lock| id == run_id || Arc::strong_count(lock) > 1);
        locks
            .entry(run_id.to_owned())
            .or_insert_with(|| Arc::new(tokio::sync::Mutex::new(())))
            .clone()
    }
}

/// The run slots' wait on tokio's paused clock: the wait is the behaviour, so the test moves the
/// clock itself instead of sleeping and reading elapsed time.
#[cfg(test)]
mod slot_tests {
    use std::time::Duration;

    use super::*;

    /// All [`MAX_RUNS`] slots, held.
    async fn every_slot(runs: &RunSlots, never: &CancellationToken) -> Vec<OwnedSemaphorePermit> {
        let mut held = Vec::new();
        for _ in 0..MAX_RUNS {
            held.push(runs.slot(never).await.expect("a free slot"));
        }
        held
    }

    #[tokio::test(start_paused = true)]
    async fn a_run_past_the_bound_waits_for_a_slot_and_takes_the_first_that_frees() {
        let runs = Arc::new(RunSlots::new());
        let never = CancellationToken::new();
        let mut held = every_slot(&runs, &never).await;
        let waiting = tokio::spawn({
            let runs = Arc::clone(&runs);
            async move { runs.slot(&CancellationToken::new()).await.map(drop) }
        });
        // Just short of the wait, it still waits.
        tokio::time::advance(
            RUN_SLOT_WAIT
                .checked_sub(Duration::from_millis(1))
                .expect("the wait is longer than a millisecond"),
        )
        .await;
        assert!(!waiting.is_finished());
        // One run ends: the waiting attempt takes its slot, before the wait is over.
        held.pop();
        assert!(matches!(waiting.await, Ok(Ok(()))));
    }

    #[tokio::test(start_paused = true)]
    async fn no_slot_within_the_wait_is_busy_and_a_cancel_ends_the_wait_at_once() {
        let runs = Arc::new(RunSlots::new());
        let never = CancellationToken::new();
        let held = every_slot(&runs, &never).await;
        let started = tokio::time::Instant::now();
        let refused = runs.slot(&never).await.map(drop);
        assert!(
            matches!(refused, Err(RunRefusal::Busy { limit: MAX_RUNS, waited }) if waited == RUN_SLOT_WAIT),
            "{refused:?}"
        );
        // On the paused clock the refusal came exactly when the wait ran out.
        assert_eq!(started.elapsed(), RUN_SLOT_WAIT);

        let cancel = CancellationToken::new();
        let waiting = tokio::spawn({
            let runs = Arc::clone(&runs);
            let cancel = cancel.clone();
            async move { runs.slot(&cancel).await.map(drop) }
        });
        tokio::time::advance(Duration::from_secs(1)).await;
        cancel.cancel();
        let started = tokio::time::Instant::now();
        assert!(matches!(waiting.await, Ok(Err(RunRefusal::Cancelled))));
        assert_eq!(started.elapsed(), Duration::ZERO, "no clock moved");
        drop(held);
    }
}
