//! Connection secrets in the OS keychain (macOS Keychain, Windows Credential Manager, Linux Secret
//! Service), and the [`Secret`] type that keeps them out of logs and serialised output. Where no
//! keychain answers, a hub's keychain falls back to an encrypted file in its data dir
//! ([`vault`]), and says so ([`Keychain::store_kind`]).
//!
//! Only this crate talks to the keychain. Configuration and the database hold references
//! (source, connection, field); values exist in memory only while the hub uses them.

use std::fmt;
use std::path::PathBuf;
use std::sync::{Arc, OnceLock};

pub mod vault;

pub use vault::{FileVault, write_private_file};

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
    /// A stored value is not whole or not readable (its parts do not add up): store it again.
    #[error("the value stored for {account} is damaged (its parts do not add up); store it again")]
    Damaged { account: String },
    /// The fallback file could not be read or written (the message names it and what to do).
    #[error("{0}")]
    Vault(String),
}

/// Where a keychain keeps secrets.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum StoreKind {
    /// The OS keychain.
    Keychain,
    /// No OS keychain answered: the encrypted file in the data dir ([`vault`]).
    File,
    /// Neither: secrets cannot be stored.
    None,
}

/// The OS keychain under one service name, with the hub's fallback file where it has one.
#[derive(Debug, Clone)]
pub struct Keychain {
    service: String,
    /// Where secrets go when no OS keychain answers; none: they cannot be stored then.
    fallback: Option<Arc<FileVault>>,
    /// Whether the OS keychain answered, asked once (the first use) and kept.
    os: Arc<OnceLock<Result<(), String>>>,
}

impl Default for Keychain {
    fn default() -> Self {
        Self::new(DEFAULT_SERVICE)
    }
}

impl Keychain {
    /// The OS keychain alone: without one, storing a secret fails with
    /// [`SecretError::Unavailable`].
    pub fn new(service: impl Into<String>) -> Self {
        Self {
            service: service.into(),
            fallback: None,
            os: Arc::default(),
        }
    }

    /// The OS keychain, or where none answers, the encrypted file in `data_dir` ([`vault`]).
    pub fn with_fallback(service: impl Into<String>, data_dir: impl Into<PathBuf>) -> Self {
        Self {
            fallback: Some(Arc::new(FileVault::new(data_dir))),
            ..Self::new(service)
        }
    }

    /// Checks that secrets can be stored (the OS keychain answers, or there is a fallback).
    pub fn check(&self) -> Result<(), SecretError> {
        match (self.os_status(), &self.fallback) {
            (Ok(()), _) | (Err(_), Some(_)) => Ok(()),
            (Err(e), None) => Err(SecretError::Unavailable(e.clone())),
        }
    }

    /// Where secrets go.
    pub fn store_kind(&self) -> StoreKind {
        match (self.os_status(), &self.fallback) {
            (Ok(()), _) => StoreKind::Keychain,
            (Err(_), Some(_)) => StoreKind::File,
            (Err(_), None) => StoreKind::None,
        }
    }

    /// The fallback file's path, when secrets go there.
    pub fn fallback_file(&self) -> Option<PathBuf> {
        self.fallback.as_ref().map(|v| v.file())
    }

    /// Whether the OS keychain answers: its store initialised, and a read of an entry that does
    /// not exist came back "no entry" (on Linux that takes the Secret Service on the session
    /// bus). Asked once per keychain.
    fn os_status(&self) -> &Result<(), String> {
        self.os.get_or_init(|| {
            let status = keyring::Entry::store_status()
                .as_ref()
                .map_err(ToString::to_string)
                .copied()
                .and_then(|()| {
                    let probe = keyring::Entry::new(&self.service, "capabilities-probe")
                        .map_err(|e| e.to_string())?;
                    match probe.get_password() {
                        Ok(_) | Err(keyring::Error::NoEntry) => Ok(()),
                        Err(e) => Err(e.to_string()),
                    }
                });
            if let (Err(e), Some(vault)) = (&status, &self.fallback) {
                // The platform's own words (a D-Bus error on Linux) are for a developer; the
                // person reads where the secrets went.
                tracing::debug!(error = %e, "the OS keychain did not answer");
                tracing::warn!(
                    "no OS keychain answers here (on Linux: no Secret Service on the session bus); secrets are kept encrypted in {} instead (docs/security.md, \"Secrets without a keychain\")",
                    vault.file().display()
                );
            }
            status
        })
    }

