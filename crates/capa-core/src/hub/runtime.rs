//! Sources changed while the hub runs (the local API's add, replace, remove and restart): the
//! list is swapped under its lock, upstreams of the changed source are stopped or started, and
//! the catalog is rebuilt.

use std::sync::{Arc, PoisonError};

use capa_config::SourceConfig;
use capa_upstream::Upstream;
use futures::future::join_all;

use super::Hub;
use super::policy::ChangedBy;
use super::source_def::{Origin, SourceDef};

/// Why a source could not be changed at run time.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SourceChangeError {
    /// No source has this id.
    #[error("no source `{0}`")]
    Unknown(String),
    /// A source with this id is served already.
    #[error("a source `{0}` exists already")]
    Exists(String),
    /// The demo source is built in.
    #[error("the demo source is built in: turn it off with `options.demo: false`")]
    BuiltIn,
}

impl SourceChangeError {
    /// A stable code for the API.
    pub fn code(&self) -> &'static str {
        match self {
            Self::Unknown(_) => "not_found",
            Self::Exists(_) => "already_exists",
            Self::BuiltIn => "read_only",
        }
    }
}

fn def_of(config: SourceConfig) -> SourceDef {
    SourceDef {
        id: config.id.clone(),
        description: config.description.clone(),
        selection: config.selection.clone(),
        origin: Origin::Config(config),
        off: false,
    }
}

impl Hub {
    /// A snapshot of the sources served now.
    pub(super) fn source_defs(&self) -> Vec<SourceDef> {
        // Off sources are in the list too (shown as `off`); nothing starts them.
        self.sources
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// The ids of the sources served now, off ones included.
    pub(crate) fn source_ids(&self) -> Vec<String> {
        self.source_defs().into_iter().map(|d| d.id).collect()
    }

    /// The capabilities files this hub reads: those it started with, plus any file a source
    /// was added from since (the app's Sources page creates the global file with the first
    /// source a person adds). `capa mcp` and the CLI forward to this hub when these are theirs.
    pub fn files(&self) -> Vec<std::path::PathBuf> {
        let mut files = self.config.files.clone();
        let added = self
            .added_files
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        for file in added.iter() {
            if !files.contains(file) {
                files.push(file.clone());
            }
        }
        files
    }

    /// Deletes the stored connections of a removed source (their keychain secrets too): a
    /// person who removes a source does not expect its secrets to stay behind. A connection that
    /// cannot be deleted is logged and left; the removal itself stands.
    fn forget_connections_of(&self, config: &SourceConfig) {
        let key = self.connections.key_of(config);
        let records = match self.connections.list() {
            Ok(records) => records,
            Err(e) => {
                tracing::warn!(error = %e, source = %config.id, "could not list the connections of a removed source");
                return;
            }
        };
        for record in records.into_iter().filter(|r| r.source == key) {
            match self.connections.remove(&key, &record.name) {
                Ok(_) => {
                    tracing::info!(source = %config.id, connection = %record.name, "removed the connection of a removed source");
                }
                Err(e) => {
                    tracing::warn!(error = %e, source = %config.id, connection = %record.name, "could not remove the connection of a removed source");
                }
            }
        }
    }

    pub(super) async fn stop_upstreams_of(&self, id: &str) {
        let stopped: Vec<Arc<Upstream>> = {
            let mut upstreams = self.lock_upstreams();
            let keys: Vec<_> = upstreams.keys().filter(|(s, _)| s == id).cloned().collect();
            keys.iter().filter_map(|k| upstreams.remove(k)).collect()
        };
        join_all(stopped.iter().map(|u| u.shutdown())).await;
    }
}

/// The sources the hub serves: their statuses and logs, adding, replacing, removing,
/// restarting and switching them while it runs, a person's confirmation of a new one, and the
/// notices their servers send. Get it with [`Hub::sources`]; the methods live beside what they
/// touch (this file, `status.rs`, `switches.rs`, `source_confirmation.rs`, `source_logs.rs`,
/// `notices.rs`).
#[derive(Clone, Copy)]
pub struct Sources<'a> {
    pub(crate) hub: &'a Hub,
}

impl Hub {
    /// The sources and what can be done to them.
    pub fn sources(&self) -> Sources<'_> {
        Sources { hub: self }
    }
}

