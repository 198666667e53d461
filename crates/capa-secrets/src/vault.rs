//! The fallback store for secrets on a machine where no OS keychain answers (a minimal desktop,
//! WSL, a server without a Secret Service): an encrypted file in the data dir.
//!
//! - `secrets.vault`: JSON, `{"v": 1, "entries": {"<service>/<account>": "<hex>"}}`, each value
//!   AES-256-GCM with a fresh 96-bit nonce (`nonce ‖ ciphertext ‖ tag`, hex), the entry's name as
//!   associated data, so an entry moved under another name does not open.
//! - `secrets.key`: the 32-byte key, made on the first write, mode 0600 like the vault.
//!
//! What this protects, plainly (docs/security.md, "Secrets without a keychain"): the values are
//! not in clear on disk, in backups that leave the key file out, or in the database; a damaged
//! or edited vault is refused, never half read. It does not protect against a program running as
//! the same user, which can read the key file as it could the keychain of an unlocked session.
//!
//! Writes replace the file in one step (a sibling file, then a rename) under a lock of this
//! process; two hub processes writing at the same moment can lose one of the two writes.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use aws_lc_rs::aead::{AES_256_GCM, Aad, LessSafeKey, NONCE_LEN, Nonce, UnboundKey};
use aws_lc_rs::rand::{SecureRandom, SystemRandom};
use serde::{Deserialize, Serialize};

use crate::SecretError;

/// The vault's file in the data dir.
pub const VAULT_FILE: &str = "secrets.vault";
/// The vault key's file in the data dir.
pub const KEY_FILE: &str = "secrets.key";
const KEY_BYTES: usize = 32;
const FORMAT: u32 = 1;

#[derive(Debug, Default, Serialize, Deserialize)]
struct VaultFile {
    v: u32,
    entries: BTreeMap<String, String>,
}

/// Secrets in an encrypted file, by entry name (`<service>/<account>`).
#[derive(Debug)]
pub struct FileVault {
    dir: PathBuf,
    lock: Mutex<()>,
}

impl FileVault {
    /// The vault in `dir` (the hub's private data dir); nothing is read or made until used.
    pub fn new(dir: impl Into<PathBuf>) -> Self {
        Self {
            dir: dir.into(),
            lock: Mutex::new(()),
        }
    }

    /// Where the encrypted values are.
    pub fn file(&self) -> PathBuf {
        self.dir.join(VAULT_FILE)
    }

    pub fn get(&self, name: &str) -> Result<Option<String>, SecretError> {
        let _held = self
            .lock
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let vault = self.load()?;
        let Some(sealed) = vault.entries.get(name) else {
            return Ok(None);
        };
        let key = self
            .key(false)?
            .ok_or_else(|| self.damaged("its key file is missing"))?;
        open(&key, name, sealed)
            .map(Some)
            .ok_or_else(|| self.damaged(&format!("the entry for {name} does not open")))
    }

    pub fn set(&self, name: &str, value: &str) -> Result<(), SecretError> {
        let _held = self
            .lock
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let mut vault = self.load()?;
        let key = self
            .key(true)?
            .ok_or_else(|| self.damaged("its key file is missing"))?;
        let sealed = seal(&key, name, value).ok_or_else(|| self.failed("could not encrypt"))?;
        vault.entries.insert(name.to_owned(), sealed);
        self.save(&vault)
    }

    /// Deletes an entry; a missing one (or no vault at all) is not an error.
    pub fn delete(&self, name: &str) -> Result<(), SecretError> {
        let _held = self
            .lock
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let mut vault = self.load()?;
        if vault.entries.remove(name).is_some() {
            self.save(&vault)?;
        }
        Ok(())
    }

