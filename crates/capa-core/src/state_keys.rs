//! The keys that sign `requestState`: a person's hub keeps one in the data dir, so states
//! survive a restart; a team hub's replicas share rotating generations through the store
//! (docs/team.md). [`crate::Runs`] hands them out.

use std::sync::{Arc, RwLock};

/// The hub's `requestState` keys now, replaced whole when the shared ones rotate.
pub(crate) struct StateKeyRing(RwLock<Arc<StateKeys>>);

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

impl StateKeyRing {
    /// With the signing keys the store shares between hubs (a team hub's replicas), else the
    /// one kept in `key_file` (created, mode 0600, on first use), so that states handed out
    /// before a restart, or by another replica, still open.
    pub(crate) fn new(store: &capa_store::Store, key_file: &std::path::Path) -> Self {
        let state_keys = shared_keys(store, STATE_KEY_ROTATION).unwrap_or_else(|| {
            StateKeys::Local(load_or_create_key(key_file).unwrap_or_else(|e| {
                tracing::warn!(error = %e, file = %key_file.display(), "could not keep the requestState key; states will not survive a restart");
                random_key().unwrap_or_default()
            }))
        });
        Self(RwLock::new(Arc::new(state_keys)))
    }

    /// The `requestState` keys now.
    pub(crate) fn get(&self) -> Arc<StateKeys> {
        match self.0.read() {
            Ok(keys) => keys.clone(),
            Err(poisoned) => poisoned.into_inner().clone(),
        }
    }

    /// Reads the shared keys again, rotating them as `rotation` says when they are due (a
    /// person's hub keeps its one key). Returns the keys this hub had not seen, for the
    /// redactor.
    pub(crate) fn refresh(
        &self,
        store: &capa_store::Store,
        rotation: capa_store::Rotation,
    ) -> Vec<Vec<u8>> {
        let old = self.get();
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
        match self.0.write() {
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

impl std::fmt::Debug for StateKeyRing {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("StateKeyRing").field(&self.get()).finish()
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
