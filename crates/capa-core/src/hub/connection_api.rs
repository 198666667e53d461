//! Connections through the hub: values to the keychain, names to the database, every value to
//! the redactor. A change takes effect for the sources that use it at the next
//! [`Hub::reload_connections`].

use capa_config::SourceConfig;
use capa_secrets::Secret;
use capa_store::ConnectionRecord;

use std::sync::Arc;

use futures::future::join_all;

use super::{Hub, SourceDef, Upstream, UpstreamKey, sources};
use crate::error::ConnectionError;

impl Hub {
    /// Re-reads connections after they changed (for example `capa connections set`): sources that
    /// use secrets restart with the new values.
    pub async fn reload_connections(&self) {
        if let Err(e) = self.connections.load_into_redactor() {
            tracing::warn!(error = %e, "could not reload connections");
        }
        let uses_secrets: Vec<SourceDef> = self
            .source_defs()
            .into_iter()
            .filter(|d| sources::def_uses_secrets(d) || self.is_oauth(d))
            .collect();
        let stopped: Vec<Arc<Upstream>> = {
            let mut upstreams = self.lock_upstreams();
            let keys: Vec<UpstreamKey> = upstreams
                .keys()
                .filter(|(id, _)| uses_secrets.iter().any(|d| &d.id == id))
                .cloned()
                .collect();
            keys.iter().filter_map(|k| upstreams.remove(k)).collect()
        };
        self.remember_signed_out(&stopped).await;
        join_all(stopped.iter().map(|u| u.shutdown())).await;
        for def in &uses_secrets {
            self.start_default(def);
        }
        self.rebuild_catalog();
    }

    /// Every stored connection (names and fields, never values).
    pub fn list_connections(&self) -> Result<Vec<ConnectionRecord>, ConnectionError> {
        self.connections.list()
    }

    /// Where secrets are kept: the OS keychain, or the encrypted file (named) without one.
    pub fn secret_store(&self) -> (capa_secrets::StoreKind, Option<std::path::PathBuf>) {
        self.connections.secret_store()
    }

    /// Stores one secret field of connection `name` of `source` (see [`crate::Connections::set`]).
    pub fn set_connection(
        &self,
        source: &SourceConfig,
        name: &str,
        field: Option<&str>,
        value: Secret,
        make_default: bool,
    ) -> Result<ConnectionRecord, ConnectionError> {
        self.connections
            .set(source, name, field, value, make_default)
    }

    /// Removes connection `name` listed under `source_key`, and its secrets.
    pub fn remove_connection(
        &self,
        source_key: &str,
        name: &str,
    ) -> Result<ConnectionRecord, ConnectionError> {
        self.connections.remove(source_key, name)
    }
}
