//! Keys that several hub processes on one database must share: the key that signs
//! `requestState` (a form's state sealed by one replica of a team hub is opened by whichever
//! replica the client's answer reaches), rotated, and the bearer token. A person's hub keeps
//! its keys in files of its data dir (capa-core's `state_keys.rs`); only a backend shared by several
//! machines keeps them here.

use crate::StoreError;

/// One generation of a rotating key.
#[derive(Clone, PartialEq, Eq)]
pub struct SharedKey {
    /// Counts up from 0 with each rotation; names the key in what it signed.
    pub generation: u64,
    pub key: Vec<u8>,
    /// When it was made, on the database's clock.
    pub created_at_ms: i64,
}

impl std::fmt::Debug for SharedKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SharedKey")
            .field("generation", &self.generation)
            .field("key", &"<redacted>")
            .field("created_at_ms", &self.created_at_ms)
            .finish()
    }
}

/// How a rotating key ages: a new generation signs once the newest is `every_ms` old, and a
/// generation a newer one replaced is still accepted for `accept_ms` (the longest life of what
/// it signed), then deleted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rotation {
    pub every_ms: i64,
    pub accept_ms: i64,
}

/// Keys shared through the database.
pub trait KeyStore: Send + Sync {
    /// The key named `name` that every hub on this database uses: the one stored, or
    /// `candidate`, stored now, when there is none yet (the first hub's wins). `None` where the
    /// database is one machine's own (SQLite): the caller keeps its key in a file instead, so
    /// that the database holds no secret.
    fn shared_key(&self, name: &str, candidate: &[u8]) -> Result<Option<Vec<u8>>, StoreError>;

    /// The generations of the rotating key `family` still accepted, newest (the one to sign
    /// with) first. When the newest is older than `rotation.every_ms`, or there is none,
    /// `candidate` becomes the next generation (every hub asking at once gets the same one);
    /// generations replaced more than `rotation.accept_ms` ago are deleted. `None` on SQLite,
    /// as [`KeyStore::shared_key`].
    fn rotating_keys(
        &self,
        family: &str,
        candidate: &[u8],
        rotation: Rotation,
    ) -> Result<Option<Vec<SharedKey>>, StoreError>;
}

impl KeyStore for crate::SqliteStore {
    fn shared_key(&self, _name: &str, _candidate: &[u8]) -> Result<Option<Vec<u8>>, StoreError> {
        Ok(None)
    }

    fn rotating_keys(
        &self,
        _family: &str,
        _candidate: &[u8],
        _rotation: Rotation,
    ) -> Result<Option<Vec<SharedKey>>, StoreError> {
        Ok(None)
    }
}
