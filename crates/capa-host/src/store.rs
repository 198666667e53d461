//! The hub's database and connections, opened by a command that runs without the hub: what a
//! person decides at a terminal is written where the hub reads it.

use std::sync::Arc;

use anyhow::Context;
use capa_core::{ConnectionVault, HubPaths, Redactor, StoreAt, StoreUrl};
use capa_store::Store;

pub use capa_secrets::Secret;

/// The hub's database: SQLite in the data dir (made private first), or the PostgreSQL
/// database `CAPA_STORE` / `--store` names (a team hub, docs/team.md).
pub fn open_store(paths: &HubPaths) -> anyhow::Result<Store> {
    paths.ensure_private_data_dir()?;
    match &paths.store {
        StoreAt::DataDir => {
            let db = paths
                .private_database()
                .with_context(|| format!("preparing {}", paths.database().display()))?;
            Store::open(&db).with_context(|| format!("opening {}", db.display()))
        }
        StoreAt::Url(url) => open_url(url),
    }
}

/// The database at `url`: PostgreSQL is the one other backend.
fn open_url(url: &StoreUrl) -> anyhow::Result<Store> {
    if !capa_store_pg::is_postgres_url(url.expose()) {
        anyhow::bail!(
            "the store {} is not a PostgreSQL address; use postgres://user:password@host:port/database, or leave out --store and CAPA_STORE for the SQLite file in the data dir",
            url.shown()
        );
    }
    let store = capa_store_pg::PgStore::connect(url.expose())
        .with_context(|| format!("opening the store at {}", url.shown()))?;
    Ok(Store::from_backend(store))
}

/// The connections of the data dir: names in the database, secrets in the OS keychain (or the
/// encrypted file in the data dir where none answers).
pub fn open_connections(
    paths: &HubPaths,
    redactor: Arc<Redactor>,
) -> anyhow::Result<ConnectionVault> {
    let store = Arc::new(open_store(paths)?);
    Ok(ConnectionVault::new(store, hub_keychain(paths), redactor))
}

/// The keychain of the hub of `paths`: the OS keychain, or where none answers, the encrypted
/// file in its data dir (capa-secrets, `vault`).
pub(crate) fn hub_keychain(paths: &HubPaths) -> capa_secrets::Keychain {
    capa_secrets::Keychain::with_fallback(capa_secrets::DEFAULT_SERVICE, &paths.data_dir)
}
