//! Runs across hub processes. Several hubs may share one data dir (the desktop app's, a
//! project's `capa mcp`, a restarted one), so every attempt names the process that runs it
//! ([`RunOwner`]). A run whose process ended mid-attempt is `interrupted`: its journal holds the
//! calls that were answered, and a resume replays it like a paused run. A resume also waits for
//! the sources the run already used, because a hub that just started is still connecting them.

use std::collections::BTreeSet;
use std::time::Duration;

pub(crate) use super::ownership::{Progress, progress};
use crate::hub::Hub;

/// How long a resume waits for the sources its run used to be ready, after the hub's own
/// start-up wait: a source restarting after a crash usually comes back within seconds.
pub(crate) const SOURCE_WAIT: Duration = Duration::from_secs(10);

/// A source a run needs that this hub cannot serve now.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Unready {
    pub source: String,
    /// Why, in words: "is starting", "is down: …", "is not served by this hub".
    pub why: String,
}

impl Hub {
    /// The sources a replay of `run_id` will call for sure: those of its journaled calls and of
    /// its inputs (the decided call among them).
    pub(crate) fn sources_of_run(&self, run_id: &str) -> BTreeSet<String> {
        let mut sources = BTreeSet::new();
        let namespace = |address: &str| address.split_once('.').map(|(ns, _)| ns.to_owned());
        match self.store().journal(run_id) {
            Ok(journal) => sources.extend(journal.iter().filter_map(|e| namespace(&e.address))),
            Err(e) => tracing::warn!(error = %e, run = %run_id, "could not read a run's journal"),
        }
        match self.store().approvals_of_run(run_id) {
            Ok(inputs) => sources.extend(inputs.into_iter().map(|a| a.source)),
            Err(e) => tracing::warn!(error = %e, run = %run_id, "could not read a run's inputs"),
        }
        sources
    }

    /// Waits, at most [`SOURCE_WAIT`], until every source in `needed` has tools in the catalog;
    /// returns the ones that still have none.
    pub(crate) async fn wait_for_sources(&self, needed: &BTreeSet<String>) -> Vec<Unready> {
        let mut catalog = self.watch_catalog();
        let missing = |hub: &Hub| -> Vec<String> {
            let catalog = hub.catalog();
            needed
                .iter()
                .filter(|source| {
                    !catalog
                        .tools()
                        .iter()
                        .any(|t| &t.address.namespace == *source)
                })
                .cloned()
                .collect()
        };
        let deadline = tokio::time::Instant::now() + SOURCE_WAIT;
        loop {
            let now_missing = missing(self);
            if now_missing.is_empty() {
                return Vec::new();
            }
            // A source that is not served, or waits for a person (a connection, a
            // confirmation), will not become ready by waiting.
            let statuses = self.sources();
            let may_come = now_missing.iter().any(|source| {
                statuses
                    .iter()
                    .any(|s| &s.id == source && matches!(s.state.as_str(), "starting" | "down"))
            });
            if !may_come {
                return self.unready(&now_missing);
            }
            match tokio::time::timeout_at(deadline, catalog.changed()).await {
                Ok(Ok(())) => {}
                Ok(Err(_)) | Err(_) => return self.unready(&missing(self)),
            }
        }
    }

    fn unready(&self, sources: &[String]) -> Vec<Unready> {
        let statuses = self.sources();
        sources
            .iter()
            .map(|source| {
                let why = match statuses.iter().find(|s| &s.id == source) {
                    None => "is not served by this hub".to_owned(),
                    Some(status) => {
                        let state = match status.state.as_str() {
                            "starting" => "is still starting".to_owned(),
                            "needs_connection" => "needs its connection".to_owned(),
                            "needs_confirmation" => format!(
                                "waits for the person to confirm how it starts (`capa sources confirm {source}`)"
                            ),
                            other => format!("is {other}"),
                        };
                        match &status.last_error {
                            Some(error) => format!("{state}: {error}"),
                            None => state,
                        }
                    }
                };
                Unready {
                    source: source.clone(),
                    why,
                }
            })
            .collect()
    }
}

impl super::Envelope {
    /// The answer to a resume whose run needs sources that are not ready: the run waits, as
    /// for a connection, and the same resume goes on once they are.
    pub(crate) fn waiting_for_sources(run_id: &str, unready: &[Unready]) -> Self {
        let what = unready
            .iter()
            .map(|u| format!("{} {}", u.source, u.why))
            .collect::<Vec<_>>()
            .join("; ");
        let mut envelope = Self::refused(
            run_id,
            capa_sandbox::RunError {
                code: "source_not_ready".to_owned(),
                message: format!(
                    "the run waits for the sources it used before it can go on: {what}"
                ),
                hint: Some(
                    "Resume again with execute({ resume }) in a moment. If a source is not served by this hub, resume from the client or project that started the run; the person can check the source in Capabilities.".to_owned(),
                ),
            },
            Vec::new(),
        );
        envelope.status = super::EnvelopeStatus::AwaitingConnection;
        envelope
    }
}

#[cfg(test)]
mod tests {
    use capa_store::RunOwner;

    use super::*;

    const OWN: RunOwner = RunOwner {
        pid: 4242,
        started_ms: 10,
    };

    #[test]
    fn a_run_is_ours_another_live_hubs_or_orphaned() {
        assert_eq!(progress(Some(OWN), OWN), Progress::Here);
        let earlier_self = RunOwner {
            started_ms: 3,
            ..OWN
        };
        assert_eq!(progress(Some(earlier_self), OWN), Progress::Orphaned);
        let other = RunOwner {
            pid: std::process::id(),
            started_ms: crate::clock::now_ms(),
        };
        assert_eq!(progress(Some(other), OWN), Progress::Elsewhere(other));
        // The same live pid, recorded long before this process started: a reused pid.
        let reused = RunOwner {
            pid: std::process::id(),
            started_ms: 1,
        };
        if cfg!(target_os = "linux") {
            assert_eq!(progress(Some(reused), OWN), Progress::Orphaned);
        }
        assert_eq!(
            progress(None, OWN),
            Progress::Orphaned,
            "recorded before owners"
        );
        let mut child = std::process::Command::new("true").spawn().expect("spawn");
        let dead = child.id();
        child.wait().expect("wait");
        let gone = RunOwner {
            pid: dead,
            started_ms: 1,
        };
        assert_eq!(progress(Some(gone), OWN), Progress::Orphaned);
    }
}
