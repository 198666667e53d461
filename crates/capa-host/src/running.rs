//! Finding the hub that `capa hub serve` (or the desktop app) runs, and talking to its API.

use std::path::{Path, PathBuf};
use std::time::Duration;

use capa_config::ConfigFiles;
use capa_core::HubPaths;
use capa_server::discovery::{Located, Silence};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::api::ConfigView;

/// Why a request to the running hub failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ClientError {
    /// The request did not reach the hub, or no answer came.
    #[error("asking the running hub at {url}")]
    Request {
        url: String,
        #[source]
        source: reqwest::Error,
    },
    /// The answer's body is not JSON.
    #[error("reading the hub's answer")]
    Read(#[source] reqwest::Error),
    /// The hub answered with an error status.
    #[error("the running hub answered {status}: {body}")]
    Status {
        status: reqwest::StatusCode,
        body: Value,
    },
    /// The answer is JSON, but not of the shape this client knows.
    #[error("the hub's answer is not what this client expects")]
    Shape(#[source] serde_json::Error),
    /// The hub (or the hub in this process) refused: its error's message.
    #[error("{0}")]
    Refused(String),
}

/// How long the health check after the proof may take: the hub answers it from memory.
const HEALTH_TIMEOUT: Duration = Duration::from_secs(2);

/// What [`RunningHub::probe`] found for a data dir.
#[derive(Debug)]
#[non_exhaustive]
pub enum HubProbe {
    /// The hub proved itself and answered its health check, in `took` together.
    Answering { hub: RunningHub, took: Duration },
    /// No hub runs for this data dir (a stale discovery file has been removed).
    NotRunning,
    /// The hub's process runs, but the hub did not answer: busy or stuck.
    Silent { url: String, pid: u32, why: Silence },
    /// What listens at the hub's address is not this data dir's hub; it was sent nothing secret.
    NotTheHub { url: String },
}

/// A hub that answered its health check.
#[derive(Debug, Clone)]
pub struct RunningHub {
    pub base_url: String,
    pub token: String,
    /// What proved itself, for `capa mcp` to check again before forwarding.
    pub found: capa_server::discovery::FoundHub,
    client: reqwest::Client,
}

impl RunningHub {
    /// The running hub of this data dir, once it proved it is the hub its discovery file names
    /// (`capa_server::discovery`); only then is the token read and sent. The token changes on
    /// every start of the hub, so it is read here each time. [`RunningHub::probe`] says why
    /// there is none.
    pub async fn find(paths: &HubPaths) -> Option<Self> {
        match Self::probe(paths).await {
            HubProbe::Answering { hub, .. } => Some(hub),
            _ => None,
        }
    }

    /// [`RunningHub::find`], telling a hub that is gone from one that runs but did not answer.
    pub async fn probe(paths: &HubPaths) -> HubProbe {
        // One client for the proof and what follows: the token goes out on the connection the
        // proof used (kept alive), not on a new one someone could have raced for.
        let Some(client) = capa_server::discovery::client(Some(Duration::from_mins(2))) else {
            return HubProbe::NotRunning;
        };
        let (found, proof_took) = match capa_server::discovery::locate_with(paths, &client).await {
            Located::Proven { hub, took } => (hub, took),
            Located::Silent { url, pid, why } => return HubProbe::Silent { url, pid, why },
            Located::NotTheHub { url } => return HubProbe::NotTheHub { url },
            _ => return HubProbe::NotRunning,
        };
        let Ok(token) = std::fs::read_to_string(paths.token()) else {
            return HubProbe::NotRunning;
        };
        let hub = Self {
            base_url: found.url.clone(),
            token: token.trim().to_owned(),
            found,
            client,
        };
        let started = std::time::Instant::now();
        let health = hub
            .client
            .get(format!("{}/api/health", hub.base_url))
            .bearer_auth(&hub.token)
            .timeout(HEALTH_TIMEOUT)
            .send()
            .await;
        match health {
            Ok(answer) if answer.status().is_success() => HubProbe::Answering {
                took: proof_took + started.elapsed(),
                hub,
            },
            // A hub that refuses this data dir's token is not the one to use (as before).
            Ok(_) => HubProbe::NotRunning,
            Err(e) => HubProbe::Silent {
                url: hub.base_url,
                pid: hub.found.pid,
                why: if e.is_timeout() {
                    Silence::TimedOut
                } else {
                    Silence::Closed
                },
            },
        }
    }

    pub fn mcp_url(&self) -> String {
        format!("{}/mcp", self.base_url)
    }

    /// `GET path` with the bearer token, its answer as `T`.
    pub async fn get<T: DeserializeOwned>(&self, path: &str) -> Result<T, ClientError> {
        let response = self
            .client
            .get(format!("{}{path}", self.base_url))
            .bearer_auth(&self.token)
            .send()
            .await
            .map_err(|source| self.unreachable(source))?;
        Self::json(response).await
    }

    /// `POST path` with `body` as JSON and the bearer token, its answer as `T`.
    pub async fn post<T: DeserializeOwned>(
        &self,
        path: &str,
        body: &impl Serialize,
    ) -> Result<T, ClientError> {
        self.send_json(reqwest::Method::POST, path, body).await
    }

    /// `PUT path` with `body` as JSON and the bearer token, its answer as `T`.
    pub async fn put<T: DeserializeOwned>(
        &self,
        path: &str,
        body: &impl Serialize,
    ) -> Result<T, ClientError> {
        self.send_json(reqwest::Method::PUT, path, body).await
    }

    async fn send_json<T: DeserializeOwned>(
        &self,
        method: reqwest::Method,
        path: &str,
        body: &impl Serialize,
    ) -> Result<T, ClientError> {
        let response = self
            .client
            .request(method, format!("{}{path}", self.base_url))
            .bearer_auth(&self.token)
            .json(body)
            .send()
            .await
            .map_err(|source| self.unreachable(source))?;
        Self::json(response).await
    }

    fn unreachable(&self, source: reqwest::Error) -> ClientError {
        ClientError::Request {
            url: self.base_url.clone(),
            source,
        }
    }

    async fn json<T: DeserializeOwned>(response: reqwest::Response) -> Result<T, ClientError> {
        let status = response.status();
        let body: Value = response.json().await.map_err(ClientError::Read)?;
        if !status.is_success() {
            return Err(ClientError::Status { status, body });
        }
        serde_json::from_value(body).map_err(ClientError::Shape)
    }

    /// Whether the running hub reads the same capabilities files as this command would.
    pub async fn uses_files(&self, files: &ConfigFiles) -> bool {
        let Ok(config) = self.get::<ConfigView>("/api/config").await else {
            return false;
        };
        let ours: Vec<&Path> = files
            .global
            .iter()
            .chain(files.project.iter())
            .map(PathBuf::as_path)
            .collect();
        same_files(&config.files, &ours)
    }
}

/// The same files, in any order: a hub that created the global file after it started (the
/// app's first source) lists it after the others.
fn same_files(theirs: &[PathBuf], ours: &[&Path]) -> bool {
    theirs.len() == ours.len()
        && ours
            .iter()
            .all(|ours| theirs.iter().any(|theirs| same_file(theirs, ours)))
}

fn same_file(a: &Path, b: &Path) -> bool {
    match (a.canonicalize(), b.canonicalize()) {
        (Ok(a), Ok(b)) => a == b,
        _ => a == b,
    }
}

/// The running hub to use for a command, when there is one that reads the same configuration.
pub async fn matching_hub(paths: &HubPaths, files: &ConfigFiles) -> Option<RunningHub> {
    let hub = RunningHub::find(paths).await?;
    if hub.uses_files(files).await {
        Some(hub)
    } else {
        tracing::warn!(
            url = %hub.base_url,
            "a hub is running with other capabilities files; using a hub inside this command instead"
        );
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_same_files_in_any_order_match() {
        let global = PathBuf::from("/c/capabilities.yaml");
        let project = PathBuf::from("/p/capabilities.yaml");
        let theirs = [project.clone(), global.clone()];
        assert!(same_files(&theirs, &[global.as_path(), project.as_path()]));
        assert!(!same_files(&theirs, &[global.as_path()]));
        assert!(!same_files(
            std::slice::from_ref(&global),
            &[project.as_path()]
        ));
        assert!(same_files(&[], &[]));
    }
}
