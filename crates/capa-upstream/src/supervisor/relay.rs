//! What an upstream offers besides tools: its prompts, resources and resource templates, asked
//! for when a client asks and relayed as they are, each request within the call's timeout.
//! Nothing is cached: a client's list is the upstream's list of that moment.

use rmcp::model::{
    ClientRequest, CompleteRequestParams, CompleteResult, GetPromptRequestParams, GetPromptResult,
    JsonObject, Prompt, ReadResourceRequestParams, ReadResourceResult, Request, Resource,
    ResourceTemplate, ServerResult, SubscribeRequestParams, UnsubscribeRequestParams,
};
#[expect(
    deprecated,
    reason = "logging is deprecated by SEP-2577 (2026-07-28) but clients of the 2025 era still use it"
)]
use rmcp::model::{LoggingLevel, SetLevelRequestParams};
use rmcp::service::{Peer, PeerRequestOptions, RoleClient};

use std::sync::Arc;

use tokio::time::Instant;

use super::{Upstream, UpstreamState};
use crate::asker::{ClientAsker, Unanswerable};
use crate::auth_signal::AuthSignal;
use crate::error::UpstreamError;
use crate::progress::Abandoned;
use crate::rounds::{self, Answer};

/// What a connected server said it offers beyond tools.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[expect(
    clippy::struct_excessive_bools,
    reason = "each is one capability the server declared, each read on its own"
)]
pub struct Offers {
    pub prompts: bool,
    pub resources: bool,
    /// Resource subscriptions (`resources/subscribe`).
    pub subscribe: bool,
    pub completions: bool,
    pub logging: bool,
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
            subscribe: info
                .capabilities
                .resources
                .as_ref()
                .and_then(|r| r.subscribe)
                .unwrap_or(false),
            completions: info.capabilities.completions.is_some(),
            logging: info.capabilities.logging.is_some(),
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

    /// One prompt, by the server's own name, with `asker` answering what the server asks for it
    /// meanwhile: its requests of the initialize era, or its `input_required` rounds (`rounds.rs`).
    pub async fn get_prompt(
        &self,
        name: &str,
        arguments: Option<JsonObject>,
        asker: Option<Arc<dyn ClientAsker>>,
    ) -> Result<GetPromptResult, UpstreamError> {
        self.in_rounds(
            asker,
            |input_responses, request_state| {
                let mut params = GetPromptRequestParams::new(name.to_owned());
                params.arguments.clone_from(&arguments);
                params.input_responses = input_responses;
                params.request_state = request_state;
                ClientRequest::GetPromptRequest(Request::new(params))
            },
            |answer| match answer {
                ServerResult::GetPromptResult(result) => Some(result),
                _ => None,
            },
        )
        .await
    }

    /// One resource, by the server's own URI, with `asker` answering what the server asks for
    /// it meanwhile, as for a prompt.
    pub async fn read_resource(
        &self,
        uri: &str,
        asker: Option<Arc<dyn ClientAsker>>,
    ) -> Result<ReadResourceResult, UpstreamError> {
        self.in_rounds(
            asker,
            |input_responses, request_state| {
                let mut params = ReadResourceRequestParams::new(uri.to_owned());
                params.input_responses = input_responses;
                params.request_state = request_state;
                ClientRequest::ReadResourceRequest(Request::new(params))
            },
            |answer| match answer {
                ServerResult::ReadResourceResult(result) => Some(result),
                _ => None,
            },
        )
        .await
    }

