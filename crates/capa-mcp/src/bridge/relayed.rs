//! The running hub's prompts and resources, for `capa mcp`'s bridge: each request forwarded
//! as it came, once the hub proved it is still there; the hub's errors (`-32602` with the
//! URI of an unknown resource) come back as they are.

#![expect(
    deprecated,
    reason = "log levels and resources/subscribe are deprecated by 2026-07-28 but the bridge speaks the initialize era to the hub"
)]

use capa_core::{JsonObject, Subscribed};
use rmcp::model::{
    CompleteRequestParams, CompleteResult, ErrorData, GetPromptRequestParams, GetPromptResponse,
    LoggingLevel, Prompt, ReadResourceRequestParams, ReadResourceResponse, Resource,
    ResourceTemplate, SetLevelRequestParams, SubscribeRequestParams, UnsubscribeRequestParams,
};

use super::{RemoteSurface, bridge_error};
use crate::notices::Notices;
use crate::relay::Relay;
use crate::surface::{Asking, BoxFuture, ToolChanges};

impl Relay for RemoteSurface {
    fn list_prompts(&self) -> BoxFuture<'_, Result<Vec<Prompt>, ErrorData>> {
        Box::pin(async move {
            self.hub_still_there().await?;
            self.client
                .peer()
                .list_all_prompts()
                .await
                .map_err(bridge_error)
        })
    }

    /// What the prompt's source asks meanwhile goes to the bridge's client as for a call
    /// (`asked.rs`).
    fn get_prompt(
        &self,
        name: String,
        arguments: Option<JsonObject>,
        asking: Asking,
    ) -> BoxFuture<'_, Result<GetPromptResponse, ErrorData>> {
        Box::pin(async move {
            self.hub_still_there().await?;
            let mut params = GetPromptRequestParams::new(name);
            params.arguments = arguments;
            params.meta = self.asked.meta_for(&asking);
            self.client
                .peer()
                .get_prompt(params)
                .await
                .map(GetPromptResponse::Complete)
                .map_err(bridge_error)
        })
    }

    fn list_resources(&self) -> BoxFuture<'_, Result<Vec<Resource>, ErrorData>> {
        Box::pin(async move {
            self.hub_still_there().await?;
            self.client
                .peer()
                .list_all_resources()
                .await
                .map_err(bridge_error)
        })
    }

    fn list_resource_templates(&self) -> BoxFuture<'_, Result<Vec<ResourceTemplate>, ErrorData>> {
        Box::pin(async move {
            self.hub_still_there().await?;
            self.client
                .peer()
                .list_all_resource_templates()
                .await
                .map_err(bridge_error)
        })
    }

    fn read_resource(
        &self,
        uri: String,
        asking: Asking,
    ) -> BoxFuture<'_, Result<ReadResourceResponse, ErrorData>> {
        Box::pin(async move {
            self.hub_still_there().await?;
            let mut params = ReadResourceRequestParams::new(uri);
            params.meta = self.asked.meta_for(&asking);
            self.client
                .peer()
                .read_resource(params)
                .await
                .map(ReadResourceResponse::Complete)
                .map_err(bridge_error)
        })
    }

    fn complete(
        &self,
        params: CompleteRequestParams,
    ) -> BoxFuture<'_, Result<CompleteResult, ErrorData>> {
        Box::pin(async move {
            self.hub_still_there().await?;
            self.client
                .peer()
                .complete(params)
                .await
                .map_err(bridge_error)
        })
    }

    /// The running hub says when its tools, prompts or resources changed.
    fn changes(&self) -> Box<dyn ToolChanges> {
        let mut changes = self.changes.clone();
        changes.mark_unchanged();
        Box::new(changes)
    }

    fn set_log_level(&self, level: LoggingLevel) -> BoxFuture<'_, Result<(), ErrorData>> {
        Box::pin(async move {
            self.hub_still_there().await?;
            self.client
                .peer()
                .set_level(SetLevelRequestParams::new(level))
                .await
                .map_err(bridge_error)
        })
    }

    /// The running hub keeps the subscription; the bridge knows it by the hub's URI.
    fn subscribe(&self, uri: String) -> BoxFuture<'_, Result<Subscribed, ErrorData>> {
        Box::pin(async move {
            self.hub_still_there().await?;
            self.client
                .peer()
                .subscribe(SubscribeRequestParams::new(uri.clone()))
                .await
                .map_err(bridge_error)?;
            Ok(Subscribed {
                source: String::new(),
                uri,
            })
        })
    }

    fn unsubscribe(&self, key: Subscribed) -> BoxFuture<'_, ()> {
        Box::pin(async move {
            if self.hub_still_there().await.is_ok() {
                let params = UnsubscribeRequestParams::new(key.uri);
                if let Err(e) = self.client.peer().unsubscribe(params).await {
                    tracing::debug!(error = %e, "the running hub did not take an unsubscribe");
                }
            }
        })
    }

    /// The running hub's log messages (already named after their sources) and resource
    /// changes, as its session brings them.
    fn notices(&self) -> Box<dyn Notices> {
        Box::new(self.notices.subscribe())
    }
}
