//! Calling a tool, with the client of the call answering what the server asks meanwhile: an
//! initialize-era server's requests on the session (`asker.rs`), a 2026-07-28 server's
//! `input_required` rounds (`rounds.rs`).

use std::sync::Arc;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, CreateTaskResult, JsonObject,
};

use super::Upstream;
use crate::asker::{ClientAsker, Unanswerable};
use crate::error::UpstreamError;
use crate::progress::{ProgressSink, SentCall, send_call};
use crate::rounds::{self, Answer};
use crate::source_task;

/// What a source answered a call with, once its rounds are done.
enum Sent {
    Result(CallToolResult),
    /// A task of the source's, followed to its end (`source_task.rs`).
    Task(CreateTaskResult),
}

impl Upstream {
    /// Calls a tool by its remote name. Waits for a connection that is still starting, within the
    /// call's timeout; fails at once when the upstream is down. Progress the upstream reports goes
    /// to `progress` until the call ends. Nobody answers what the server asks meanwhile.
    pub async fn call(
        &self,
        remote_name: &str,
        arguments: Option<JsonObject>,
        progress: Option<ProgressSink>,
    ) -> Result<CallToolResult, UpstreamError> {
        self.call_asking(remote_name, arguments, progress, None)
            .await
    }

    /// [`Upstream::call`], with `asker` answering what the server asks its client meanwhile,
    /// all within the call's timeout. A call with none (code mode's `execute`, the app's calls)
    /// still counts as running: a request the server sends meanwhile may be its own, and must
    /// not reach another client.
    pub async fn call_asking(
        &self,
        remote_name: &str,
        arguments: Option<JsonObject>,
        progress: Option<ProgressSink>,
        asker: Option<Arc<dyn ClientAsker>>,
    ) -> Result<CallToolResult, UpstreamError> {
        // A server inside the hub asks its client nothing and reports no progress: its calls
        // skip the session once it is ready (`direct.rs`).
        if let Some(direct) = self.direct_when_ready() {
            return self
                .call_direct(direct.as_ref(), remote_name, arguments)
                .await;
        }
        let asker = asker.unwrap_or_else(|| Arc::new(Unanswerable::new()));
        let _registration = self.askers.register(asker.clone());
        let meta = Some(rounds::meta_for(asker.as_ref()));
        let remote_name = remote_name.to_owned();
        let (meta_sent, asker_sent) = (meta.clone(), asker.clone());
        let sent = self
            .within_timeout(|peer, auth, deadline| async move {
                let source_id = &self.spec.source_id;
                let send = |input_responses, request_state| {
                    let mut params = CallToolRequestParams::new(remote_name.clone());
                    params.arguments.clone_from(&arguments);
                    params.input_responses = input_responses;
                    params.request_state = request_state;
                    let sent = SentCall {
                        timeout: Some(
                            deadline.saturating_duration_since(tokio::time::Instant::now()),
                        ),
                        meta: meta.clone(),
                        progress: progress.clone(),
                    };
                    let (peer, auth) = (&peer, auth.as_deref());
                    async move {
                        match send_call(peer, params, sent, &self.progress).await {
                            Ok(CallToolResponse::Complete(result)) => {
                                Ok(Answer::Done(Sent::Result(result)))
                            }
                            Ok(CallToolResponse::InputRequired(round)) => Ok(Answer::Round(round)),
                            Ok(CallToolResponse::Task(created)) => {
                                Ok(Answer::Done(Sent::Task(created)))
                            }
                            Ok(_) => Err(UpstreamError::Protocol {
                                source_id: source_id.clone(),
                                code: None,
                                message:
                                    "answered a call with a kind of result the hub does not know"
                                        .to_owned(),
                            }),
                            Err(rmcp::ServiceError::Timeout { .. }) => Err(self.timed_out()),
                            Err(e) => {
                                let error = UpstreamError::from_service(source_id, e);
                                Err(self.signed_out(auth, error).await)
                            }
                        }
                    }
                };
                let sent = rounds::drive(source_id, asker.as_ref(), send).await?;
                Ok((sent, peer))
            })
            .await?;
        match sent {
            (Sent::Result(result), _) => Ok(result),
            // A task outlives the call that made it: each request about it is bounded by the
            // call's timeout, the whole by the task's own life (`source_task.rs`).
            (Sent::Task(created), peer) => {
                let following = source_task::Following {
                    source_id: &self.spec.source_id,
                    peer: &peer,
                    asker: asker_sent.as_ref(),
                    meta: meta_sent,
                    request_timeout: self.spec().call_timeout,
                };
                // Boxed: following is rare, and its state would otherwise enlarge every call's future.
                Box::pin(following.follow(created)).await
            }
        }
    }
}
