//! The sources' prompts and resources, as a front serves them (docs/relay.md): from the hub in
//! this process ([`HubRelay`], through a profile), or from a running hub (`capa mcp`'s bridge).
//! A surface without sources behind it relays nothing ([`NoRelay`]).

#![expect(
    deprecated,
    reason = "log levels are deprecated by SEP-2577 (2026-07-28) but clients of the 2025 era still set them"
)]

use std::sync::Arc;

use capa_core::{Hub, JsonObject, Profile, RelayError, Subscribed};
use rmcp::model::{
    CompleteRequestParams, CompleteResult, ErrorData, GetPromptResponse, GetPromptResult,
    LoggingLevel, Prompt, ReadResourceResponse, ReadResourceResult, Resource, ResourceTemplate,
};
use serde_json::json;

use crate::asking::Asking;
use crate::boxed::{BoxFuture, Never, ToolChanges};
use crate::folded::{self, Folding, Round};
use crate::notices::{HubNotices, NoNotices, Notices};

/// Prompts and resources to serve.
pub trait Relay: Send + Sync {
    /// Every prompt, named `source.prompt`.
    fn list_prompts(&self) -> BoxFuture<'_, Result<Vec<Prompt>, ErrorData>>;
    /// The prompt `name`; `asking` is how its client answers what the source asks meanwhile.
    fn get_prompt(
        &self,
        name: String,
        arguments: Option<JsonObject>,
        asking: Asking,
    ) -> BoxFuture<'_, Result<GetPromptResponse, ErrorData>>;
    fn list_resources(&self) -> BoxFuture<'_, Result<Vec<Resource>, ErrorData>>;
    fn list_resource_templates(&self) -> BoxFuture<'_, Result<Vec<ResourceTemplate>, ErrorData>>;
    /// The resource at `uri`; `asking` is how its client answers what the source asks meanwhile.
    fn read_resource(
        &self,
        uri: String,
        asking: Asking,
    ) -> BoxFuture<'_, Result<ReadResourceResponse, ErrorData>>;
    /// Completions of a prompt's or resource template's argument.
    fn complete(
        &self,
        params: CompleteRequestParams,
    ) -> BoxFuture<'_, Result<CompleteResult, ErrorData>>;
    /// Signals that the prompts or resources may have changed (a source started, stopped or
    /// changed), owned by the one listener that waits on it.
    fn changes(&self) -> Box<dyn ToolChanges>;
    /// Asks the sources for log messages from `level` up (`logging/setLevel`).
    fn set_log_level(&self, level: LoggingLevel) -> BoxFuture<'_, Result<(), ErrorData>>;
    /// Subscribes to the resource a client names `uri`.
    fn subscribe(&self, uri: String) -> BoxFuture<'_, Result<Subscribed, ErrorData>>;
    /// Lets go of a subscription made with [`Relay::subscribe`].
    fn unsubscribe(&self, key: Subscribed) -> BoxFuture<'_, ()>;
    /// The sources' notices from now on, owned by the one listener that waits on them.
    fn notices(&self) -> Box<dyn Notices>;
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
        _asking: Asking,
    ) -> BoxFuture<'_, Result<GetPromptResponse, ErrorData>> {
        Box::pin(async move { Err(unknown("name", &name, format!("no prompt `{name}`"))) })
    }

    fn list_resources(&self) -> BoxFuture<'_, Result<Vec<Resource>, ErrorData>> {
        Box::pin(async { Ok(Vec::new()) })
    }

    fn list_resource_templates(&self) -> BoxFuture<'_, Result<Vec<ResourceTemplate>, ErrorData>> {
        Box::pin(async { Ok(Vec::new()) })
    }

    fn read_resource(
        &self,
        uri: String,
        _asking: Asking,
    ) -> BoxFuture<'_, Result<ReadResourceResponse, ErrorData>> {
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

    fn set_log_level(&self, _level: LoggingLevel) -> BoxFuture<'_, Result<(), ErrorData>> {
        Box::pin(async { Ok(()) })
    }

    fn subscribe(&self, uri: String) -> BoxFuture<'_, Result<Subscribed, ErrorData>> {
        Box::pin(async move { Err(unknown("uri", &uri, format!("no resource `{uri}`"))) })
    }

    fn unsubscribe(&self, _key: Subscribed) -> BoxFuture<'_, ()> {
        Box::pin(async {})
    }

    fn notices(&self) -> Box<dyn Notices> {
        Box::new(NoNotices)
    }
}

/// The hub in this process, through a profile.
#[derive(Debug, Clone)]
pub struct HubRelay {
    hub: Arc<Hub>,
    profile: Option<Profile>,
    /// Prompts whose sources wait for a 2026-07-28 client's answers.
    prompts: Arc<Folding<Result<GetPromptResult, ErrorData>>>,
    /// Resources whose sources wait for a 2026-07-28 client's answers.
    resources: Arc<Folding<Result<ReadResourceResult, ErrorData>>>,
}

impl HubRelay {
    pub fn new(hub: Arc<Hub>, profile: Option<Profile>) -> Self {
        let prompts = Arc::new(Folding::new(hub.clone()));
        let resources = Arc::new(Folding::new(hub.clone()));
        Self {
            hub,
            profile,
            prompts,
            resources,
        }
    }
}

/// The answer to a `prompts/get` of a 2026-07-28 client.
fn prompt_response(
    round: Round<Result<GetPromptResult, ErrorData>>,
) -> Result<GetPromptResponse, ErrorData> {
    match round {
        Round::Done(got) => got.map(GetPromptResponse::Complete),
        Round::Asks(round) => Ok(GetPromptResponse::InputRequired(round)),
        Round::Lost { message, .. } => Err(ErrorData::internal_error(message, None)),
        Round::Task(_) => Err(no_task_of("a prompt")),
    }
}

