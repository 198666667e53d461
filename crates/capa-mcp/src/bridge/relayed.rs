//! The running hub's prompts and resources, for `capa mcp`'s bridge: each request forwarded
//! as it came, once the hub proved it is still there; the hub's errors (`-32602` with the
//! URI of an unknown resource) come back as they are.

use capa_core::JsonObject;
use rmcp::model::{
    CompleteRequestParams, CompleteResult, ErrorData, GetPromptRequestParams, GetPromptResult,
    Prompt, ReadResourceRequestParams, ReadResourceResult, Resource, ResourceTemplate,
};

use super::{RemoteSurface, bridge_error};
use crate::relay::Relay;
use crate::surface::{BoxFuture, ToolChanges};

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

    fn get_prompt(
        &self,
        name: String,
        arguments: Option<JsonObject>,
    ) -> BoxFuture<'_, Result<GetPromptResult, ErrorData>> {
        Box::pin(async move {
            self.hub_still_there().await?;
            let mut params = GetPromptRequestParams::new(name);
            params.arguments = arguments;
            self.client
                .peer()
                .get_prompt(params)
                .await
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

    fn read_resource(&self, uri: String) -> BoxFuture<'_, Result<ReadResourceResult, ErrorData>> {
        Box::pin(async move {
            self.hub_still_there().await?;
            self.client
                .peer()
                .read_resource(ReadResourceRequestParams::new(uri))
                .await
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
}
