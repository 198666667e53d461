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
    /// A stored value is not whole or not readable (its parts do not add up): store it again.
    #[error("the value stored for {account} is damaged (its parts do not add up); store it again")]
    Damaged { account: String },
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
    sha2::Sha256::digest(text.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
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
