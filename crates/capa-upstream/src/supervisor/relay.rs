//! What an upstream offers besides tools: its prompts, resources and resource templates, asked
//! for when a client asks and relayed as they are, each request within the call's timeout.
//! Nothing is cached: a client's list is the upstream's list of that moment.

use rmcp::model::{
    CompleteRequestParams, CompleteResult, GetPromptRequestParams, GetPromptResult, JsonObject,
    Prompt, ReadResourceRequestParams, ReadResourceResult, Resource, ResourceTemplate,
};
use rmcp::service::{Peer, RoleClient};

use super::{Upstream, UpstreamState};
use crate::error::UpstreamError;

/// What a connected server said it offers beyond tools.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Offers {
    pub prompts: bool,
    pub resources: bool,
    pub completions: bool,
}

impl Upstream {
    /// What the server offers beyond tools; nothing while it is not connected.
    pub fn offers(&self) -> Offers {
        let Some(peer) = self.connected_peer() else {
            return Offers::default();
        };
        let Some(info) = peer.peer_info() else {
            return Offers::default();
        };
        Offers {
            prompts: info.capabilities.prompts.is_some(),
            resources: info.capabilities.resources.is_some(),
            completions: info.capabilities.completions.is_some(),
        }
    }

    /// Every prompt the server lists (all pages); none when it offers no prompts.
    pub async fn list_prompts(&self) -> Result<Vec<Prompt>, UpstreamError> {
        if !self.offers().prompts {
            return Ok(Vec::new());
        }
        self.ask(|peer| async move { peer.list_all_prompts().await })
            .await
    }

    /// One prompt, by the server's own name.
    pub async fn get_prompt(
        &self,
        name: &str,
        arguments: Option<JsonObject>,
    ) -> Result<GetPromptResult, UpstreamError> {
        let mut params = GetPromptRequestParams::new(name.to_owned());
        params.arguments = arguments;
        self.ask(|peer| async move { peer.get_prompt(params).await })
            .await
    }

    /// Every resource the server lists (all pages); none when it offers no resources.
    pub async fn list_resources(&self) -> Result<Vec<Resource>, UpstreamError> {
        if !self.offers().resources {
            return Ok(Vec::new());
        }
        self.ask(|peer| async move { peer.list_all_resources().await })
            .await
    }

    /// Every resource template the server lists; none when it offers no resources.
    pub async fn list_resource_templates(&self) -> Result<Vec<ResourceTemplate>, UpstreamError> {
        if !self.offers().resources {
            return Ok(Vec::new());
        }
        self.ask(|peer| async move { peer.list_all_resource_templates().await })
            .await
    }

    /// One resource, by the server's own URI.
    pub async fn read_resource(&self, uri: &str) -> Result<ReadResourceResult, UpstreamError> {
        let params = ReadResourceRequestParams::new(uri.to_owned());
        self.ask(|peer| async move { peer.read_resource(params).await })
            .await
    }

    fn connected_peer(&self) -> Option<Peer<RoleClient>> {
        let snapshot = self.snapshot.borrow();
        if snapshot.state == UpstreamState::Ready {
            snapshot.peer.clone()
        } else {
            None
        }
    }

    /// Completions of a prompt's or resource template's argument, as the server names them;
    /// none when it offers no completions.
    pub async fn complete(
        &self,
        params: CompleteRequestParams,
    ) -> Result<CompleteResult, UpstreamError> {
        if !self.offers().completions {
            return Ok(CompleteResult::default());
        }
        self.ask(|peer| async move { peer.complete(params).await })
            .await
    }

    /// Runs one request on the connected peer within the call's timeout (waiting for a
    /// connection that is still starting, as a tool call does).
    async fn ask<T, F, Fut>(&self, request: F) -> Result<T, UpstreamError>
    where
        F: FnOnce(Peer<RoleClient>) -> Fut,
        Fut: Future<Output = Result<T, rmcp::ServiceError>>,
    {
        let source_id = &self.spec().source_id;
        let timeout = self.spec().call_timeout;
        let deadline = tokio::time::Instant::now() + timeout;
        let timed_out = || UpstreamError::Timeout {
            source_id: source_id.clone(),
            timeout,
        };
        let (peer, _) = tokio::time::timeout_at(deadline, self.ready_peer())
            .await
            .map_err(|_| timed_out())??;
        match tokio::time::timeout_at(deadline, request(peer)).await {
            Ok(Ok(value)) => Ok(value),
            Ok(Err(e)) => Err(UpstreamError::from_service(source_id, e)),
            Err(_) => Err(timed_out()),
        }
    }
}
