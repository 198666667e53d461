//! Connections: named credential sets of a source. Values go to the OS keychain, names and the
//! default choice to the database, and every value to the redactor.

use std::collections::BTreeMap;
use std::sync::Arc;

use capa_secrets::{Keychain, Secret, SecretKey};
use capa_store::{ConnectionRecord, Store};

use capa_config::SourceConfig;

use crate::clock::now_ms;
use crate::error::ConnectionError;
use crate::redact::{MIN_SECRET_LEN, Redactor};
use crate::trust::connection_key;

/// A connection's secret values, ready to fill `${secret:NAME}` placeholders.
#[derive(Debug, Clone)]
pub struct ResolvedConnection {
    pub name: String,
    pub secrets: BTreeMap<String, Secret>,
}

/// Connection management over the keychain and the database.
#[derive(Debug, Clone)]
pub struct ConnectionVault {
    store: Arc<Store>,
    keychain: Keychain,
    redactor: Arc<Redactor>,
}

pub use capa_domain::is_connection_name;

impl ConnectionVault {
    pub fn new(store: Arc<Store>, keychain: Keychain, redactor: Arc<Redactor>) -> Self {
        Self {
            store,
            keychain,
            redactor,
        }
    }

    /// Stores one secret field of a connection. `field` may be omitted when the source refers to
    /// exactly one secret name.
    #[expect(
        clippy::needless_pass_by_value,
        reason = "the caller hands the secret over and keeps no copy once it is stored"
    )]
    pub fn set(
        &self,
        source: &SourceConfig,
        name: &str,
        field: Option<&str>,
        value: Secret,
        make_default: bool,
    ) -> Result<ConnectionRecord, ConnectionError> {
        if !is_connection_name(name) {
            return Err(ConnectionError::Invalid(format!(
                "connection name {name:?} is not valid: use lower-case letters, digits, `-` and `_`, for example `personal` or `work`"
            )));
        }
        let wanted = source.secret_names();
        let field = match field {
            Some(f) => f.to_owned(),
            None => match wanted.len() {
                1 => wanted.iter().next().cloned().unwrap_or_default(),
                0 => {
                    return Err(ConnectionError::Invalid(format!(
                        "source `{}` does not use any secret: add `${{secret:NAME}}` to a value of its `env` (command) or `headers` (url) in {}",
                        source.id,
                        source.file.display()
                    )));
                }
                _ => {
                    return Err(ConnectionError::Invalid(format!(
                        "source `{}` uses several secrets ({}); pick one with --field",
                        source.id,
                        wanted.iter().cloned().collect::<Vec<_>>().join(", ")
                    )));
                }
            },
        };
        if !capa_config::secret_ref::is_secret_name(&field) {
            return Err(ConnectionError::Invalid(format!(
                "field {field:?} is not a valid secret name (letters, digits, `-`, `_`)"
            )));
        }
        if value.expose().len() < MIN_SECRET_LEN {
            return Err(ConnectionError::Invalid(format!(
                "the secret is shorter than {MIN_SECRET_LEN} characters; that is too short to be a credential (and too short to redact safely)"
            )));
        }
        let key = connection_key(&self.store, source);
        self.keychain
            .set(&SecretKey::new(&key, name, &field), &value)?;
        self.redactor.add(value.expose());
        Ok(self
            .store
            .upsert_connection_field(&key, name, &field, make_default, now_ms())?)
    }

    /// The key the connections of `source` are stored under (a project's source has its own).
    pub fn key_of(&self, source: &SourceConfig) -> String {
        connection_key(&self.store, source)
    }

    /// Where secrets are kept (the OS keychain, or the encrypted file without one), and the
    /// file when it is that.
    pub fn secret_store(&self) -> (capa_secrets::StoreKind, Option<std::path::PathBuf>) {
        let kind = self.keychain.store_kind();
        let file = (kind == capa_secrets::StoreKind::File)
            .then(|| self.keychain.fallback_file())
            .flatten();
        (kind, file)
    }

    pub fn list(&self) -> Result<Vec<ConnectionRecord>, ConnectionError> {
        Ok(self.store.connections()?)
    }

    /// Removes connection `name` of `source` as configured now: for a project file's source its
    /// own connection (stored under a key of its file), not the global source's of the same id.
    pub fn remove_of(
        &self,
        source: &SourceConfig,
        name: &str,
    ) -> Result<ConnectionRecord, ConnectionError> {
        self.remove(&connection_key(&self.store, source), name)
    }

    /// Removes a connection and its secrets, by the key it is listed under.
    pub fn remove(&self, source_id: &str, name: &str) -> Result<ConnectionRecord, ConnectionError> {
        let record = self.store.connection(source_id, name)?.ok_or_else(|| {
            ConnectionError::Invalid(format!(
                "source `{source_id}` has no connection named `{name}`; `capa connections list` shows them"
            ))
        })?;
        for field in &record.fields {
            // A large value (an OAuth token set) is stored in parts; this deletes them all.
            self.keychain
                .delete_large(&SecretKey::new(source_id, name, field))?;
        }
        self.store.remove_connection(source_id, name)?;
        Ok(record)
    }

    /// The token set of OAuth connection `name` stored under `source_key`, whose secrets go to
    /// the redactor as they are read or written.
    pub fn token_store(&self, source_key: &str, name: &str) -> capa_oauth::TokenStore {
        let redactor = Arc::clone(&self.redactor);
        capa_oauth::TokenStore::new(
            self.keychain.clone(),
            SecretKey::new(source_key, name, capa_oauth::OAUTH_FIELD),
            Arc::new(move |secret| redactor.add(secret)),
        )
    }

    /// Records that connection `name` of `source_key` holds an OAuth sign-in (its tokens are in
    /// the keychain already). The first connection of a source becomes its default.
    pub fn record_oauth(
        &self,
        source_key: &str,
        name: &str,
        make_default: bool,
    ) -> Result<ConnectionRecord, ConnectionError> {
        Ok(self.store.upsert_connection_field(
            source_key,
            name,
            capa_oauth::OAUTH_FIELD,
            make_default,
            now_ms(),
        )?)
    }

    /// The secrets of connection `name`, or of the default connection, stored under `source_id`
    /// (a source's connection key: see [`connection_key`]). `Ok(None)` when there is no such
    /// connection.
    pub fn resolve(
        &self,
        source_id: &str,
        name: Option<&str>,
    ) -> Result<Option<ResolvedConnection>, ConnectionError> {
        let records = self.store.connections()?;
        let record = records.into_iter().find(|c| {
            c.source == source_id
                && match name {
                    Some(n) => c.name == n,
                    None => c.is_default,
                }
        });
        let Some(record) = record else {
            return Ok(None);
        };
        let mut secrets = BTreeMap::new();
        for field in record
            .fields
            .iter()
            .filter(|f| *f != capa_oauth::OAUTH_FIELD)
        {
            if let Some(value) =
                self.keychain
                    .get(&SecretKey::new(source_id, &record.name, field))?
            {
                self.redactor.add(value.expose());
                secrets.insert(field.clone(), value);
            }
        }
        Ok(Some(ResolvedConnection {
            name: record.name,
            secrets,
        }))
    }

    /// Loads every stored secret into the redactor, so that values are redacted even before a
    /// source that uses them starts.
    pub fn load_into_redactor(&self) -> Result<(), ConnectionError> {
        for record in self.store.connections()? {
            for field in &record.fields {
                let key = SecretKey::new(&record.source, &record.name, field);
                if field == capa_oauth::OAUTH_FIELD {
                    if let Some(value) = self.keychain.get_large(&key)? {
                        for secret in capa_oauth::secrets_in(value.expose()) {
                            self.redactor.add(&secret);
                        }
                    }
                } else if let Some(value) = self.keychain.get(&key)? {
                    self.redactor.add(value.expose());
                }
            }
        }
        Ok(())
    }
}
