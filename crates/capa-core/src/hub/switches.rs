//! A person's on/off switch of a source (`disabled: true` in its capabilities file, written by
//! the caller). Off: the source stops, its tools leave the catalog, it is listed as `off`.
//!
//! Turning a source off also forgets its confirmation, whoever turns it off (the app, the API
//! with the bearer token, a hand edit found at start): turning it on again is a loosening, so
//! it starts at once only for a person; otherwise it waits in `needs_confirmation` like a new
//! source (docs/configuration.md, "Turning a source off").

use std::sync::PoisonError;

use capa_config::{SourceConfig, SourceScope};
use capa_store::TrustedProjectSource;
use serde::Serialize;

use super::policy::ChangedBy;
use super::runtime::SourceChangeError;
use super::source_def::{OFF_MARK, Origin, SourceDef, SourceProblem};
use super::{Hub, Sources};
use crate::trust::trust_file;

/// Where a source stands after its switch moved.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum SourceSwitch {
    /// Off: stopped, no tools served.
    Off,
    /// On and starting.
    On,
    /// On in the file, but not started: turning a source on needs a person, and this change
    /// came without one (the API's bearer token). It waits for a confirmation.
    Held,
}

/// The hub's entries of the sources a file declares off.
pub(super) fn off_defs(sources: &[SourceConfig]) -> impl Iterator<Item = SourceDef> + '_ {
    sources.iter().map(|s| SourceDef {
        id: s.id.clone(),
        description: s.description.clone(),
        selection: s.selection.clone(),
        origin: Origin::Config(s.clone()),
        off: true,
    })
}

impl Hub {
    /// At start: a source the file declares off loses its confirmation, so that turning it on
    /// by a file edit does not start it without a person.
    pub(super) fn forget_confirmations_of_off_sources(&self) {
        for def in self.source_defs().into_iter().filter(|d| d.off) {
            if let Origin::Config(config) = &def.origin {
                self.forget_confirmation(config);
            }
        }
    }

    fn forget_confirmation(&self, config: &SourceConfig) {
        let now = crate::clock::now_ms();
        let stored = match config.scope {
            SourceScope::User => self.store().confirm_source(&config.id, OFF_MARK, now),
            SourceScope::Project { .. } => self.store().trust_project_source(
                &trust_file(&config.file),
                &config.id,
                &TrustedProjectSource {
                    digest: OFF_MARK.to_owned(),
                    global_connections: false,
                },
                now,
            ),
        };
        if let Err(e) = stored {
            tracing::warn!(error = %e, source = %config.id, "could not record that the source is off");
        }
    }
}

impl Sources<'_> {
    /// Turns source `id` off or on in the running hub. The caller writes the file first (the
    /// switch lives there); `by` says whether a person turned it on.
    pub async fn switch(
        self,
        id: &str,
        on: bool,
        by: ChangedBy,
    ) -> Result<SourceSwitch, SourceChangeError> {
        let config = match self.hub.source_defs().into_iter().find(|d| d.id == id) {
            None => return Err(SourceChangeError::Unknown(id.to_owned())),
            Some(def) => match def.origin {
                Origin::Demo => return Err(SourceChangeError::BuiltIn),
                Origin::Config(config) => config,
            },
        };
        if !on {
            self.hub.forget_confirmation(&config);
        } else if by == ChangedBy::Person {
            self.hub.record_confirmed(&config);
        }
        let def = {
            let mut sources = self
                .hub
                .sources
                .write()
                .unwrap_or_else(PoisonError::into_inner);
            let slot = sources
                .iter_mut()
                .find(|d| d.id == id)
                .ok_or_else(|| SourceChangeError::Unknown(id.to_owned()))?;
            slot.off = !on;
            slot.clone()
        };
        self.hub.stop_upstreams_of(id).await;
        self.hub.start_default(&def);
        self.hub.rebuild_catalog();
        let problem = self
            .hub
            .problems
            .lock()
            .ok()
            .and_then(|p| p.get(id).cloned());
        tracing::info!(source = %id, on, "source switched");
        Ok(match problem {
            Some(SourceProblem::Off) => SourceSwitch::Off,
            Some(SourceProblem::NeedsConfirmation(_)) => SourceSwitch::Held,
            _ => SourceSwitch::On,
        })
    }
}
