//! The sources' prompts and resources, as a front serves them (docs/relay.md): from the hub in
//! this process ([`HubRelay`], through a profile), or from a running hub (`capa mcp`'s bridge).
//! A surface without sources behind it relays nothing ([`NoRelay`]).

use std::sync::Arc;

use capa_core::{Hub, JsonObject, Profile, RelayError};
use rmcp::model::{
    CompleteRequestParams, CompleteResult, ErrorData, GetPromptResult, Prompt, ReadResourceResult,
    Resource, ResourceTemplate,
};
use serde_json::json;

use crate::boxed::{BoxFuture, Never, ToolChanges};

/// Prompts and resources to serve.
pub trait Relay: Send + Sync {
    /// Every prompt, named `source.prompt`.
    fn list_prompts(&self) -> BoxFuture<'_, Result<Vec<Prompt>, ErrorData>>;
    fn get_prompt(
        &self,
        name: String,
        arguments: Option<JsonObject>,
    ) -> BoxFuture<'_, Result<GetPromptResult, ErrorData>>;
    fn list_resources(&self) -> BoxFuture<'_, Result<Vec<Resource>, ErrorData>>;
    fn list_resource_templates(&self) -> BoxFuture<'_, Result<Vec<ResourceTemplate>, ErrorData>>;
    fn read_resource(&self, uri: String) -> BoxFuture<'_, Result<ReadResourceResult, ErrorData>>;
    /// Completions of a prompt's or resource template's argument.
    fn complete(
        &self,
        params: CompleteRequestParams,
    ) -> BoxFuture<'_, Result<CompleteResult, ErrorData>>;
    /// Signals that the prompts or resources may have changed (a source started, stopped or
    /// changed), owned by the one listener that waits on it.
    fn changes(&self) -> Box<dyn ToolChanges>;
}

/// `-32602` naming what was asked for, with the URI in `data` for a resource (SEP-2164).
pub(crate) fn unknown(what: &str, key: &str, message: String) -> ErrorData {
    ErrorData::invalid_params(message, Some(json!({ what: key })))
}

/// Nothing to relay.
#[derive(Debug, Clone, Copy)]
pub struct NoRelay;

impl Relay for NoRelay {
    fn list_prompts(&self) -> BoxFuture<'_, Result<Vec<Prompt>, ErrorData>> {
        Box::pin(async { Ok(Vec::new()) })
    }

    fn get_prompt(
        &self,
        name: String,
        _arguments: Option<JsonObject>,
    ) -> BoxFuture<'_, Result<GetPromptResult, ErrorData>> {
        Box::pin(async move { Err(unknown("name", &name, format!("no prompt `{name}`"))) })
    }

    fn list_resources(&self) -> BoxFuture<'_, Result<Vec<Resource>, ErrorData>> {
        Box::pin(async { Ok(Vec::new()) })
    }

    fn list_resource_templates(&self) -> BoxFuture<'_, Result<Vec<ResourceTemplate>, ErrorData>> {
        Box::pin(async { Ok(Vec::new()) })
    }

    fn read_resource(&self, uri: String) -> BoxFuture<'_, Result<ReadResourceResult, ErrorData>> {
        Box::pin(async move { Err(unknown("uri", &uri, format!("no resource `{uri}`"))) })
    }

    fn complete(
        &self,
        _params: CompleteRequestParams,
    ) -> BoxFuture<'_, Result<CompleteResult, ErrorData>> {
        Box::pin(async { Ok(CompleteResult::default()) })
    }

    fn changes(&self) -> Box<dyn ToolChanges> {
        Box::new(Never)
    }
}

/// The hub in this process, through a profile.
#[derive(Debug, Clone)]
pub struct HubRelay {
    hub: Arc<Hub>,
    profile: Option<Profile>,
}

impl HubRelay {
    pub fn new(hub: Arc<Hub>, profile: Option<Profile>) -> Self {
        Self { hub, profile }
    }
}

fn relay_error(error: RelayError, key: (&str, &str)) -> ErrorData {
    match error {
        RelayError::UnknownPrompt(_) | RelayError::UnknownResource(_) => {
            unknown(key.0, key.1, error.to_string())
        }
        // The source's own refusal (a missing argument, an unknown URI) keeps its code.
        RelayError::Upstream(capa_core::UpstreamError::Protocol {
            code: Some(code),
            message,
            ..
        }) => ErrorData::new(
            rmcp::model::ErrorCode(code),
            message,
            Some(json!({ key.0: key.1 })),
        ),
        other => ErrorData::internal_error(other.to_string(), None),
    }
}

impl Relay for HubRelay {
    fn list_prompts(&self) -> BoxFuture<'_, Result<Vec<Prompt>, ErrorData>> {
        Box::pin(async move {
            self.hub.startup_done().await;
            Ok(self.hub.prompts_in(self.profile.as_ref()).await)
        })
    }

    fn get_prompt(
        &self,
        name: String,
        arguments: Option<JsonObject>,
    ) -> BoxFuture<'_, Result<GetPromptResult, ErrorData>> {
        Box::pin(async move {
            self.hub.startup_done().await;
            self.hub
                .get_prompt_in(self.profile.as_ref(), &name, arguments)
                .await
                .map_err(|e| relay_error(e, ("name", &name)))
        })
    }

    fn list_resources(&self) -> BoxFuture<'_, Result<Vec<Resource>, ErrorData>> {
        Box::pin(async move {
            self.hub.startup_done().await;
            Ok(self.hub.resources_in(self.profile.as_ref()).await)
        })
    }

    fn list_resource_templates(&self) -> BoxFuture<'_, Result<Vec<ResourceTemplate>, ErrorData>> {
        Box::pin(async move {
            self.hub.startup_done().await;
            Ok(self.hub.resource_templates_in(self.profile.as_ref()).await)
        })
    }

    fn read_resource(&self, uri: String) -> BoxFuture<'_, Result<ReadResourceResult, ErrorData>> {
        Box::pin(async move {
            self.hub.startup_done().await;
            self.hub
                .read_resource_in(self.profile.as_ref(), &uri)
                .await
                .map_err(|e| relay_error(e, ("uri", &uri)))
        })
    }

    fn complete(
        &self,
        params: CompleteRequestParams,
    ) -> BoxFuture<'_, Result<CompleteResult, ErrorData>> {
        Box::pin(async move {
            self.hub.startup_done().await;
            let key = match &params.r#ref {
                rmcp::model::Reference::Prompt(p) => ("name", p.name.clone()),
                rmcp::model::Reference::Resource(r) => ("uri", r.uri.clone()),
                _ => ("ref", String::new()),
            };
            self.hub
                .complete_in(self.profile.as_ref(), params)
                .await
                .map_err(|e| relay_error(e, (key.0, &key.1)))
        })
    }

    /// The hub's catalog changes: a source that starts, stops or changes its tools may have
    /// other prompts and resources too. (A source's own `list_changed` of prompts or resources
    /// between two of those is not followed yet.)
    fn changes(&self) -> Box<dyn ToolChanges> {
        let mut changes = self.hub.watch_catalog();
        changes.mark_unchanged();
        Box::new(changes)
    }
}