    fn entry(&self, key: &SecretKey) -> Result<keyring::Entry, SecretError> {
        keyring::Entry::new(&self.service, &key.account()).map_err(|e| SecretError::Keychain {
            account: key.account(),
            message: e.to_string(),
        })
    }

    /// The name of `key` in the fallback file.
    fn vault_name(&self, key: &SecretKey) -> String {
        format!("{}/{}", self.service, key.account())
    }

    /// The fallback, when the OS keychain does not answer; the reason it does not, without one.
    fn file_instead(&self) -> Result<Option<&FileVault>, SecretError> {
        match (self.os_status(), &self.fallback) {
            (Ok(()), _) => Ok(None),
            (Err(_), Some(vault)) => Ok(Some(vault)),
            (Err(e), None) => Err(SecretError::Unavailable(e.clone())),
        }
    }

    /// Stores (or replaces) a secret.
    pub fn set(&self, key: &SecretKey, value: &Secret) -> Result<(), SecretError> {
        if let Some(vault) = self.file_instead()? {
            return vault.set(&self.vault_name(key), value.expose());
        }
        self.entry(key)?
            .set_password(value.expose())
            .map_err(|e| keychain_error(key, &e))
    }

    /// Reads a secret; `None` when it is not stored. With the OS keychain back, a secret kept in
    /// the file while it was away is still found there.
    pub fn get(&self, key: &SecretKey) -> Result<Option<Secret>, SecretError> {
        if let Some(vault) = self.file_instead()? {
            return Ok(vault.get(&self.vault_name(key))?.map(Secret));
        }
        match self.entry(key)?.get_password() {
            Ok(value) => Ok(Some(Secret(value))),
            Err(keyring::Error::NoEntry) => match &self.fallback {
                Some(vault) => Ok(vault.get(&self.vault_name(key))?.map(Secret)),
                None => Ok(None),
            },
            Err(e) => Err(keychain_error(key, &e)),
        }
    }

    /// Deletes a secret, wherever it is; deleting a missing one is not an error.
    pub fn delete(&self, key: &SecretKey) -> Result<(), SecretError> {
        if let Some(vault) = &self.fallback {
            vault.delete(&self.vault_name(key))?;
        }
        if self.file_instead()?.is_some() {
            return Ok(());
        }
        match self.entry(key)?.delete_credential() {
            Ok(()) | Err(keyring::Error::NoEntry) => Ok(()),
            Err(e) => Err(keychain_error(key, &e)),
        }
    }
}

/// The most one keychain entry holds here. Windows Credential Manager keeps at most 2,560 bytes
/// per credential and `keyring` stores the value as UTF-16 there, so 1,024 UTF-8 bytes (at most
/// 2,048 bytes of UTF-16) fit on every platform; larger values are split by [`Keychain::set_large`].
pub const MAX_ENTRY_BYTES: usize = 1024;

/// The first entry of a value stored in parts starts with this, then
/// `<count>:<generation>:<sha256>\n`.
const PARTS_HEADER: &str = "capa-parts:";

/// Where a value stored in parts is: how many entries, which generation of part names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Parts {
    count: usize,
    generation: u64,
}

impl Keychain {
    /// Stores a value of any size: whole when it fits in [`MAX_ENTRY_BYTES`], else in parts.
    /// The first entry (`field`) names how many parts there are, their generation and the
    /// SHA-256 of the whole; the others are `field#<generation>.<n>`. A new value's parts get a
    /// new generation and are written before the first entry, which makes them current; the old
    /// generation's parts are deleted after. A write cut short leaves the old value readable.
    pub fn set_large(&self, key: &SecretKey, value: &Secret) -> Result<(), SecretError> {
        let previous = self.parts_of(key)?;
        let text = value.expose();
        let pieces = split_parts(text);
        if pieces.len() <= 1 && !text.starts_with(PARTS_HEADER) {
            self.set(key, value)?;
        } else {
            let generation = previous.map_or(1, |p| p.generation.wrapping_add(1));
            for (index, piece) in pieces.iter().enumerate().skip(1) {
                self.set(&part_key(key, generation, index), &Secret::new(*piece))?;
            }
            let head = format!(
                "{PARTS_HEADER}{}:{generation}:{}\n{}",
                pieces.len(),
                digest(text),
                pieces.first().copied().unwrap_or_default()
            );
            self.set(key, &Secret::new(head))?;
        }
        if let Some(old) = previous {
            for index in 1..old.count {
                self.delete(&part_key(key, old.generation, index))?;
            }
        }
        Ok(())
    }

