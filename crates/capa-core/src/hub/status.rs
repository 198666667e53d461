//! What `capa sources list`, the API and the UI show of each source.

use std::sync::Arc;

use capa_domain::{SourceOrigin, SourceState};
use capa_upstream::{Tool, UpstreamState};
use serde::{Deserialize, Serialize};

use super::Sources;
use super::source_def::{Origin, SourceProblem, describe_target};

/// A source's state for listings.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SourceStatus {
    pub id: String,
    pub description: Option<String>,
    /// Command line or URL, never secrets.
    pub target: String,
    pub state: SourceState,
    pub last_error: Option<String>,
    /// Exposed tools in the catalog.
    pub tools: usize,
    pub restarts: u32,
    pub protocol_version: Option<String>,
    /// Process id of a local server while it runs.
    pub pid: Option<u32>,
    /// Connection names; the default one ends with `*`.
    pub connections: Vec<String>,
    /// Built in, or from a capabilities file.
    pub origin: SourceOrigin,
    /// The capabilities file that declares the source (none for the demo).
    pub file: Option<std::path::PathBuf>,
    /// What the hub's bounds cut from the source's last tool listing, one line each
    /// (docs/limits.md); empty when nothing was.
    pub limited: Vec<String>,
    /// For a source that signs in with OAuth: its sign-ins, never a token.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub oauth: Option<super::oauth::OAuthStatus>,
    /// The person allowed it to ask the client's model (sampling); off until then.
    #[serde(default)]
    pub sampling_allowed: bool,
}

impl Sources<'_> {
    /// Status of every source, in configuration order (demo first).
    pub fn list(&self) -> Vec<SourceStatus> {
        let catalog = self.hub.catalog();
        let upstreams = self.hub.lock_upstreams().clone();
        let problems = self
            .hub
            .problems
            .lock()
            .map(|p| p.clone())
            .unwrap_or_default();
        let connections = self.hub.store.connections().unwrap_or_default();
        let sampling = self
            .hub
            .store
            .sampling_allowed_sources()
            .unwrap_or_default();
        self.hub
            .source_defs()
            .iter()
            .map(|def| {
                let connection_key = self.hub.connection_key(&def.id);
                let upstream = upstreams.get(&(def.id.clone(), None));
                let status = upstream.map(|u| u.status());
                let problem = problems.get(&def.id).cloned();
                let state = match (&status, &problem) {
                    (_, Some(problem)) => problem.state(),
                    (Some(s), None) => match s.state {
                        UpstreamState::Starting => SourceState::Starting,
                        UpstreamState::Ready => SourceState::Ready,
                        UpstreamState::Down => SourceState::Down,
                        UpstreamState::Stopped => SourceState::Stopped,
                        UpstreamState::NeedsSignIn => SourceState::NeedsConnection,
                    },
                    (None, None) => SourceState::Stopped,
                };
                SourceStatus {
                    id: def.id.clone(),
                    description: def.description.clone(),
                    target: match &def.origin {
                        Origin::Demo => "built in".to_owned(),
                        Origin::Config(c) => describe_target(&c.transport),
                    },
                    state,
                    last_error: problem
                        .filter(|p| *p != SourceProblem::Off)
                        .map(|p| p.message().to_owned())
                        .or_else(|| status.as_ref().and_then(|s| s.last_error.clone())),
                    tools: catalog
                        .tools()
                        .iter()
                        .filter(|t| t.address.namespace == def.id)
                        .count(),
                    restarts: status.as_ref().map_or(0, |s| s.restarts),
                    limited: status
                        .as_ref()
                        .map(|s| s.limited.clone())
                        .unwrap_or_default(),
                    pid: status.as_ref().and_then(|s| s.pid),
                    protocol_version: status.and_then(|s| s.protocol_version),
                    connections: connections
                        .iter()
                        .filter(|c| c.source == connection_key)
                        .map(|c| {
                            if c.is_default {
                                format!("{}*", c.name)
                            } else {
                                c.name.clone()
                            }
                        })
                        .collect(),
                    origin: match &def.origin {
                        Origin::Demo => SourceOrigin::Demo,
                        Origin::Config(_) => SourceOrigin::Config,
                    },
                    file: match &def.origin {
                        Origin::Demo => None,
                        Origin::Config(c) => Some(c.file.clone()),
                    },
                    oauth: self.hub.oauth_status(def, &connection_key, &connections),
                    sampling_allowed: sampling.contains(&def.id),
                }
            })
            .collect()
    }

    /// The tools source `id` advertises on its default connection, as the server listed them
    /// (before any expose policy); `None` while the source is not connected. `capa install`
    /// checks policy names against it.
    pub fn advertised_tools(&self, id: &str) -> Option<Arc<Vec<Tool>>> {
        let upstreams = self.hub.lock_upstreams();
        let upstream = upstreams.get(&(id.to_owned(), None))?;
        (upstream.status().state == UpstreamState::Ready).then(|| upstream.tools())
    }
}
