//! Where the hub keeps its files: the global capabilities file in the platform's config dir, and
//! the database, token and discovery file in the platform's data dir. `CAPA_CONFIG_DIR` and
//! `CAPA_DATA_DIR` override both (tests and portable setups use them); `CAPA_STORE` puts the
//! database in PostgreSQL instead (a team hub, docs/team.md).

use std::path::{Path, PathBuf};

/// The hub's directories, and where its database is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HubPaths {
    pub config_dir: PathBuf,
    pub data_dir: PathBuf,
    pub store: StoreAt,
}

/// Where the hub's database is.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum StoreAt {
    /// SQLite, `hub.db` in the data dir: a person's hub.
    #[default]
    DataDir,
    /// Another database, by its address (`postgres://…`): a team hub's.
    Url(StoreUrl),
}

/// A database's address. It may hold a password: its `Debug` shows the scheme and host only.
#[derive(Clone, PartialEq, Eq)]
pub struct StoreUrl(String);

impl StoreUrl {
    pub fn new(url: impl Into<String>) -> Self {
        Self(url.into())
    }

    /// The whole address, password included: for the database driver only.
    pub fn expose(&self) -> &str {
        &self.0
    }

    /// The password the address holds, if any (`scheme://user:password@host…`, or a
    /// `password=` option), as written and percent-decoded as the driver uses it, so that both
    /// can be redacted wherever they might show.
    pub fn passwords(&self) -> Vec<String> {
        let in_credentials = self
            .authority()
            .and_then(|authority| authority.rsplit_once('@'))
            .and_then(|(credentials, _)| credentials.split_once(':'))
            .map(|(_, password)| password);
        let in_options = self
            .0
            .split_once('?')
            .into_iter()
            .flat_map(|(_, options)| options.split('&'))
            .filter_map(|option| option.strip_prefix("password="));
        let mut passwords = Vec::new();
        for written in in_credentials.into_iter().chain(in_options) {
            if written.is_empty() {
                continue;
            }
            let decoded = percent_decoded(written);
            passwords.push(written.to_owned());
            if decoded != written {
                passwords.push(decoded);
            }
        }
        passwords
    }

    /// The address without its credentials, path or options: `postgres://db.internal:5432`.
    pub fn shown(&self) -> String {
        let (Some((scheme, _)), Some(authority)) = (self.0.split_once("://"), self.authority())
        else {
            return "(an address)".to_owned();
        };
        let host = authority
            .rsplit_once('@')
            .map_or(authority, |(_, host)| host);
        format!("{scheme}://{host}")
    }

    /// `user:password@host:port`: what follows the scheme, up to the path or the options.
    fn authority(&self) -> Option<&str> {
        let (_, rest) = self.0.split_once("://")?;
        rest.split(['/', '?']).next()
    }
}

/// `text` with `%XX` escapes decoded (as UTF-8, lossily); others kept as they are.
fn percent_decoded(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let escaped = (bytes[i] == b'%')
            .then(|| bytes.get(i + 1..i + 3))
            .flatten()
            .and_then(|hex| std::str::from_utf8(hex).ok())
            .and_then(|hex| u8::from_str_radix(hex, 16).ok());
        if let Some(byte) = escaped {
            out.push(byte);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Any text is an address to try (the driver says what is wrong with it); held in this type
/// from the start (a command-line flag) so that its `Debug` never shows a password.
impl std::str::FromStr for StoreUrl {
    type Err = std::convert::Infallible;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        Ok(Self::new(text))
    }
}

impl std::fmt::Debug for StoreUrl {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("StoreUrl").field(&self.shown()).finish()
    }
}

