//! Connections through the hub: values to the keychain, names to the database, every value to
//! the redactor. A change takes effect for the sources that use it at the next
//! [`Hub::reload_connections`].

use capa_config::SourceConfig;
use capa_secrets::Secret;
use capa_store::ConnectionRecord;

use super::Hub;
use crate::error::ConnectionError;

impl Hub {
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
