//! Where the hub keeps its files: the global capabilities file in the platform's config dir, and
//! the database, token and discovery file in the platform's data dir. `CAPA_CONFIG_DIR` and
//! `CAPA_DATA_DIR` override both (tests and portable setups use them).

use std::path::{Path, PathBuf};

/// The hub's directories.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HubPaths {
    pub config_dir: PathBuf,
    pub data_dir: PathBuf,
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
        Self {
            config_dir: pick("CAPA_CONFIG_DIR", dirs::config_dir()),
            data_dir: pick("CAPA_DATA_DIR", dirs::data_dir()),
        }
    }

    pub fn in_dir(dir: &Path) -> Self {
        Self {
            config_dir: dir.join("config"),
            data_dir: dir.join("data"),
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
