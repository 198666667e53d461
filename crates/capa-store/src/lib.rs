//! The hub's database: tool call records (the base of runs and history), connection
//! metadata, results too large to return inline (read back by handle), and a cache of the
//! sentence model's vectors of tool texts. Never the secret values of connections: those live
//! in the OS keychain, and every text written here has already passed the hub's redaction. A
//! database several replicas share (PostgreSQL) also keeps the keys they must share
//! ([`KeyStore`]: the bearer token, the `requestState` key), and is protected as the token
//! file is (docs/team.md).
//!
//! One SQLite file in the platform data dir (WAL mode, versioned migrations run on open) by
//! default; every operation is a method of a domain trait ([`RunStore`], [`InputStore`], …)
//! that each backend implements, so that a team hub can keep the same data in PostgreSQL.

mod approvals;
mod calls;
mod changes;
mod claims;
mod client_tasks;
mod connections;
mod deferred;
mod embeddings;
mod handles;
mod input_kind;
mod keys;
mod migrations;
mod pairings;
mod pins;
mod policy;
mod run_state;
mod runs;
mod sampling;
mod tool_text;

use std::path::Path;
use std::sync::{Arc, Mutex, MutexGuard};

pub use approvals::{ApprovalRecord, ApprovalStatus, InputStore};
pub use calls::{CallRecord, CallStatus, CallStore, RecordedCall};
pub use changes::ChangeFeed;
pub use claims::{ClaimStore, InputClaim};
pub use client_tasks::{ClientTask, ClientTaskStore};
pub use connections::{ConnectionRecord, ConnectionStore};
pub use deferred::WriteQueue;
pub use embeddings::EmbeddingStore;
pub use handles::{
    HandleBounds, HandleInfo, HandleOf, HandleRecord, HandleStore, HandleSummary, JsonType,
};
pub use input_kind::InputKind;
pub use keys::{KeyStore, Rotation, SharedKey};
pub use pairings::{PairedClient, PairingStore};
pub use pins::{PinStatus, PinStore, PinnedTool};
pub use policy::{ConfirmationStore, TrustedProjectSource};
pub use run_state::RunState;
pub use runs::{
    JournalEntry, Lease, RunFilter, RunInProgress, RunOwner, RunRecord, RunStore, RunSummary,
};
pub use sampling::SamplingStore;
pub use tool_text::ToolTextStore;

/// The schema version this build migrates a database to (tests compare with it, so that a new
/// migration changes no test).
pub const SCHEMA_VERSION: i64 = migrations::LATEST;

/// Why the store failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum StoreError {
    /// SQLite reported an error.
    #[error("database error: {0}")]
    Sqlite(#[from] rusqlite::Error),
    /// The database was written by a newer version of the hub.
    #[error(
        "the database is at schema version {found}, newer than this hub knows ({known}); upgrade capa"
    )]
    TooNew { found: i64, known: i64 },
    /// The database file could not be prepared (created private, or its mode tightened).
    #[error("database file: {0}")]
    File(std::io::Error),
    /// The database's lock was poisoned by a panic in another thread.
    #[error("database lock poisoned")]
    Poisoned,
    /// Another backend (PostgreSQL) reported an error, or could not be reached.
    #[error("database error: {0}")]
    Backend(Box<dyn std::error::Error + Send + Sync>),
}

/// Every operation of the store, whichever database holds it: [`SqliteStore`] (one file, the
/// default) or another backend (`capa-store-pg`). The domain traits say what each operation
/// promises; both backends pass the same suite (`capa-store-pg/tests`).
pub trait Backend:
    RunStore
    + WriteQueue
    + InputStore
    + CallStore
    + ClaimStore
    + ClientTaskStore
    + ConnectionStore
    + EmbeddingStore
    + HandleStore
    + PairingStore
    + PinStore
    + ConfirmationStore
    + SamplingStore
    + ToolTextStore
    + KeyStore
    + ChangeFeed
    + std::fmt::Debug
{
    /// The schema version after migrations.
    fn schema_version(&self) -> Result<i64, StoreError>;
}

/// The database: cheap to share behind an `Arc`, each operation holds a connection briefly.
/// Its operations are those of [`Backend`], reached through `Deref`, so callers need not
/// know which database serves them.
#[derive(Debug)]
pub struct Store {
    backend: Box<dyn Backend>,
}

impl Store {
    /// Opens (creating if needed) the SQLite database at `path` and brings its schema up to
    /// date.
    pub fn open(path: &Path) -> Result<Self, StoreError> {
        Ok(Self::from_backend(SqliteStore::open(path)?))
    }

    /// An in-memory SQLite database, for tools that need no persistence.
    pub fn in_memory() -> Result<Self, StoreError> {
        Ok(Self::from_backend(SqliteStore::in_memory()?))
    }

    /// A store served by `backend`.
    pub fn from_backend(backend: impl Backend + 'static) -> Self {
        Self {
            backend: Box::new(backend),
        }
    }
}

impl std::ops::Deref for Store {
    type Target = dyn Backend;

    fn deref(&self) -> &Self::Target {
        &*self.backend
    }
}

/// The SQLite database: one file in the platform data dir, WAL mode.
///
/// Writes that nothing reads at once (call records, most journal entries) are queued and
/// committed together (`deferred.rs`); every other statement commits the queue first, so what
/// the store answers is always what was written.
#[derive(Debug)]
pub struct SqliteStore {
    shared: Arc<deferred::Shared>,
}

impl Drop for SqliteStore {
    fn drop(&mut self) {
        self.shared.close();
        // Logged by the commit; nothing else can be done at drop.
        let _ = self.shared.commit_now();
    }
}

impl SqliteStore {
    /// Opens (creating if needed) the database at `path` and brings its schema up to date.
    pub fn open(path: &Path) -> Result<Self, StoreError> {
        let conn = rusqlite::Connection::open(path)?;
        conn.pragma_update(None, "journal_mode", "WAL")?;
        conn.pragma_update(None, "synchronous", "NORMAL")?;
        conn.pragma_update(None, "foreign_keys", "ON")?;
        conn.busy_timeout(std::time::Duration::from_secs(5))?;
        Self::with_connection(conn)
    }

    /// An in-memory database, for tools that need no persistence.
    pub fn in_memory() -> Result<Self, StoreError> {
        Self::with_connection(rusqlite::Connection::open_in_memory()?)
    }

    fn with_connection(mut conn: rusqlite::Connection) -> Result<Self, StoreError> {
        migrations::migrate(&mut conn)?;
        // Statements of the hot paths are prepared once and kept (`prepare_cached`).
        conn.set_prepared_statement_cache_capacity(64);
        Ok(Self {
            shared: Arc::new(deferred::Shared {
                conn: Mutex::new(conn),
                queue: deferred::Queue::default(),
            }),
        })
    }

    /// The connection, with every queued write committed first.
    fn conn(&self) -> Result<MutexGuard<'_, rusqlite::Connection>, StoreError> {
        let mut conn = self.shared.conn.lock().map_err(|_| StoreError::Poisoned)?;
        // A failed group is logged by the commit; this caller's own statement still runs.
        let _ = self.shared.queue.commit_pending(&mut conn);
        Ok(conn)
    }
}

impl Backend for SqliteStore {
    fn schema_version(&self) -> Result<i64, StoreError> {
        Ok(self
            .conn()?
            .pragma_query_value(None, "user_version", |row| row.get(0))?)
    }
}
