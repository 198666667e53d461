//! The hub's database and connections, opened by a command that runs without the hub: what a
//! person decides at a terminal is written where the hub reads it.

use std::sync::Arc;

use anyhow::Context;
use capa_core::{Connections, HubPaths, Redactor};
use capa_store::Store;

pub use capa_secrets::Secret;

/// The hub's database in the data dir (made private first).
pub fn open_store(paths: &HubPaths) -> anyhow::Result<Store> {
    paths.ensure_private_data_dir()?;
    let db = paths
        .private_database()
        .with_context(|| format!("preparing {}", paths.database().display()))?;
    Store::open(&db).with_context(|| format!("opening {}", db.display()))
}

/// The connections of the data dir: names in the database, secrets in the OS keychain (or the
/// encrypted file in the data dir where none answers).
pub fn open_connections(paths: &HubPaths, redactor: Arc<Redactor>) -> anyhow::Result<Connections> {
    let store = Arc::new(open_store(paths)?);
    Ok(Connections::new(store, hub_keychain(paths), redactor))
}

/// The keychain of the hub of `paths`: the OS keychain, or where none answers, the encrypted
/// file in its data dir (capa-secrets, `vault`).
pub(crate) fn hub_keychain(paths: &HubPaths) -> capa_secrets::Keychain {
    capa_secrets::Keychain::with_fallback(capa_secrets::DEFAULT_SERVICE, &paths.data_dir)
}