impl HubPaths {
    /// From `CAPA_CONFIG_DIR` / `CAPA_DATA_DIR`, else the platform's dirs (for example
    /// `~/.config/capabilities` and `~/.local/share/capabilities` on Linux).
    pub fn from_env() -> Self {
        let pick = |var: &str, base: Option<PathBuf>| {
            std::env::var_os(var)
                .map(PathBuf::from)
                .or_else(|| base.map(|b| b.join("capabilities")))
                .unwrap_or_else(|| PathBuf::from(".capabilities"))
        };
        let store = std::env::var("CAPA_STORE")
            .ok()
            .filter(|url| !url.is_empty())
            .map_or(StoreAt::DataDir, |url| StoreAt::Url(StoreUrl::new(url)));
        Self {
            config_dir: pick("CAPA_CONFIG_DIR", dirs::config_dir()),
            data_dir: pick("CAPA_DATA_DIR", dirs::data_dir()),
            store,
        }
    }

    pub fn in_dir(dir: &Path) -> Self {
        Self {
            config_dir: dir.join("config"),
            data_dir: dir.join("data"),
            store: StoreAt::DataDir,
        }
    }

    pub fn database(&self) -> PathBuf {
        self.data_dir.join("hub.db")
    }
    /// The bearer token of the HTTP endpoint (mode 0600).
    pub fn token(&self) -> PathBuf {
        self.data_dir.join("token")
    }
    /// Written by a running hub: its URL and process id.
    pub fn discovery(&self) -> PathBuf {
        self.data_dir.join("hub.json")
    }
    /// Signs the `requestState` of approvals (mode 0600).
    pub fn state_key(&self) -> PathBuf {
        self.data_dir.join("state.key")
    }
    /// Present while approvals are paused, so that a pause outlives a restart of the hub.
    pub fn approvals_paused(&self) -> PathBuf {
        self.data_dir.join("approvals-paused")
    }
    pub fn demo_notes(&self) -> PathBuf {
        self.data_dir.join("demo-notes.json")
    }
    pub fn global_config(&self) -> PathBuf {
        self.config_dir.join("capabilities.yaml")
    }
    /// The user's allow / ask / deny rules (docs/policies.md); `capa policy` edits it.
    pub fn policy_file(&self) -> PathBuf {
        self.config_dir.join(capa_config::POLICY_FILE_NAME)
    }
}

/// Why the data dir cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum DataDirError {
    #[error("cannot create {}: {source}", path.display())]
    Create {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error(
        "{} is writable by other users (mode {mode:o}), who could plant a token, a key or a database there; run `chmod 700 {}` and start again",
        path.display(),
        path.display()
    )]
    WritableByOthers { path: PathBuf, mode: u32 },
}

impl HubPaths {
    /// Creates the data dir private to this user (0700), or checks an existing one: refused
    /// when other users may write to it, tightened (with a log line) when they may only read it
    /// (data dirs made before this check were 0755).
    pub fn ensure_private_data_dir(&self) -> Result<(), DataDirError> {
        let path = &self.data_dir;
        let create = |source| DataDirError::Create {
            path: path.clone(),
            source,
        };
        if !path.exists() {
            if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
                std::fs::create_dir_all(parent).map_err(create)?;
            }
            let mut builder = std::fs::DirBuilder::new();
            #[cfg(unix)]
            std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
            match builder.create(path) {
                Ok(()) => return Ok(()),
                // Another process created it meanwhile: check it like any existing one.
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
                Err(e) => return Err(create(e)),
            }
        }
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(path)
                .map_err(create)?
                .permissions()
                .mode()
                & 0o777;
            if mode & 0o022 != 0 {
                return Err(DataDirError::WritableByOthers {
                    path: path.clone(),
                    mode,
                });
            }
            if mode & 0o077 != 0 {
                tracing::info!(dir = %path.display(), mode = format!("{mode:o}"), "making the data dir private (0700)");
                std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o700))
                    .map_err(create)?;
            }
        }
        Ok(())
    }

    /// The database's path, its file created private (0600) before SQLite opens it, so that
    /// its WAL and SHM files (which SQLite creates with the database's mode) are private from
    /// the start; files from before this check are tightened.
    pub fn private_database(&self) -> std::io::Result<PathBuf> {
        let db = self.database();
        ensure_private_file(&db)?;
        for suffix in ["-wal", "-shm"] {
            let mut name = db.clone().into_os_string();
            name.push(suffix);
            let side = PathBuf::from(name);
            if side.exists() {
                ensure_private_file(&side)?;
            }
        }
        Ok(db)
    }
}

