//! What the hub keeps in memory about runs: one lock per run, so that two resumes of the same
//! run never replay it at once (the second waits, then finds it ended or still paused); the
//! slots that bound how many attempts execute at once; a signal for decisions; and the approval
//! page opener the HTTP server installs.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, RwLock};
use std::time::Duration;

use tokio::sync::{OwnedSemaphorePermit, Semaphore, watch};

use crate::error::RunRefusal;

/// Run attempts executing at once, hub-wide. Each is a sandbox thread with a guest heap of up
/// to 64 MB and up to 8 calls in flight, so 8 bound the worst case near 512 MB of guest heap
/// and 64 upstream calls, on any machine; clients rarely run more than a few `execute` at once.
/// A paused run holds no slot: an attempt ends when a call waits for a person, and its resume
/// takes a slot again only to replay.
pub const MAX_RUNS: usize = 8;
/// How long an attempt waits for a slot before it is refused as `busy`: long enough to ride out
/// a burst, short against the client's own request timeout.
pub const RUN_SLOT_WAIT: Duration = Duration::from_secs(10);

/// Opens the approval page of a run on the user's screen; returns whether it did.
pub type PageOpener = Arc<dyn Fn(&str) -> bool + Send + Sync>;

pub struct Runs {
    locks: Mutex<HashMap<String, Arc<tokio::sync::Mutex<()>>>>,
    /// One permit per attempt executing; [`MAX_RUNS`] in all.
    slots: Arc<Semaphore>,
    decisions: watch::Sender<u64>,
    /// How many inputs are pending, refreshed when one is recorded or decided.
    pending: watch::Sender<u64>,
    /// While true, calls that would ask are denied instead ("pause approvals").
    paused: watch::Sender<bool>,
    /// Exists while paused: a person who paused approvals and restarts stays paused.
    paused_file: std::path::PathBuf,
    page: RwLock<Option<PageOpener>>,
    /// Signs the `requestState` of approvals sent to clients.
    state_key: Vec<u8>,
    /// This hub process, as the runs it attempts record it.
    owner: capa_store::RunOwner,
}

/// Bytes of the `requestState` signing key.
const STATE_KEY_BYTES: usize = 32;

impl Runs {
    /// With the signing key kept in `key_file` (created, mode 0600, on first use), so that
    /// states handed out before a restart still open after it; paused when `paused_file` exists.
    pub(crate) fn new(key_file: &std::path::Path, paused_file: std::path::PathBuf) -> Self {
        let state_key = load_or_create_key(key_file).unwrap_or_else(|e| {
            tracing::warn!(error = %e, file = %key_file.display(), "could not keep the requestState key; states will not survive a restart");
            random_key().unwrap_or_default()
        });
        Self {
            locks: Mutex::new(HashMap::new()),
            slots: Arc::new(Semaphore::new(MAX_RUNS)),
            decisions: watch::channel(0).0,
            pending: watch::channel(0).0,
            paused: watch::channel(paused_file.exists()).0,
            paused_file,
            page: RwLock::new(None),
            state_key,
            owner: capa_store::RunOwner {
                pid: std::process::id(),
                started_ms: crate::clock::now_ms(),
            },
        }
    }

    /// This hub process, as the runs it attempts record it.
    pub(crate) fn owner(&self) -> capa_store::RunOwner {
        self.owner
    }

    /// The `requestState` signing key.
    pub fn state_key(&self) -> &[u8] {
        &self.state_key
    }
}

/// A fresh key from the system's randomness; none without it (fail closed: a key guessable from
/// the clock would let anyone forge states, so 2026-07-28 clients then get `awaiting_approval`).
fn random_key() -> Option<Vec<u8>> {
    crate::digest::random_bytes(STATE_KEY_BYTES)
}

fn load_or_create_key(path: &std::path::Path) -> std::io::Result<Vec<u8>> {
    match std::fs::read(path) {
        Ok(key) if key.len() >= STATE_KEY_BYTES => {
            // Kept private even if someone loosened it.
            crate::paths::ensure_private_file(path)?;
            return Ok(key);
        }
        Ok(_) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(e),
    }
    let key = random_key().ok_or_else(|| std::io::Error::other("no system randomness"))?;
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)?;
    }
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create(true).truncate(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    std::io::Write::write_all(&mut options.open(path)?, &key)?;
    Ok(key)
}