impl Sources<'_> {
    /// Whether a source (the demo included) is served under `id`.
    pub fn has(&self, id: &str) -> bool {
        self.hub.source_defs().iter().any(|d| d.id == id)
    }

    /// The configuration of source `id`; `None` for the demo or an unknown id.
    pub fn config(&self, id: &str) -> Option<SourceConfig> {
        self.hub
            .source_defs()
            .into_iter()
            .find(|d| d.id == id)
            .and_then(|d| match d.origin {
                Origin::Config(c) => Some(c),
                Origin::Demo => None,
            })
    }

    /// Serves a new source and starts it; its tools join the catalog once it is ready. Added by
    /// anyone but a person, it waits for a person's confirmation before it starts.
    pub fn add(&self, config: SourceConfig, by: ChangedBy) -> Result<(), SourceChangeError> {
        if by == ChangedBy::Person {
            self.hub.record_confirmed(&config);
        }
        {
            // Read from now on, even once its sources are removed again.
            let mut added = self
                .hub
                .added_files
                .lock()
                .unwrap_or_else(PoisonError::into_inner);
            if !added.contains(&config.file) {
                added.push(config.file.clone());
            }
        }
        let def = def_of(config);
        {
            let mut sources = self
                .hub
                .sources
                .write()
                .unwrap_or_else(PoisonError::into_inner);
            if sources.iter().any(|d| d.id == def.id) {
                return Err(SourceChangeError::Exists(def.id));
            }
            sources.push(def.clone());
        }
        self.hub.start_default(&def);
        self.hub.rebuild_catalog();
        Ok(())
    }

    /// Replaces source `config.id` in place (same position) and restarts it; changed by anyone
    /// but a person, it waits for a person's confirmation before it starts.
    pub async fn replace(
        self,
        config: SourceConfig,
        by: ChangedBy,
    ) -> Result<(), SourceChangeError> {
        if by == ChangedBy::Person
            && self
                .hub
                .source_defs()
                .iter()
                // An off source's confirmation stays forgotten: turning it on is what asks.
                .any(|d| d.id == config.id && matches!(d.origin, Origin::Config(_)) && !d.off)
        {
            self.hub.record_confirmed(&config);
        }
        let def = def_of(config);
        {
            let mut sources = self
                .hub
                .sources
                .write()
                .unwrap_or_else(PoisonError::into_inner);
            let slot = sources
                .iter_mut()
                .find(|d| d.id == def.id)
                .ok_or_else(|| SourceChangeError::Unknown(def.id.clone()))?;
            if matches!(slot.origin, Origin::Demo) {
                return Err(SourceChangeError::BuiltIn);
            }
            // An edit of the definition keeps the switch (the file keeps `disabled: true`).
            let off = slot.off;
            *slot = SourceDef { off, ..def.clone() };
        }
        self.hub.stop_upstreams_of(&def.id).await;
        if let Some(def) = self.hub.source_defs().into_iter().find(|d| d.id == def.id) {
            self.hub.start_default(&def);
        }
        self.hub.rebuild_catalog();
        Ok(())
    }

    /// Stops source `id` and forgets it.
    pub async fn remove(self, id: &str) -> Result<(), SourceChangeError> {
        let removed = {
            let mut sources = self
                .hub
                .sources
                .write()
                .unwrap_or_else(PoisonError::into_inner);
            let Some(at) = sources.iter().position(|d| d.id == id) else {
                return Err(SourceChangeError::Unknown(id.to_owned()));
            };
            if matches!(sources[at].origin, Origin::Demo) {
                return Err(SourceChangeError::BuiltIn);
            }
            sources.remove(at)
        };
        self.hub.stop_upstreams_of(id).await;
        self.hub.set_problem(id, None);
        self.hub.forget_source_log(id);
        if let Origin::Config(config) = &removed.origin {
            self.hub.forget_connections_of(config);
        }
        self.hub.rebuild_catalog();
        Ok(())
    }

    /// Stops source `id` (every connection) and starts it again.
    pub async fn restart(self, id: &str) -> Result<(), SourceChangeError> {
        let def = self
            .hub
            .source_defs()
            .into_iter()
            .find(|d| d.id == id)
            .ok_or_else(|| SourceChangeError::Unknown(id.to_owned()))?;
        self.hub.stop_upstreams_of(id).await;
        self.hub.start_default(&def);
        self.hub.rebuild_catalog();
        Ok(())
    }
}
