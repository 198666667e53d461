//! Connection secrets in the OS keychain (macOS Keychain, Windows Credential Manager, Linux Secret
//! Service), and the [`Secret`] type that keeps them out of logs and serialised output.
//!
//! Only this crate talks to the keychain. Configuration and the database hold references
//! (source, connection, field); values exist in memory only while the hub uses them.

use std::fmt;

/// Keychain service name under which every secret of the hub is stored.
pub const DEFAULT_SERVICE: &str = "capabilities";

/// A secret value. `Debug` and `Display` print `[secret]`; there is no `Serialize`.
#[derive(Clone, PartialEq, Eq)]
pub struct Secret(String);

impl Secret {
    pub fn new(value: impl Into<String>) -> Self {
        Self(value.into())
    }
    /// The clear value, for the one place that hands it to an upstream.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("[secret]")
    }
}

impl fmt::Display for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("[secret]")
    }
}

/// Where one secret lives: a field of a connection of a source.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct SecretKey {
    pub source: String,
    pub connection: String,
    pub field: String,
}

impl SecretKey {
    pub fn new(source: &str, connection: &str, field: &str) -> Self {
        Self {
            source: source.to_owned(),
            connection: connection.to_owned(),
            field: field.to_owned(),
        }
    }

    fn account(&self) -> String {
        format!("{}/{}/{}", self.source, self.connection, self.field)
    }
}

/// Why the keychain could not be used.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SecretError {
    /// No keychain is reachable (on Linux: no Secret Service on the session bus, or it is locked).
    #[error(
        "the OS keychain is not available ({0}); on Linux, start a Secret Service such as gnome-keyring in your desktop session"
    )]
    Unavailable(String),
    /// The keychain answered with an error.
    #[error("keychain error for {account}: {message}")]
    Keychain { account: String, message: String },
}

/// The OS keychain under one service name.
#[derive(Debug, Clone)]
pub struct Keychain {
    service: String,
}

impl Default for Keychain {
    fn default() -> Self {
        Self::new(DEFAULT_SERVICE)
    }
}

impl Keychain {
    pub fn new(service: impl Into<String>) -> Self {
        Self {
            service: service.into(),
        }
    }

    /// Checks that a keychain is reachable.
    pub fn check(&self) -> Result<(), SecretError> {
        keyring::Entry::store_status()
            .as_ref()
            .map_err(|e| SecretError::Unavailable(e.to_string()))
            .copied()
    }

    fn entry(&self, key: &SecretKey) -> Result<keyring::Entry, SecretError> {
        self.check()?;
        keyring::Entry::new(&self.service, &key.account()).map_err(|e| SecretError::Keychain {
            account: key.account(),
            message: e.to_string(),
        })
    }

    /// Stores (or replaces) a secret.
    pub fn set(&self, key: &SecretKey, value: &Secret) -> Result<(), SecretError> {
        self.entry(key)?
            .set_password(value.expose())
            .map_err(|e| keychain_error(key, &e))
    }

    /// Reads a secret; `None` when it is not stored.
    pub fn get(&self, key: &SecretKey) -> Result<Option<Secret>, SecretError> {
        match self.entry(key)?.get_password() {
            Ok(value) => Ok(Some(Secret(value))),
            Err(keyring::Error::NoEntry) => Ok(None),
            Err(e) => Err(keychain_error(key, &e)),
        }
    }

    /// Deletes a secret; deleting a missing one is not an error.
    pub fn delete(&self, key: &SecretKey) -> Result<(), SecretError> {
        match self.entry(key)?.delete_credential() {
            Ok(()) | Err(keyring::Error::NoEntry) => Ok(()),
            Err(e) => Err(keychain_error(key, &e)),
        }
    }
}

fn keychain_error(key: &SecretKey, error: &keyring::Error) -> SecretError {
    SecretError::Keychain {
        account: key.account(),
        message: error.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secrets_never_print_their_value() {
        let secret = Secret::new("hunter2");
        assert_eq!(format!("{secret:?} {secret}"), "[secret] [secret]");
    }
}