    fn load(&self) -> Result<VaultFile, SecretError> {
        let text = match std::fs::read_to_string(self.file()) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(VaultFile::default()),
            Err(e) => return Err(self.failed(&e.to_string())),
        };
        let vault: VaultFile = serde_json::from_str(&text)
            .map_err(|e| self.damaged(&format!("it is not the vault's JSON ({e})")))?;
        if vault.v != FORMAT {
            return Err(self.damaged(&format!(
                "it has format {} (this hub reads {FORMAT})",
                vault.v
            )));
        }
        Ok(vault)
    }

    fn save(&self, vault: &VaultFile) -> Result<(), SecretError> {
        let vault = VaultFile {
            v: FORMAT,
            entries: vault.entries.clone(),
        };
        let text = serde_json::to_vec_pretty(&vault).map_err(|e| self.failed(&e.to_string()))?;
        write_private_file(&self.file(), &text).map_err(|e| self.failed(&e.to_string()))
    }

    /// The key; made (0600) when `create` and there is none yet.
    fn key(&self, create: bool) -> Result<Option<[u8; KEY_BYTES]>, SecretError> {
        let path = self.dir.join(KEY_FILE);
        match std::fs::read(&path) {
            Ok(bytes) => <[u8; KEY_BYTES]>::try_from(bytes.as_slice())
                .map(Some)
                .map_err(|_| {
                    self.damaged(&format!("{} is not a {KEY_BYTES}-byte key", path.display()))
                }),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound && create => {
                let mut key = [0u8; KEY_BYTES];
                SystemRandom::new()
                    .fill(&mut key)
                    .map_err(|_| self.failed("the system gave no randomness for a key"))?;
                write_private_file(&path, &key).map_err(|e| self.failed(&e.to_string()))?;
                Ok(Some(key))
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(self.failed(&e.to_string())),
        }
    }

    fn damaged(&self, why: &str) -> SecretError {
        SecretError::Vault(format!(
            "the secrets file {} cannot be read: {why}; store the secrets again after moving it away",
            self.file().display()
        ))
    }

    fn failed(&self, why: &str) -> SecretError {
        SecretError::Vault(format!("the secrets file {}: {why}", self.file().display()))
    }
}

/// `nonce ‖ ciphertext ‖ tag` of `value` under `key`, bound to `name`, as hex.
fn seal(key: &[u8; KEY_BYTES], name: &str, value: &str) -> Option<String> {
    let key = LessSafeKey::new(UnboundKey::new(&AES_256_GCM, key).ok()?);
    let mut nonce = [0u8; NONCE_LEN];
    SystemRandom::new().fill(&mut nonce).ok()?;
    let mut data = value.as_bytes().to_vec();
    key.seal_in_place_append_tag(
        Nonce::assume_unique_for_key(nonce),
        Aad::from(aad(name).as_bytes()),
        &mut data,
    )
    .ok()?;
    let mut out = nonce.to_vec();
    out.extend_from_slice(&data);
    Some(hex(&out))
}

/// The value `sealed` holds, if it opens under `key` for `name`.
fn open(key: &[u8; KEY_BYTES], name: &str, sealed: &str) -> Option<String> {
    let bytes = unhex(sealed)?;
    if bytes.len() < NONCE_LEN {
        return None;
    }
    let (nonce, data) = bytes.split_at(NONCE_LEN);
    let key = LessSafeKey::new(UnboundKey::new(&AES_256_GCM, key).ok()?);
    let mut data = data.to_vec();
    let plain = key
        .open_in_place(
            Nonce::try_assume_unique_for_key(nonce).ok()?,
            Aad::from(aad(name).as_bytes()),
            &mut data,
        )
        .ok()?;
    String::from_utf8(plain.to_vec()).ok()
}

fn aad(name: &str) -> String {
    format!("capabilities secrets vault v{FORMAT}\n{name}")
}

pub(crate) fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn unhex(text: &str) -> Option<Vec<u8>> {
    if !text.len().is_multiple_of(2) {
        return None;
    }
    (0..text.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(text.get(i..i + 2)?, 16).ok())
        .collect()
}

/// Replaces `path` with `bytes` as one step, readable and writable by this user only: written to
/// a fresh sibling file created 0600 (never one someone else made), then renamed over `path`, so
/// a reader sees the old content or the new, never half of it.
pub fn write_private_file(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let mut suffix = [0u8; 8];
    SystemRandom::new()
        .fill(&mut suffix)
        .map_err(|_| std::io::Error::other("the system gave no randomness"))?;
    let name = path
        .file_name()
        .ok_or_else(|| std::io::Error::other(format!("{} names no file", path.display())))?;
    let mut tmp_name = std::ffi::OsString::from(".");
    tmp_name.push(name);
    tmp_name.push(format!(".{}.tmp", hex(&suffix)));
    let tmp = path.with_file_name(tmp_name);
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    let written = options
        .open(&tmp)
        .and_then(|mut file| {
            std::io::Write::write_all(&mut file, bytes).and_then(|()| file.sync_all())
        })
        .and_then(|()| std::fs::rename(&tmp, path));
    if written.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    written
}

