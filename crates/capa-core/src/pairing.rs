//! Paired clients: the MCP clients whose own approval forms a person lets answer for them.
//!
//! Every local process can read the hub's token file, so a form answered by whoever holds the
//! token is no person's answer. A person pairs a client (the app's Clients page, or
//! `capa clients pair` at an interactive terminal): the client gets its own key, kept in its
//! own configuration (`CAPA_CLIENT_KEY` for `capa mcp`, the bearer token over HTTP), and the hub
//! keeps only the key's SHA-256. While the pairing's `forms` switch is on, that client's forms
//! count as the person's answer — never to loosen the policy (docs/security.md, "Who may
//! say yes").

use capa_store::{PairedClient, Store, StoreError};

use crate::clock::now_ms;
use crate::digest::{random_hex, sha256_hex};

/// How every client key starts, so the hub tells one from its own token at a glance.
pub const CLIENT_KEY_PREFIX: &str = "capa_client_";

/// Why pairing failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum PairingError {
    /// The name had nothing printable in it.
    #[error("a paired client needs a name with a printable character, such as \"Claude Code\"")]
    EmptyName,
    /// No system randomness for a key.
    #[error("the system gave no randomness for a client key; cannot pair safely")]
    NoRandomness,
    /// No paired client has this id.
    #[error("no paired client has the id {0}; `capa clients list` shows them")]
    NotFound(String),
    /// The database failed.
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// A new pairing: the stored client and its key, shown to the person once.
pub struct NewPairing {
    pub client: PairedClient,
    /// `capa_client_` and 64 hex digits. Never stored, never logged.
    pub key: String,
}

impl std::fmt::Debug for NewPairing {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NewPairing")
            .field("client", &self.client)
            .field("key", &"[secret]")
            .finish()
    }
}

/// `text` with `key` (a client key written into a file) shown as `capa_client_…`: a diff is
/// shown to the person, and the key goes into the file, never onto the screen.
pub fn mask_client_key(text: &str, key: Option<&str>) -> String {
    match key {
        Some(key) if !key.is_empty() => text.replace(
            key,
            &format!("{CLIENT_KEY_PREFIX}… (this client's own key)"),
        ),
        _ => text.to_owned(),
    }
}

impl NewPairing {
    /// A new id and key for a client named `name`, not stored yet.
    pub fn prepare(name: &str) -> Result<Self, PairingError> {
        let name = capa_domain::client_label(name, "").ok_or(PairingError::EmptyName)?;
        let id = random_hex(8).ok_or(PairingError::NoRandomness)?;
        let secret = random_hex(32).ok_or(PairingError::NoRandomness)?;
        Ok(Self {
            client: PairedClient {
                id: format!("pc_{id}"),
                name,
                forms: true,
                created_at_ms: now_ms(),
                last_seen_ms: None,
            },
            key: format!("{CLIENT_KEY_PREFIX}{secret}"),
        })
    }
}

/// The paired clients in one store (a hub's, or the CLI's own when no hub runs).
#[derive(Debug, Clone, Copy)]
pub struct Pairings<'a> {
    store: &'a Store,
}

impl<'a> Pairings<'a> {
    pub fn new(store: &'a Store) -> Self {
        Self { store }
    }

    /// Pairs a client named `name` with its forms on. Only a person's act may call this (the
    /// app's window, an interactive terminal).
    pub fn pair(&self, name: &str) -> Result<NewPairing, PairingError> {
        let new = NewPairing::prepare(name)?;
        self.record(&new)?;
        Ok(new)
    }

    /// Stores a pairing made with [`NewPairing::prepare`] (when the person applied the change
    /// that writes its key into the client's configuration).
    pub fn record(&self, new: &NewPairing) -> Result<(), PairingError> {
        self.store
            .insert_paired_client(&new.client, &sha256_hex(new.key.as_bytes()))?;
        tracing::info!(client = %new.client.id, name = %new.client.name, "client paired");
        Ok(())
    }

    /// The paired client whose key `given` is, noting that it was seen now; none for anything
    /// else (the hub's token, an unknown or removed key).
    pub fn identify(&self, given: &str) -> Option<PairedClient> {
        self.lookup(given, Some(now_ms()))
    }

    /// The paired client whose key `given` is, without noting it as seen (a key found in a
    /// client's configuration file, for the Clients page).
    pub fn owner_of(&self, given: &str) -> Option<PairedClient> {
        self.lookup(given, None)
    }

    fn lookup(self, given: &str, seen_at_ms: Option<i64>) -> Option<PairedClient> {
        if !given.starts_with(CLIENT_KEY_PREFIX) {
            return None;
        }
        self.store
            .paired_client_by_key(&sha256_hex(given.as_bytes()), seen_at_ms)
            .map_err(|e| tracing::warn!(error = %e, "could not look up a client key"))
            .ok()
            .flatten()
    }

    /// Every paired client, oldest first.
    pub fn list(&self) -> Result<Vec<PairedClient>, PairingError> {
        Ok(self.store.paired_clients()?)
    }

    /// Turns a client's forms on or off. Off is a tightening anyone may make; on must come
    /// from a person, as pairing does.
    pub fn set_forms(&self, id: &str, forms: bool) -> Result<(), PairingError> {
        if !self.store.set_paired_client_forms(id, forms)? {
            return Err(PairingError::NotFound(id.to_owned()));
        }
        tracing::info!(client = %id, forms, "paired client's forms switched");
        Ok(())
    }

    /// Unpairs a client: its key stops working at once.
    pub fn remove(&self, id: &str) -> Result<(), PairingError> {
        if !self.store.remove_paired_client(id)? {
            return Err(PairingError::NotFound(id.to_owned()));
        }
        tracing::info!(client = %id, "client unpaired");
        Ok(())
    }

    /// Notes that the paired client `paired` started `run_id`: only it is shown the run's
    /// forms when the run pauses again.
    pub fn mark_run(&self, run_id: &str, paired: &str) {
        if let Err(e) = self.store.set_run_pairing(run_id, paired) {
            tracing::warn!(error = %e, run = %run_id, "could not record which client started a run");
        }
    }

    /// Whether `paired` started `run_id` (false for a run no paired client started).
    pub fn started_run(&self, run_id: &str, paired: &str) -> bool {
        self.store
            .run_pairing(run_id)
            .ok()
            .flatten()
            .is_some_and(|owner| owner == paired)
    }
}

impl crate::Hub {
    /// The clients a person paired with this hub.
    pub fn pairings(&self) -> Pairings<'_> {
        Pairings::new(self.store())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_key_identifies_its_client_and_nothing_else_does() {
        let store = Store::in_memory().expect("store");
        let pairings = Pairings::new(&store);
        let new = pairings.pair("Claude\u{202e} Code\n").expect("pair");
        assert!(new.key.starts_with(CLIENT_KEY_PREFIX));
        assert_eq!(new.client.name, "Claude Code");
        assert_eq!(
            pairings.identify(&new.key).map(|c| c.id),
            Some(new.client.id.clone())
        );
        assert!(
            pairings.identify("0123abcd").is_none(),
            "a hub token is no client key"
        );
        assert!(pairings.identify(&format!("{}x", new.key)).is_none());
        pairings.remove(&new.client.id).expect("unpair");
        assert!(
            pairings.identify(&new.key).is_none(),
            "an unpaired key stops working"
        );
        assert!(matches!(
            pairings.pair(" \u{7}"),
            Err(PairingError::EmptyName)
        ));
    }
}
