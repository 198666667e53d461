//! [`HubClient`] for a hub in this process: the same functions the HTTP API answers with, so
//! the answers are the API's.

use std::sync::Arc;

use capa_core::Hub;
use serde::Serialize;
use serde::de::DeserializeOwned;

use super::HubClient;
use crate::api::{
    CallAnswer, CallRequest, DescribeApiRequest, LookupAnswer, ProfileListing, SearchApiRequest,
    SkillListing, SourceView, ToolListing,
};
use crate::running::ClientError;

/// A hub started by this command, stopped by [`LocalHub::close`].
#[derive(Debug, Clone)]
pub struct LocalHub {
    hub: Arc<Hub>,
}

/// What the journal names as the client of calls made here (as the HTTP API does).
const CLIENT: &str = "capa-cli";

impl LocalHub {
    pub fn new(hub: Arc<Hub>) -> Self {
        Self { hub }
    }

    pub fn hub(&self) -> &Arc<Hub> {
        &self.hub
    }

    pub async fn close(self) {
        self.hub.shutdown().await;
    }
}

/// `value` read back as the API type `T` (the in-process answers are built as JSON).
fn typed<T: DeserializeOwned>(value: impl Serialize) -> Result<T, ClientError> {
    serde_json::to_value(value)
        .and_then(serde_json::from_value)
        .map_err(ClientError::Shape)
}

impl HubClient for LocalHub {
    async fn sources(&self) -> Result<Vec<SourceView>, ClientError> {
        typed(self.hub.sources().list())
    }

    async fn tools(&self) -> Result<Vec<ToolListing>, ClientError> {
        Ok(capa_server::http::tool_listings(&self.hub))
    }

    async fn skills(&self) -> Result<Vec<SkillListing>, ClientError> {
        Ok(capa_server::http::skill_listings(&self.hub))
    }

    async fn profiles(&self) -> Result<Vec<ProfileListing>, ClientError> {
        Ok(capa_server::http::profile_listings(&self.hub))
    }

    async fn call(&self, request: CallRequest) -> Result<CallAnswer, ClientError> {
        typed(capa_server::http::call_json(&self.hub, request, CLIENT).await)
    }

    async fn search(&self, request: SearchApiRequest) -> Result<LookupAnswer, ClientError> {
        typed(capa_server::http::search_json(&self.hub, request).await)
    }

    async fn describe(&self, request: DescribeApiRequest) -> Result<LookupAnswer, ClientError> {
        typed(capa_server::http::describe_json(&self.hub, request).await)
    }
}