#[cfg(test)]
mod tests {
    use super::*;

    const TRICKY: &str = "p\"a's\\s w\u{f6}rd\n\t\u{1f511} $(rm -rf ~)";

    #[test]
    fn a_value_goes_in_encrypted_and_comes_back_whole() {
        let dir = tempfile::tempdir().expect("tempdir");
        let vault = FileVault::new(dir.path());
        assert_eq!(vault.get("svc/a").expect("get"), None);
        vault.set("svc/a", TRICKY).expect("set");
        vault.set("svc/b", "other").expect("set");
        assert_eq!(vault.get("svc/a").expect("get").as_deref(), Some(TRICKY));
        let on_disk = std::fs::read_to_string(vault.file()).expect("read");
        assert!(
            !on_disk.contains("p\\\"a") && !on_disk.contains("other"),
            "{on_disk}"
        );
        // A fresh vault on the same dir (the next start of the hub) reads it.
        let again = FileVault::new(dir.path());
        assert_eq!(again.get("svc/b").expect("get").as_deref(), Some("other"));
        again.delete("svc/b").expect("delete");
        again
            .delete("svc/missing")
            .expect("a missing entry deletes");
        assert_eq!(vault.get("svc/b").expect("get"), None);
        assert_eq!(vault.get("svc/a").expect("get").as_deref(), Some(TRICKY));
    }

    #[cfg(unix)]
    #[test]
    fn the_vault_and_its_key_are_this_user_s_only() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().expect("tempdir");
        let vault = FileVault::new(dir.path());
        vault.set("svc/a", "x").expect("set");
        for file in [VAULT_FILE, KEY_FILE] {
            let mode = std::fs::metadata(dir.path().join(file))
                .expect("stat")
                .permissions()
                .mode();
            assert_eq!(mode & 0o777, 0o600, "{file}");
        }
    }

    #[test]
    fn an_entry_moved_or_edited_or_a_key_swapped_does_not_open() {
        let dir = tempfile::tempdir().expect("tempdir");
        let vault = FileVault::new(dir.path());
        vault.set("svc/a", "alpha").expect("set");
        let text = std::fs::read_to_string(vault.file()).expect("read");
        let mut file: VaultFile = serde_json::from_str(&text).expect("json");
        let sealed = file.entries["svc/a"].clone();
        // Moved under another name: the associated data differs.
        file.entries.insert("svc/b".into(), sealed.clone());
        // One bit of the ciphertext flipped.
        let mut bytes = unhex(&sealed).expect("hex");
        let last = bytes.len() - 1;
        bytes[last] ^= 1;
        file.entries.insert("svc/c".into(), hex(&bytes));
        std::fs::write(vault.file(), serde_json::to_vec(&file).expect("json")).expect("write");
        for name in ["svc/b", "svc/c"] {
            let error = vault.get(name).expect_err("refused").to_string();
            assert!(error.contains("does not open"), "{error}");
        }
        assert_eq!(vault.get("svc/a").expect("get").as_deref(), Some("alpha"));
        std::fs::write(dir.path().join(KEY_FILE), [7u8; KEY_BYTES]).expect("write");
        assert!(vault.get("svc/a").is_err(), "another key opened it");
    }

    #[test]
    fn a_damaged_vault_is_refused_with_what_to_do() {
        let dir = tempfile::tempdir().expect("tempdir");
        let vault = FileVault::new(dir.path());
        std::fs::write(vault.file(), "{not json").expect("write");
        let error = vault.get("svc/a").expect_err("refused").to_string();
        assert!(
            error.contains("cannot be read") && error.contains("store the secrets again"),
            "{error}"
        );
        assert!(
            vault.set("svc/a", "x").is_err(),
            "a write would lose the damaged entries"
        );
    }
}