/// The answer to a `resources/read` of a 2026-07-28 client.
fn resource_response(
    round: Round<Result<ReadResourceResult, ErrorData>>,
) -> Result<ReadResourceResponse, ErrorData> {
    match round {
        Round::Done(read) => read.map(ReadResourceResponse::Complete),
        Round::Asks(round) => Ok(ReadResourceResponse::InputRequired(round)),
        Round::Lost { message, .. } => Err(ErrorData::internal_error(message, None)),
        Round::Task(_) => Err(no_task_of("a resource")),
    }
}

/// Prompts and resources are never given as tasks (their `Running::tasks` is none): SEP-2663
/// has tasks of tool calls only.
fn no_task_of(what: &str) -> ErrorData {
    ErrorData::internal_error(
        format!("the source made a task of {what}, which the hub does not pass on"),
        None,
    )
}

/// Runs a prompt's or resource's request `run` with its client answering what the source asks
/// meanwhile: a 2026-07-28 client in rounds (`crate::folded`: a new request waits in `folding`
/// for its first round, a retry with the hub's state goes on with it), others on their
/// session if they have one.
async fn in_rounds<T, F, Fut>(
    hub: &Arc<Hub>,
    folding: &Folding<Result<T, ErrorData>>,
    asking: &Asking,
    binding: Vec<u8>,
    run: F,
) -> Result<Round<Result<T, ErrorData>>, ErrorData>
where
    T: Send + 'static,
    F: FnOnce(Arc<Hub>, Option<Arc<dyn capa_core::ClientAsker>>) -> Fut,
    Fut: std::future::Future<Output = Result<T, ErrorData>> + Send + 'static,
{
    if asking.round_trips
        && let Some(state) = asking.request_state.as_deref()
        && folded::owns(state)
    {
        let responses = asking.input_responses.clone();
        return folding
            .resume(state, binding, responses, asking.cancel.clone())
            .await;
    }
    if !asking.round_trips {
        let asker = crate::asker::asker_for(asking);
        return Ok(Round::Done(run(hub.clone(), asker).await));
    }
    let running = folded::spawn(hub, asking, |asker| run(hub.clone(), Some(asker)));
    Ok(folding.wait(running, binding, asking.cancel.clone()).await)
}

fn relay_error(error: RelayError, key: (&str, &str)) -> ErrorData {
    match error {
        RelayError::UnknownPrompt(_) | RelayError::UnknownResource(_) => {
            unknown(key.0, key.1, error.to_string())
        }
        RelayError::NoSubscriptions(_) => {
            ErrorData::invalid_params(error.to_string(), Some(json!({ key.0: key.1 })))
        }
        // A capability the client did not declare: only the client can change that (SEP-2575).
        RelayError::Upstream(capa_core::UpstreamError::ClientLacks { required, .. }) => {
            ErrorData::missing_required_client_capability(*required)
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

    /// A 2026-07-28 client answers what the source asks in `input_required` rounds, as for
    /// a direct tool call (`crate::folded`); others on their session, if they have one.
    fn get_prompt(
        &self,
        name: String,
        arguments: Option<JsonObject>,
        asking: Asking,
    ) -> BoxFuture<'_, Result<GetPromptResponse, ErrorData>> {
        Box::pin(async move {
            self.hub.startup_done().await;
            let binding = folded::binding("prompt", &asking.session, &name, arguments.as_ref());
            let profile = self.profile.clone();
            let get = |hub: Arc<Hub>, asker| async move {
                hub.get_prompt_in(profile.as_ref(), &name, arguments, asker)
                    .await
                    .map_err(|e| relay_error(e, ("name", &name)))
            };
            prompt_response(in_rounds(&self.hub, &self.prompts, &asking, binding, get).await?)
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

    /// Rounds as for a prompt.
    fn read_resource(
        &self,
        uri: String,
        asking: Asking,
    ) -> BoxFuture<'_, Result<ReadResourceResponse, ErrorData>> {
        Box::pin(async move {
            self.hub.startup_done().await;
            let binding = folded::binding("resource", &asking.session, &uri, None);
            let profile = self.profile.clone();
            let read = |hub: Arc<Hub>, asker| async move {
                hub.read_resource_in(profile.as_ref(), &uri, asker)
                    .await
                    .map_err(|e| relay_error(e, ("uri", &uri)))
            };
            resource_response(in_rounds(&self.hub, &self.resources, &asking, binding, read).await?)
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

    fn set_log_level(&self, level: LoggingLevel) -> BoxFuture<'_, Result<(), ErrorData>> {
        Box::pin(async move {
            self.hub.startup_done().await;
            self.hub
                .set_log_level_in(self.profile.as_ref(), level)
                .await;
            Ok(())
        })
    }

    fn subscribe(&self, uri: String) -> BoxFuture<'_, Result<Subscribed, ErrorData>> {
        Box::pin(async move {
            self.hub.startup_done().await;
            self.hub
                .subscribe_in(self.profile.as_ref(), &uri)
                .await
                .map_err(|e| relay_error(e, ("uri", &uri)))
        })
    }

    fn unsubscribe(&self, key: Subscribed) -> BoxFuture<'_, ()> {
        Box::pin(async move { self.hub.unsubscribe(&key).await })
    }

    fn notices(&self) -> Box<dyn Notices> {
        Box::new(HubNotices {
            hub: self.hub.clone(),
            profile: self.profile.clone(),
            notices: self.hub.sources().notices(),
        })
    }
}