/// Creates `path` (when missing) readable and writable by this user only, and tightens an
/// existing file that others may read. For files that hold secrets or history: the database
/// (SQLite gives its WAL and SHM files the database's mode), tokens, keys.
pub fn ensure_private_file(path: &Path) -> std::io::Result<()> {
    let mut options = std::fs::OpenOptions::new();
    options.append(true).create(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    options.open(path)?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(path)?.permissions().mode() & 0o777;
        if mode & 0o077 != 0 {
            std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600))?;
        }
    }
    Ok(())
}

/// Replaces `path` with `bytes` as one step, this user's only (capa-secrets has it, for its
/// secrets file, and the hub's other private files use the same).
pub use capa_secrets::write_private_file;

#[cfg(all(test, unix))]
mod private_tests {
    use std::os::unix::fs::PermissionsExt;

    use super::*;

    fn mode(path: &Path) -> u32 {
        std::fs::metadata(path).expect("stat").permissions().mode() & 0o777
    }

    #[test]
    fn the_data_dir_is_created_private_and_a_shared_one_is_refused() {
        let dir = tempfile::tempdir().expect("tempdir");
        let paths = HubPaths::in_dir(dir.path());
        paths.ensure_private_data_dir().expect("created");
        assert_eq!(mode(&paths.data_dir), 0o700);
        std::fs::set_permissions(&paths.data_dir, std::fs::Permissions::from_mode(0o755))
            .expect("chmod");
        paths.ensure_private_data_dir().expect("tightened");
        assert_eq!(mode(&paths.data_dir), 0o700);
        std::fs::set_permissions(&paths.data_dir, std::fs::Permissions::from_mode(0o777))
            .expect("chmod");
        let refused = paths.ensure_private_data_dir().expect_err("refused");
        assert!(refused.to_string().contains("chmod 700"), "{refused}");
    }

    #[test]
    fn private_files_are_created_0600_and_tightened() {
        let dir = tempfile::tempdir().expect("tempdir");
        let file = dir.path().join("hub.db");
        ensure_private_file(&file).expect("created");
        assert_eq!(mode(&file), 0o600);
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o644)).expect("chmod");
        ensure_private_file(&file).expect("tightened");
        assert_eq!(mode(&file), 0o600);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_store_address_never_shows_its_password() {
        let url = StoreUrl::new("postgres://capa:s3cr\"et\\@db.internal:5432/hub?sslmode=disable");
        assert_eq!(url.passwords(), vec!["s3cr\"et\\".to_owned()]);
        let encoded = StoreUrl::new("postgres://capa:p%40ss%22w@db/hub?password=other%2F1");
        assert_eq!(
            encoded.passwords(),
            vec!["p%40ss%22w", "p@ss\"w", "other%2F1", "other/1"]
        );
        assert_eq!(encoded.shown(), "postgres://db");
        assert_eq!(url.shown(), "postgres://db.internal:5432");
        let debug = format!(
            "{:?}",
            HubPaths {
                store: StoreAt::Url(url.clone()),
                ..HubPaths::in_dir(Path::new("/tmp/x"))
            }
        );
        assert!(!debug.contains("s3cr"), "{debug}");
        assert!(debug.contains("db.internal"), "{debug}");
        assert!(StoreUrl::new("postgres://db/hub").passwords().is_empty());
        assert!(
            StoreUrl::new("postgres://capa@db/hub")
                .passwords()
                .is_empty()
        );
        assert_eq!(StoreUrl::new("host=db user=capa").shown(), "(an address)");
    }
}
