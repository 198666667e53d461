//! [`HubClient`] for the running hub: its JSON API over HTTP with the bearer token, plus the
//! requests only a running hub answers (its configuration, reloads, the UI's login link).

use serde_json::json;

use super::HubClient;
use crate::api::{
    Ack, CallAnswer, CallRequest, ConfigView, DescribeApiRequest, LookupAnswer, PendingList,
    PolicyReload, ProfileListing, SearchApiRequest, SkillListing, SourceView, ToolListing,
    UiLinkRequest,
};
use crate::running::{ClientError, RunningHub};

/// The hub `capa hub serve` or the desktop app runs, found through its discovery file.
#[derive(Debug, Clone)]
pub struct RemoteHub {
    running: RunningHub,
}

impl RemoteHub {
    pub fn new(running: RunningHub) -> Self {
        Self { running }
    }

    /// The hub as found: its URL, token and proof (for `capa mcp`'s bridge).
    pub fn running(&self) -> &RunningHub {
        &self.running
    }

    pub fn mcp_url(&self) -> String {
        self.running.mcp_url()
    }

    /// `GET /api/config`.
    pub async fn config(&self) -> Result<ConfigView, ClientError> {
        self.running.get("/api/config").await
    }

    /// `GET /api/approvals`: the pending inputs; a refusal is an error.
    pub async fn pending(&self) -> Result<PendingList, ClientError> {
        let list: PendingList = self.running.get("/api/approvals").await?;
        if !list.ok {
            let message = list
                .error
                .map_or_else(|| "the hub refused".to_owned(), |e| e.message);
            return Err(ClientError::Refused(message));
        }
        Ok(list)
    }

    /// `POST /api/connections/reload`: re-read the connections (after `capa connections`).
    pub async fn reload_connections(&self) -> Result<Ack, ClientError> {
        self.running
            .post("/api/connections/reload", &json!({}))
            .await
    }

    /// `POST /api/policy/reload`: re-read the policy file; a broken file keeps the old policy.
    pub async fn reload_policy(&self) -> Result<PolicyReload, ClientError> {
        self.running.post("/api/policy/reload", &json!({})).await
    }

    /// `POST /api/approvals/changed`: decisions were stored elsewhere; grants nothing itself.
    pub async fn approvals_changed(&self) -> Result<Ack, ClientError> {
        self.running
            .post("/api/approvals/changed", &json!({}))
            .await
    }

    /// `POST /api/sources/<id>/restart`.
    pub async fn restart_source(&self, id: &str) -> Result<Ack, ClientError> {
        self.running
            .post(&format!("/api/sources/{id}/restart"), &json!({}))
            .await
    }

    /// `POST /api/ui/link`.
    pub async fn ui_link(&self, request: &UiLinkRequest) -> Result<Ack, ClientError> {
        self.running.post("/api/ui/link", request).await
    }
}

impl HubClient for RemoteHub {
    async fn sources(&self) -> Result<Vec<SourceView>, ClientError> {
        self.running.get("/api/sources").await
    }

    async fn tools(&self) -> Result<Vec<ToolListing>, ClientError> {
        self.running.get("/api/tools").await
    }

    async fn skills(&self) -> Result<Vec<SkillListing>, ClientError> {
        self.running.get("/api/skills").await
    }

    async fn profiles(&self) -> Result<Vec<ProfileListing>, ClientError> {
        self.running.get("/api/profiles").await
    }

    async fn call(&self, request: CallRequest) -> Result<CallAnswer, ClientError> {
        self.running.post("/api/call", &request).await
    }

    async fn search(&self, request: SearchApiRequest) -> Result<LookupAnswer, ClientError> {
        self.running.post("/api/search", &request).await
    }

    async fn describe(&self, request: DescribeApiRequest) -> Result<LookupAnswer, ClientError> {
        self.running.post("/api/describe", &request).await
    }
}
