//! The hub's store in PostgreSQL, for a team hub (docs/team.md): every operation of
//! [`capa_store::Backend`] on the same data as the SQLite store, so that the hub above it does
//! not know which database it runs on. Selected by `capa hub serve --store postgres://…` (or
//! `CAPA_STORE`).
//!
//! Each domain of the store has its file here, as in `capa-store`; the SQL differs where the
//! two databases do (placeholders, upserts, booleans, row order, byte ranges). Both backends
//! pass one suite (tests/suite), and their schemas are compared (tests/schema.rs).

mod approvals;
mod calls;
mod changes;
mod claims;
mod client_tasks;
mod connections;
mod embeddings;
mod handles;
mod keys;
mod pairings;
mod pins;
mod policy;
mod pool;
mod queue;
mod runs;
mod sampling;
mod schema;
pub mod scratch;
mod tool_text;

use capa_store::{Backend, StoreError};

use crate::pool::Pool;

/// Connections a store keeps open: a hub's operations are short, and a few let a run's calls,
/// the UI and the approvals of other clients go on side by side.
const CONNECTIONS: usize = 4;

/// The store in one PostgreSQL database.
#[derive(Debug)]
pub struct PgStore {
    pool: Pool,
    /// How to connect, for the connection that listens for other hubs' changes.
    config: postgres::Config,
    /// This store among the hubs on the database: its own announcements are not news to it.
    id: String,
    /// False once dropped: its listener ends.
    open: std::sync::Arc<std::sync::atomic::AtomicBool>,
}

impl Drop for PgStore {
    fn drop(&mut self) {
        self.open.store(false, std::sync::atomic::Ordering::Release);
    }
}

impl PgStore {
    /// Connects to the database at `url` (`postgres://user:password@host:port/db`, or the
    /// key/value form libpq takes) and brings its schema up to date. The error never repeats
    /// the address, which may hold a password.
    pub fn connect(url: &str) -> Result<Self, StoreError> {
        let mut config: postgres::Config = url.parse().map_err(|e| {
            StoreError::Backend(format!("the PostgreSQL address is not valid: {e}").into())
        })?;
        // A server that does not answer fails an operation in seconds, not after the kernel's
        // retries (minutes), where the address does not say otherwise.
        if config.get_connect_timeout().is_none() {
            config.connect_timeout(std::time::Duration::from_secs(5));
        }
        config.keepalives_idle(std::time::Duration::from_secs(30));
        let pool = Pool::connect(&config, CONNECTIONS)?;
        pool.run(schema::migrate)?;
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        Ok(Self {
            pool,
            config,
            id: format!("{}-{nanos}", std::process::id()),
            open: std::sync::Arc::new(std::sync::atomic::AtomicBool::new(true)),
        })
    }
}

impl Backend for PgStore {
    fn schema_version(&self) -> Result<i64, StoreError> {
        self.pool.run(schema::version)
    }
}

/// Whether `text` names a PostgreSQL database (a `postgres://` or `postgresql://` URL) rather
/// than a file.
pub fn is_postgres_url(text: &str) -> bool {
    text.starts_with("postgres://") || text.starts_with("postgresql://")
}

/// Converts a stored 64-bit count to the `u32` the store's types use (positions, pids); a
/// value out of range, which only a damaged row holds, reads as 0.
fn to_u32(value: i64) -> u32 {
    u32::try_from(value).unwrap_or(0)
}

/// Text kept as UTF-8 bytes (schema.rs, 19: a run's code, a kept body) read back; bytes that
/// are not UTF-8, which only a damaged row holds, are the store's error rather than a guess.
fn text_of(bytes: Vec<u8>) -> Result<String, pool::Failed> {
    String::from_utf8(bytes).map_err(|e| {
        pool::Failed::Store(StoreError::Backend(
            format!("stored text is not UTF-8: {e}").into(),
        ))
    })
}