impl std::fmt::Debug for Runs {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Runs").finish_non_exhaustive()
    }
}

impl Runs {
    /// A slot to execute an attempt in, held until the permit drops; waits up to
    /// [`RUN_SLOT_WAIT`] for one to free, or until `cancel` (the client went away).
    pub(crate) async fn slot(
        &self,
        cancel: &tokio_util::sync::CancellationToken,
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
    pub(crate) fn lock_of(&self, run_id: &str) -> Arc<tokio::sync::Mutex<()>> {
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

    pub(crate) fn notify_decision(&self) {
        self.decisions.send_modify(|n| *n = n.wrapping_add(1));
    }

    /// Changes whenever a person decides something.
    pub fn watch_decisions(&self) -> watch::Receiver<u64> {
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
    pub fn watch_pending(&self) -> watch::Receiver<u64> {
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

    pub fn paused(&self) -> bool {
        *self.paused.borrow()
    }

    /// Changes when approvals are paused or resumed.
    pub fn watch_paused(&self) -> watch::Receiver<bool> {
        self.paused.subscribe()
    }

    /// Installs the approval page opener (the HTTP server does, when it starts).
    pub fn set_page_opener(&self, opener: PageOpener) {
        if let Ok(mut page) = self.page.write() {
            *page = Some(opener);
        }
    }

    /// Opens the approval page of `run_id`; false when no page can be opened here.
    pub fn open_page(&self, run_id: &str) -> bool {
        let opener = self.page.read().ok().and_then(|p| p.clone());
        opener.is_some_and(|open| open(run_id))
    }
}

/// The run slots' wait on tokio's paused clock: the wait is the behaviour, so the test moves the
/// clock itself instead of sleeping and reading elapsed time.
#[cfg(test)]
mod slot_tests {
    use std::time::Duration;

    use tokio_util::sync::CancellationToken;

    use super::*;

    fn runs(dir: &tempfile::TempDir) -> Runs {
        Runs::new(&dir.path().join("state.key"), dir.path().join("paused"))
    }

    /// All [`MAX_RUNS`] slots, held.
    async fn every_slot(runs: &Runs, never: &CancellationToken) -> Vec<OwnedSemaphorePermit> {
        let mut held = Vec::new();
        for _ in 0..MAX_RUNS {
            held.push(runs.slot(never).await.expect("a free slot"));
        }
        held
    }

    #[tokio::test(start_paused = true)]
    async fn a_run_past_the_bound_waits_for_a_slot_and_takes_the_first_that_frees() {
        let dir = tempfile::tempdir().expect("tempdir");
        let runs = Arc::new(runs(&dir));
        let never = CancellationToken::new();
        let mut held = every_slot(&runs, &never).await;
        let waiting = tokio::spawn({
            let runs = Arc::clone(&runs);
            async move { runs.slot(&CancellationToken::new()).await.map(drop) }
        });
        // Just short of the wait, it still waits.
        tokio::time::advance(RUN_SLOT_WAIT - Duration::from_millis(1)).await;
        assert!(!waiting.is_finished());
        // One run ends: the waiting attempt takes its slot, before the wait is over.
        held.pop();
        assert!(matches!(waiting.await, Ok(Ok(()))));
    }

    #[tokio::test(start_paused = true)]
    async fn no_slot_within_the_wait_is_busy_and_a_cancel_ends_the_wait_at_once() {
        let dir = tempfile::tempdir().expect("tempdir");
        let runs = Arc::new(runs(&dir));
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

#[cfg(all(test, unix))]
mod tests {
    use std::os::unix::fs::PermissionsExt;

    use super::*;

    fn mode(path: &std::path::Path) -> u32 {
        std::fs::metadata(path).expect("stat").permissions().mode() & 0o777
    }

    #[test]
    fn the_state_key_is_made_private_and_a_loosened_one_is_tightened_on_every_start() {
        let dir = tempfile::tempdir().expect("tempdir");
        let file = dir.path().join("state.key");
        let key = load_or_create_key(&file).expect("made");
        assert_eq!(key.len(), STATE_KEY_BYTES);
        assert_eq!(mode(&file), 0o600);
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o644)).expect("chmod");
        assert_eq!(
            load_or_create_key(&file).expect("read"),
            key,
            "the same key"
        );
        assert_eq!(mode(&file), 0o600, "tightened");
    }
}