    /// Reads a value stored by [`Keychain::set_large`] (or by [`Keychain::set`]). A set of parts
    /// that does not add up (one missing, or changed since) is [`SecretError::Damaged`].
    pub fn get_large(&self, key: &SecretKey) -> Result<Option<Secret>, SecretError> {
        let Some(first) = self.get(key)? else {
            return Ok(None);
        };
        let Some((parts, sum, head)) = parse_header(first.expose()) else {
            return Ok(Some(first));
        };
        let mut whole = String::from(head);
        for index in 1..parts.count {
            let part = self
                .get(&part_key(key, parts.generation, index))?
                .ok_or_else(|| damaged(key))?;
            whole.push_str(part.expose());
        }
        if digest(&whole) != sum {
            return Err(damaged(key));
        }
        Ok(Some(Secret(whole)))
    }

    /// Deletes a value stored by [`Keychain::set_large`] with all its parts.
    pub fn delete_large(&self, key: &SecretKey) -> Result<(), SecretError> {
        if let Some(parts) = self.parts_of(key)? {
            for index in 1..parts.count {
                self.delete(&part_key(key, parts.generation, index))?;
            }
        }
        self.delete(key)
    }

    /// The parts the value under `key` has now; `None` when it is absent or stored whole.
    fn parts_of(&self, key: &SecretKey) -> Result<Option<Parts>, SecretError> {
        Ok(self
            .get(key)?
            .and_then(|first| parse_header(first.expose()).map(|(parts, ..)| parts)))
    }
}

fn part_key(key: &SecretKey, generation: u64, index: usize) -> SecretKey {
    SecretKey::new(
        &key.source,
        &key.connection,
        &format!("{}#{generation}.{index}", key.field),
    )
}

/// Splits `text` into pieces of at most [`MAX_ENTRY_BYTES`] on character boundaries, keeping
/// room in the first for the header.
fn split_parts(text: &str) -> Vec<&str> {
    let mut parts = Vec::new();
    let mut rest = text;
    let mut room = MAX_ENTRY_BYTES - 128;
    while !rest.is_empty() {
        let mut end = rest.len().min(room);
        while !rest.is_char_boundary(end) {
            end -= 1;
        }
        let (part, tail) = rest.split_at(end);
        parts.push(part);
        rest = tail;
        room = MAX_ENTRY_BYTES;
    }
    if parts.is_empty() {
        parts.push("");
    }
    parts
}

fn parse_header(first: &str) -> Option<(Parts, &str, &str)> {
    let rest = first.strip_prefix(PARTS_HEADER)?;
    let (header, head) = rest.split_once('\n')?;
    let mut fields = header.split(':');
    let count = fields.next()?.parse().ok()?;
    let generation = fields.next()?.parse().ok()?;
    let sum = fields.next()?;
    fields
        .next()
        .is_none()
        .then_some((Parts { count, generation }, sum, head))
}

fn digest(text: &str) -> String {
    use sha2::Digest;
    vault::hex(&sha2::Sha256::digest(text.as_bytes()))
}

fn damaged(key: &SecretKey) -> SecretError {
    SecretError::Damaged {
        account: key.account(),
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
    fn parts_fit_an_entry_and_join_back() {
        let text = "é".repeat(3000) + "tail";
        let parts = split_parts(&text);
        assert!(parts.len() > 5);
        assert!(parts[0].len() + 128 <= MAX_ENTRY_BYTES);
        assert!(parts.iter().all(|p| p.len() <= MAX_ENTRY_BYTES));
        assert_eq!(parts.concat(), text);
        assert_eq!(split_parts(""), vec![""]);
    }

    #[test]
    fn a_header_reads_back_and_plain_values_are_no_header() {
        let head = format!("{PARTS_HEADER}3:7:{}\nabc", digest("x"));
        let (parts, sum, rest) = parse_header(&head).expect("a header");
        assert_eq!(
            parts,
            Parts {
                count: 3,
                generation: 7
            }
        );
        assert_eq!((sum, rest), (digest("x").as_str(), "abc"));
        assert!(parse_header("capa-parts: not a header").is_none());
        assert!(parse_header("ghp_plain_token").is_none());
    }

    #[test]
    fn secrets_never_print_their_value() {
        let secret = Secret::new("hunter2");
        assert_eq!(format!("{secret:?} {secret}"), "[secret] [secret]");
    }
}
