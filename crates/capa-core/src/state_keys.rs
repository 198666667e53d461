//! What the hub keeps about runs besides their attempts (those are `capa_runner`'s): a signal
//! for decisions, the count of pending inputs, the approvals pause, the approval page opener the
//! HTTP server installs, and the key that signs `requestState`.

use std::sync::{Arc, RwLock};

use tokio::sync::watch;

/// Opens the approval page of a run on the user's screen; returns whether it did.
pub type PageOpener = Arc<dyn Fn(&str) -> bool + Send + Sync>;

/// Makes a one-time link to the hub's own sign-in page for `source` as `connection` (the HTTP
/// server installs one; `None` when it cannot).
pub type SignInLinker = Arc<dyn Fn(&str, Option<&str>) -> Option<String> + Send + Sync>;

pub(crate) struct RunsState {
    decisions: watch::Sender<u64>,
    /// How many inputs are pending, refreshed when one is recorded or decided.
    pending: watch::Sender<u64>,
    /// While true, calls that would ask are denied instead ("pause approvals").
    paused: watch::Sender<bool>,
    /// Exists while paused: a person who paused approvals and restarts stays paused.
    paused_file: std::path::PathBuf,
    page: RwLock<Option<PageOpener>>,
    sign_in_linker: RwLock<Option<SignInLinker>>,
    /// Sign the `requestState` of approvals sent to clients.
    state_keys: RwLock<Arc<StateKeys>>,
}

/// Bytes of the `requestState` signing key.
const STATE_KEY_BYTES: usize = 32;

/// How a team hub's shared `requestState` key rotates: a new one signs each day, and a replaced
/// one opens what it signed for a day more, the longest a state lives (a pending input's
/// `approvalTtlMs`, at most 24 h), with an hour to spare.
pub const STATE_KEY_ROTATION: capa_store::Rotation = capa_store::Rotation {
    every_ms: 24 * 3_600_000,
    accept_ms: 25 * 3_600_000,
};

/// The keys that sign and open `requestState`.
#[derive(Clone, PartialEq, Eq)]
pub enum StateKeys {
    /// A person's hub: one key, kept in the data dir.
    Local(Vec<u8>),
    /// A team hub's replicas: the generations their store keeps, newest (the one that signs)
    /// first, never empty.
    Shared(Vec<capa_store::SharedKey>),
}

impl std::fmt::Debug for StateKeys {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Local(_) => f.write_str("StateKeys::Local(<redacted>)"),
            Self::Shared(keys) => f.debug_tuple("StateKeys::Shared").field(keys).finish(),
        }
    }
}

impl RunsState {
    /// With the signing keys the store shares between hubs (a team hub's replicas), else the
    /// one kept in `key_file` (created, mode 0600, on first use), so that states handed out
    /// before a restart, or by another replica, still open; paused when `paused_file` exists.
    pub(crate) fn new(
        store: &capa_store::Store,
        key_file: &std::path::Path,
        paused_file: std::path::PathBuf,
    ) -> Self {
        let state_keys = shared_keys(store, STATE_KEY_ROTATION).unwrap_or_else(|| {
            StateKeys::Local(load_or_create_key(key_file).unwrap_or_else(|e| {
                tracing::warn!(error = %e, file = %key_file.display(), "could not keep the requestState key; states will not survive a restart");
                random_key().unwrap_or_default()
            }))
        });
        Self {
            decisions: watch::channel(0).0,
            pending: watch::channel(0).0,
            paused: watch::channel(paused_file.exists()).0,
            paused_file,
            page: RwLock::new(None),
            sign_in_linker: RwLock::new(None),
            state_keys: RwLock::new(Arc::new(state_keys)),
        }
    }

    /// The `requestState` keys now.
    pub(crate) fn state_keys(&self) -> Arc<StateKeys> {
        match self.state_keys.read() {
            Ok(keys) => keys.clone(),
            Err(poisoned) => poisoned.into_inner().clone(),
        }
    }

    /// Reads the shared keys again, rotating them as `rotation` says when they are due (a
    /// person's hub keeps its one key). Returns the keys this hub had not seen, for the
    /// redactor.
    pub(crate) fn refresh_state_keys(
        &self,
        store: &capa_store::Store,
        rotation: capa_store::Rotation,
    ) -> Vec<Vec<u8>> {
        let old = self.state_keys();
        if matches!(*old, StateKeys::Local(_)) {
            return Vec::new();
        }
        let Some(new) = shared_keys(store, rotation) else {
            return Vec::new();
        };
        if new == *old {
            return Vec::new();
        }
        let seen = old.keys();
        let fresh = new
            .keys()
            .into_iter()
            .filter(|k| !seen.contains(k))
            .collect();
        match self.state_keys.write() {
            Ok(mut keys) => *keys = Arc::new(new),
            Err(poisoned) => *poisoned.into_inner() = Arc::new(new),
        }
        fresh
    }
}

impl StateKeys {
    /// Every key's bytes.
    pub fn keys(&self) -> Vec<Vec<u8>> {
        match self {
            Self::Local(key) => vec![key.clone()],
            Self::Shared(keys) => keys.iter().map(|k| k.key.clone()).collect(),
        }
    }
}

/// A fresh key from the system's randomness; none without it (fail closed: a key guessable from
/// the clock would let anyone forge states, so 2026-07-28 clients then get `awaiting_approval`).
fn random_key() -> Option<Vec<u8>> {
    crate::digest::random_bytes(STATE_KEY_BYTES)
}

/// The `requestState` keys every hub on the store uses, where the store is shared by several
/// machines (PostgreSQL); `None` for SQLite, whose hubs keep the key in the data dir, and when
/// the shared store cannot answer: at start this hub then signs with a key of its own, whose
/// states the other replicas refuse (closed, never forged), and later it keeps the keys it had.
fn shared_keys(store: &capa_store::Store, rotation: capa_store::Rotation) -> Option<StateKeys> {
    let candidate = random_key()?;
    match store.rotating_keys("request_state", &candidate, rotation) {
        Ok(keys) => keys
            .map(|keys| {
                keys.into_iter()
                    .filter(|k| k.key.len() >= STATE_KEY_BYTES)
                    .collect::<Vec<_>>()
            })
            .filter(|keys| !keys.is_empty())
            .map(StateKeys::Shared),
        Err(e) => {
            tracing::error!(error = %e, "could not read the requestState keys the store shares");
            None
        }
    }
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

impl std::fmt::Debug for RunsState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RunsState").finish_non_exhaustive()
    }
}

impl RunsState {
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

    /// Installs the maker of sign-in links (the HTTP server does, when it starts).
    pub(crate) fn set_sign_in_linker(&self, linker: SignInLinker) {
        if let Ok(mut slot) = self.sign_in_linker.write() {
            *slot = Some(linker);
        }
    }

    /// A one-time link to the hub's sign-in page for `source` as `connection`: it starts the
    /// sign-in and sends the browser to the authorization server. Never for a model.
    pub(crate) fn sign_in_link(&self, source: &str, connection: Option<&str>) -> Option<String> {
        let linker = self.sign_in_linker.read().ok()?.clone()?;
        linker(source, connection)
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
