//! The OAuth sign-ins a paused run waits for, put to a client that declared URL elicitation:
//! a one-time link to the hub's own sign-in page (`/sign-in/<token>`), never the authorization
//! server's URL with its state and never a token. A 2026-07-28 client gets it in
//! `input_required`; an initialize-era one as `elicitation/create` mid-call. Once the person
//! accepted, the hub waits for the sign-in to finish, then the run resumes in the same call.
//! The model-facing text stays as it is: it names no link.

use std::collections::BTreeMap;
use std::time::Duration;

use capa_core::{Envelope, EnvelopeStatus, ExecuteOptions, ExecuteRequest, Hub, PendingInput};
use rmcp::model::{
    ElicitRequest, ElicitRequestParams, ElicitationAction, InputRequest, InputRequiredResult,
    SealOptions,
};
use rmcp::service::{Peer, RoleServer};
use serde::{Deserialize, Serialize};

use super::{Answer, Approvals, Asking, Sealed};

impl Approvals {
    /// Offers the sign-ins a paused run waits for to a client that declared URL elicitation:
    /// `Some(answer)` when the call answers now (`input_required`); otherwise `envelope` is the
    /// run's latest (resumed after an initialize-era client's person signed in).
    pub(super) async fn offer_sign_ins(
        &self,
        envelope: &mut Envelope,
        asking: &Asking,
        bound: &[u8],
        request: &ExecuteRequest,
        wall: Duration,
    ) -> Option<Answer> {
        if envelope.status != EnvelopeStatus::AwaitingConnection || asking.cancel.is_cancelled() {
            return None;
        }
        let inputs = pending(&self.hub, &envelope.run_id);
        if inputs.is_empty() {
            return None;
        }
        if asking.url_input_required
            && let Some(result) = self.sign_in_required(&envelope.run_id, &inputs, bound)
        {
            return Some(Answer::InputRequired(result));
        }
        let peer = asking.url_peer.as_ref()?;
        if !elicit(&self.hub, peer, &inputs, wall).await {
            return None;
        }
        let options = ExecuteOptions {
            cancel: asking.cancel.clone(),
            asked_in: None,
        };
        match self
            .resume(&envelope.run_id, request.client.clone(), options)
            .await
        {
            Ok(next) => *envelope = next,
            Err(e) => {
                return Some(Answer::Refused {
                    code: e.code(),
                    message: e.to_string(),
                });
            }
        }
        None
    }

    /// The answers to sign-in links an `input_required` carried: links are offered once, so a
    /// later pause of this call waits as `awaiting_connection`; an accepted one is waited for
    /// (the person is signing in now) before the run resumes.
    pub(super) async fn take_sign_ins(
        &self,
        asking: &mut Asking,
        sign_ins: &[SealedSignIn],
        wall: Duration,
    ) {
        if sign_ins.is_empty() {
            return;
        }
        asking.url_input_required = false;
        let responses = asking.input_responses.as_ref();
        if sign_ins.iter().all(|s| accepted(responses, &s.id)) {
            wait(&self.hub, sign_ins, wall).await;
        }
    }

    /// The sign-in links of a run that waits for sign-ins, and the state that brings the
    /// client's answer back to this run.
    fn sign_in_required(
        &self,
        run_id: &str,
        sign_ins: &[PendingInput],
        bound: &[u8],
    ) -> Option<InputRequiredResult> {
        let codec = self.codec.get()?;
        let requests = requests(&self.hub, sign_ins)?;
        let sealed = Sealed {
            run: run_id.to_owned(),
            inputs: Vec::new(),
            sign_ins: self::sealed(sign_ins),
        };
        let options = SealOptions::new()
            .associated_data(bound)
            .ttl(capa_core::SIGN_IN_WAIT);
        let state = codec
            .seal_json_with(&sealed, &options)
            .map_err(|e| tracing::error!(error = %e, "could not seal a requestState"))
            .ok()?;
        Some(InputRequiredResult::new(Some(requests), Some(state)))
    }
}

/// A sign-in named in a sealed `requestState`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(super) struct SealedSignIn {
    pub id: String,
    pub source: String,
    pub connection: Option<String>,
}

/// The pending inputs of `run_id` that wait for a sign-in.
fn pending(hub: &Hub, run_id: &str) -> Vec<PendingInput> {
    hub.approvals()
        .pending_of(run_id)
        .unwrap_or_default()
        .into_iter()
        .filter(PendingInput::is_sign_in)
        .collect()
}

fn sealed(inputs: &[PendingInput]) -> Vec<SealedSignIn> {
    inputs
        .iter()
        .map(|p| SealedSignIn {
            id: p.id.clone(),
            source: p.source.clone(),
            connection: p.connection.clone(),
        })
        .collect()
}

fn params(hub: &Hub, input: &PendingInput) -> Option<ElicitRequestParams> {
    let url = hub
        .connections()
        .sign_in_link(&input.source, input.connection.as_deref())?;
    Some(ElicitRequestParams::UrlElicitationParams {
        meta: None,
        message: format!(
            "Sign in to {} to continue: a run's call to {} needs it. The page opens your sign-in with {} in your browser.",
            input.source, input.address, input.source
        ),
        url,
        elicitation_id: input.id.clone(),
    })
}

/// One URL elicitation per sign-in, keyed by its input id; `None` when no link can be made
/// (no HTTP server in this process).
fn requests(hub: &Hub, inputs: &[PendingInput]) -> Option<BTreeMap<String, InputRequest>> {
    inputs
        .iter()
        .map(|input| {
            let params = params(hub, input)?;
            Some((
                input.id.clone(),
                InputRequest::Elicitation(ElicitRequest::new(params)),
            ))
        })
        .collect()
}

/// Whether the client's answer to the URL elicitation of `id` is `accept`.
fn accepted(responses: Option<&rmcp::model::InputResponses>, id: &str) -> bool {
    responses
        .and_then(|r| r.get(id))
        .and_then(|r| r.get("action"))
        .and_then(serde_json::Value::as_str)
        == Some("accept")
}

/// Puts each sign-in to an initialize-era client as `elicitation/create` (mode `url`) and waits
/// for it to finish. True when every one is signed in within `wall`.
async fn elicit(
    hub: &Hub,
    peer: &Peer<RoleServer>,
    inputs: &[PendingInput],
    wall: Duration,
) -> bool {
    for input in inputs {
        let Some(params) = params(hub, input) else {
            return false;
        };
        match peer
            .create_elicitation_with_timeout(params, Some(wall))
            .await
        {
            Ok(answer) if answer.action == ElicitationAction::Accept => {}
            Ok(_) => return false,
            Err(e) => {
                tracing::info!(error = %e, "no answer to a sign-in link");
                return false;
            }
        }
    }
    wait(hub, &sealed(inputs), wall).await
}

/// Waits until every sign-in in `sign_ins` finished, at most `limit` in all.
async fn wait(hub: &Hub, sign_ins: &[SealedSignIn], limit: Duration) -> bool {
    let deadline = tokio::time::Instant::now() + limit;
    for sign_in in sign_ins {
        let left = deadline.saturating_duration_since(tokio::time::Instant::now());
        if !hub
            .connections()
            .wait_signed_in(&sign_in.source, sign_in.connection.as_deref(), left)
            .await
        {
            return false;
        }
    }
    true
}