    /// A request `make` builds with the answers and state of the round before (none the first
    /// time), sent within the call's timeout as often as the server asks for input
    /// (`rounds.rs`); `take` picks its result out of the server's answer.
    async fn in_rounds<T, M, K>(
        &self,
        asker: Option<Arc<dyn ClientAsker>>,
        make: M,
        take: K,
    ) -> Result<T, UpstreamError>
    where
        M: Fn(Option<rmcp::model::InputResponses>, Option<String>) -> ClientRequest,
        K: Fn(ServerResult) -> Option<T>,
    {
        let asker = asker.unwrap_or_else(|| Arc::new(Unanswerable::new()));
        let _registration = self.askers.register(asker.clone());
        let meta = rounds::meta_for(asker.as_ref());
        let source_id = &self.spec().source_id;
        let (make, take) = (&make, &take);
        self.within_timeout(|peer, _, deadline| async move {
            let send = |input_responses, request_state| {
                let mut options = PeerRequestOptions::no_options();
                options.meta = Some(meta.clone());
                // rmcp cancels it at the source when the time is up; the guard when the
                // client stops waiting.
                options.timeout = Some(deadline.saturating_duration_since(Instant::now()));
                let request = make(input_responses, request_state);
                let peer = &peer;
                async move {
                    let answer = async {
                        let handle = peer.send_request_with_option(request, options).await?;
                        let mut abandoned = Abandoned::new(peer, handle.id.clone());
                        let answer = handle.await_response().await;
                        abandoned.disarm();
                        answer
                    };
                    match answer.await {
                        Ok(ServerResult::InputRequiredResult(round)) => Ok(Answer::Round(round)),
                        Ok(other) => take(other)
                            .map(Answer::Done)
                            .ok_or(rmcp::ServiceError::UnexpectedResponse),
                        Err(e) => Err(e),
                    }
                    .map_err(|e| UpstreamError::from_service(source_id, e))
                }
            };
            rounds::drive(source_id, asker.as_ref(), send).await
        })
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

    /// Asks the server for log messages from `level` up (`logging/setLevel`); nothing when it
    /// has no logging.
    #[expect(
        deprecated,
        reason = "logging is deprecated by SEP-2577 (2026-07-28) but clients of the 2025 era still use it"
    )]
    pub async fn set_log_level(&self, level: LoggingLevel) -> Result<(), UpstreamError> {
        if !self.offers().logging {
            return Ok(());
        }
        let params = SetLevelRequestParams::new(level);
        self.ask(|peer| async move { peer.set_level(params).await })
            .await
    }

    /// Asks the server to tell when the resource at `uri` (its own URI) changes.
    #[expect(
        deprecated,
        reason = "servers of the 2025 era take subscriptions only this way; 2026-07-28 ones are not subscribed to yet (docs/relay.md)"
    )]
    pub async fn subscribe(&self, uri: &str) -> Result<(), UpstreamError> {
        let params = SubscribeRequestParams::new(uri.to_owned());
        self.ask(|peer| async move { peer.subscribe(params).await })
            .await
    }

    /// Ends a subscription made with [`Upstream::subscribe`].
    #[expect(
        deprecated,
        reason = "servers of the 2025 era take subscriptions only this way; 2026-07-28 ones are not subscribed to yet (docs/relay.md)"
    )]
    pub async fn unsubscribe(&self, uri: &str) -> Result<(), UpstreamError> {
        let params = UnsubscribeRequestParams::new(uri.to_owned());
        self.ask(|peer| async move { peer.unsubscribe(params).await })
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
        self.within_timeout(|peer, _, _| async move {
            request(peer)
                .await
                .map_err(|e| UpstreamError::from_service(source_id, e))
        })
        .await
    }

    /// Runs `work` on the connected peer (with what the server said of the credentials) within
    /// the call's timeout, which it is given as a deadline: waits for a connection that is still
    /// starting, fails at once when the upstream is down.
    pub(crate) async fn within_timeout<T, F, Fut>(&self, work: F) -> Result<T, UpstreamError>
    where
        F: FnOnce(Peer<RoleClient>, Option<Arc<AuthSignal>>, Instant) -> Fut,
        Fut: Future<Output = Result<T, UpstreamError>>,
    {
        let deadline = Instant::now() + self.spec().call_timeout;
        let (peer, auth) = tokio::time::timeout_at(deadline, self.ready_peer())
            .await
            .map_err(|_| self.timed_out())??;
        tokio::time::timeout_at(deadline, work(peer, auth, deadline))
            .await
            .map_err(|_| self.timed_out())?
    }

    /// The call's timeout passed.
    pub(crate) fn timed_out(&self) -> UpstreamError {
        UpstreamError::Timeout {
            source_id: self.spec().source_id.clone(),
            timeout: self.spec().call_timeout,
        }
    }
}
