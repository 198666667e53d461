//! Connections through the hub: values to the keychain, names to the database, every value to
//! the redactor. A change takes effect for the sources that use it at the next
//! [`Connections::reload`].

use std::sync::Arc;

use capa_config::SourceConfig;
use capa_secrets::Secret;
use capa_store::ConnectionRecord;
use futures::future::join_all;

use super::{Hub, SourceDef, Upstream, UpstreamKey, sources};
use crate::error::ConnectionError;

/// The credentials of the hub's sources: stored connections (their values in the keychain, or
/// the encrypted file without one), reloading the sources that use them after a change, and
/// OAuth sign-ins to upstreams (`oauth.rs`). Get it with [`Hub::connections`]; the values
/// themselves are the [`crate::ConnectionVault`]'s.
#[derive(Clone, Copy)]
pub struct Connections<'a> {
    pub(crate) hub: &'a Hub,
}

impl Hub {
    /// The sources' connections and sign-ins.
    pub fn connections(&self) -> Connections<'_> {
        Connections { hub: self }
    }
}

impl Connections<'_> {
    /// Re-reads connections after they changed (for example `capa connections set`): sources that
    /// use secrets restart with the new values.
    pub async fn reload(self) {
        if let Err(e) = self.hub.connections.load_into_redactor() {
            tracing::warn!(error = %e, "could not reload connections");
        }
        let uses_secrets: Vec<SourceDef> = self
            .hub
            .source_defs()
            .into_iter()
            .filter(|d| sources::def_uses_secrets(d) || self.hub.is_oauth(d))
            .collect();
        let stopped: Vec<Arc<Upstream>> = {
            let mut upstreams = self.hub.lock_upstreams();
            let keys: Vec<UpstreamKey> = upstreams
                .keys()
                .filter(|(id, _)| uses_secrets.iter().any(|d| &d.id == id))
                .cloned()
                .collect();
            keys.iter().filter_map(|k| upstreams.remove(k)).collect()
        };
        self.hub.remember_signed_out(&stopped).await;
        join_all(stopped.iter().map(|u| u.shutdown())).await;
        for def in &uses_secrets {
            self.hub.start_default(def);
        }
        self.hub.rebuild_catalog();
    }

    /// Every stored connection (names and fields, never values).
    pub fn list(&self) -> Result<Vec<ConnectionRecord>, ConnectionError> {
        self.hub.connections.list()
    }

    /// Where secrets are kept: the OS keychain, or the encrypted file (named) without one.
    pub fn secret_store(&self) -> (capa_secrets::StoreKind, Option<std::path::PathBuf>) {
        self.hub.connections.secret_store()
    }

    /// Stores one secret field of connection `name` of `source` (see [`crate::ConnectionVault::set`]).
    pub fn set(
        &self,
        source: &SourceConfig,
        name: &str,
        field: Option<&str>,
        value: Secret,
        make_default: bool,
    ) -> Result<ConnectionRecord, ConnectionError> {
        self.hub
            .connections
            .set(source, name, field, value, make_default)
    }

    /// Removes connection `name` listed under `source_key`, and its secrets.
    pub fn remove(
        &self,
        source_key: &str,
        name: &str,
    ) -> Result<ConnectionRecord, ConnectionError> {
        self.hub.connections.remove(source_key, name)
    }
}
