//! Keys that several hub processes on one database must share: the key that signs
//! `requestState` (a form's state sealed by one replica of a team hub is opened by whichever
//! replica the client's answer reaches). A person's hub keeps its keys in files of its data dir
//! (capa-core's runs.rs); only a backend shared by several machines keeps them here.

use crate::StoreError;

/// Keys shared through the database.
pub trait KeyStore: Send + Sync {
    /// The key named `name` that every hub on this database uses: the one stored, or
    /// `candidate`, stored now, when there is none yet (the first hub's wins). `None` where the
    /// database is one machine's own (SQLite): the caller keeps its key in a file instead, so
    /// that the database holds no secret.
    fn shared_key(&self, name: &str, candidate: &[u8]) -> Result<Option<Vec<u8>>, StoreError>;
}

impl KeyStore for crate::SqliteStore {
    fn shared_key(&self, _name: &str, _candidate: &[u8]) -> Result<Option<Vec<u8>>, StoreError> {
        Ok(None)
    }
}
