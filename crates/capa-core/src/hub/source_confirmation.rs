//! Sources wait for a person's confirmation when they are new or changed outside the app's
//! window or an interactive terminal: a source is a command the hub runs (or a URL it sends the
//! user's credentials to), so a file edit — by hand, by a script, by a tool that writes files —
//! or the API with the bearer token must not make the hub run a new one on its own.
//!
//! What is confirmed is a digest of how the source starts (command, arguments, environment as
//! written with its `${secret:…}` references, working directory; or URL and headers). The first
//! start on a database counts the person's own sources it finds as confirmed (they are what the
//! person had).
//!
//! A project file found from the working directory up may come from a cloned repository, so its
//! sources ([`SourceScope::Project`]) are trusted apart, like `direnv allow`: per (canonical path
//! of the file, source id, digest), never counted as confirmed by a first start, asked again
//! when the digest changes. Their connections are stored under a key of the project file
//! ([`crate::trust::project_connection_key`]), so a project source with the id of a global one gets none of
//! that source's secrets unless the person granted them ([`ProjectConnections::Global`]).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use capa_config::{ProjectConnections, SourceConfig, SourceScope};
use capa_store::{Store, StoreError, TrustedProjectSource};

use super::source_def::{OFF_MARK, Origin, SourceProblem, describe_target};
use super::{Hub, Sources};
use crate::trust::{source_digest, trust_file, trusted_record, uses_global_connections};

impl Hub {
    /// Records that a person confirmed `source` as it is configured now: in the confirmed
    /// sources for the person's own files, in the trusted project sources (with `connections`)
    /// for a project's. `capa sources confirm` uses it on the store directly.
    pub fn record_confirmation(
        store: &Store,
        source: &SourceConfig,
        connections: ProjectConnections,
    ) -> Result<(), StoreError> {
        let now = crate::clock::now_ms();
        match source.scope {
            SourceScope::User => store.confirm_source(&source.id, &source_digest(source), now),
            SourceScope::Project { .. } => store.trust_project_source(
                &trust_file(&source.file),
                &source.id,
                &TrustedProjectSource {
                    digest: source_digest(source),
                    global_connections: connections == ProjectConnections::Global,
                },
                now,
            ),
        }
    }

    /// On the first start with confirmations, counts the person's own configured sources as
    /// confirmed (never a project's).
    pub(super) fn begin_source_confirmations(&self, sources: &[SourceConfig]) {
        match self.store().confirmed_sources() {
            Ok(Some(_)) => {}
            Ok(None) => {
                let now = crate::clock::now_ms();
                let mut recorded = self.store().confirm_source("", "", now);
                for source in sources.iter().filter(|s| !s.scope.is_project()) {
                    recorded = recorded.and(self.store().confirm_source(
                        &source.id,
                        &source_digest(source),
                        now,
                    ));
                }
                if let Err(e) = recorded {
                    tracing::warn!(error = %e, "could not record the confirmed sources");
                }
            }
            Err(e) => tracing::warn!(error = %e, "could not read the confirmed sources"),
        }
    }

    /// Why `source` may not start yet, when it waits for a person's confirmation.
    pub(super) fn unconfirmed(&self, source: &SourceConfig) -> Option<SourceProblem> {
        if source.scope.is_project() {
            return self.untrusted(source);
        }
        let confirmed = match self.store().confirmed_sources() {
            Ok(Some(confirmed)) => confirmed,
            // Before confirmations began (a database the first start has not seen yet).
            Ok(None) => return None,
            Err(e) => {
                tracing::warn!(error = %e, "could not read the confirmed sources; not starting unconfirmed ones");
                BTreeMap::default()
            }
        };
        let digest = source_digest(source);
        if confirmed.get(&source.id) == Some(&digest) {
            return None;
        }
        if confirmed.get(&source.id).is_some_and(|d| d == OFF_MARK) {
            return Some(SourceProblem::NeedsConfirmation(format!(
                "source `{}` was turned off, and turning it on waits for you: turn it on in Capabilities (Sources page), or run `capa sources enable {}` at a terminal",
                source.id, source.id
            )));
        }
        let what = if confirmed.contains_key(&source.id) {
            "changed"
        } else {
            "new"
        };
        Some(SourceProblem::NeedsConfirmation(format!(
            "source `{}` is {what} ({}, in {}) and was not confirmed in the app or at a terminal: it starts once you confirm it in Capabilities, or with `capa sources confirm {}` in a terminal",
            source.id,
            describe_target(&source.transport),
            source.file.display(),
            source.id
        )))
    }

    /// Why project source `source` may not start yet: the person has not trusted it as it is.
    fn untrusted(&self, source: &SourceConfig) -> Option<SourceProblem> {
        let before = trusted_record(self.store(), source);
        if before
            .as_ref()
            .is_some_and(|t| t.digest == source_digest(source))
        {
            return None;
        }
        let what = if before.is_some() {
            "changed since you trusted it"
        } else {
            "not trusted yet"
        };
        let dir = source
            .file
            .parent()
            .map_or_else(|| PathBuf::from("."), Path::to_path_buf);
        Some(SourceProblem::NeedsConfirmation(format!(
            "source `{}` comes from the project file {} and is {what} ({}): a project's file runs nothing before you trust it. Run `capa sources confirm {}` in a terminal in {}, or, when the Capabilities app serves this file, with Confirm on its Sources page",
            source.id,
            source.file.display(),
            describe_target(&source.transport),
            source.id,
            dir.display()
        )))
    }

    /// Records a person's confirmation of `config` (before it is added or replaced, or in the
    /// app); a project source keeps a grant of the global connections only when unchanged.
    pub(super) fn record_confirmed(&self, config: &SourceConfig) {
        let connections = if uses_global_connections(self.store(), config) {
            ProjectConnections::Global
        } else {
            ProjectConnections::Own
        };
        if let Err(e) = Self::record_confirmation(self.store(), config, connections) {
            tracing::warn!(error = %e, source = %config.id, "could not record the confirmed source");
        }
    }
}

impl Sources<'_> {
    /// A person confirms source `id` as it is configured now (in the app): it starts. A project
    /// source keeps the connections it was granted only when it is unchanged since.
    pub async fn confirm(self, id: &str) -> Result<(), super::SourceChangeError> {
        let def = self
            .hub
            .source_defs()
            .into_iter()
            .find(|d| d.id == id)
            .ok_or_else(|| super::SourceChangeError::Unknown(id.to_owned()))?;
        let Origin::Config(config) = &def.origin else {
            return Ok(()); // the demo is built in
        };
        self.hub.record_confirmed(config);
        self.restart(id).await
    }
}
