//! Getting a paused run's approvals in front of a person, in the spec's order:
//!
//! 1. A 2026-07-28 client that declared form elicitation gets `input_required`: one form per
//!    pending approval and a `requestState` sealed with rmcp's `RequestStateCodec`, bound to the
//!    run, each pending call and a digest of its arguments, the client, this very request and
//!    an expiry. Its answer is taken only with that state, only once; the run then resumes in
//!    the same call.
//! 2. An initialize-era client that declared elicitation gets `elicitation/create` mid-call;
//!    without an answer within the run's wall time it falls through to 3.
//! 3. Every other client gets `awaiting_approval`; the hub opens its approval page on the
//!    user's screen, and the model is told only that a page opened (never a URL or a token).
//!
//! `capabilities hub approve <runId>` works in every case.

use std::collections::{BTreeMap, HashSet};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use capa_core::{
    AskingChannel, Choice, Envelope, EnvelopeStatus, ExecuteOptions, ExecuteRequest, Hub,
    JsonObject, LookupError, PendingInput, Profile,
};

use rmcp::model::{
    ElicitRequest, ElicitRequestParams, ElicitationSchema, InputRequest, InputRequiredResult,
    InputResponses, SealOptions,
};
use rmcp::service::{Peer, RoleServer};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

mod direct;
mod sign_ins;

use self::direct::ask_in_form;
pub(crate) use self::direct::authorize_direct_call;

use self::sign_ins::SealedSignIn;

use crate::asking::Asking;
use capa_core::clock::now_ms;

/// Most rounds of asking within one `execute` (each round can only follow a decision).
const MAX_ROUNDS: usize = 16;

/// How long a 2026-07-28 client's forms keep the popup and the page closed.
const FORM_CLAIM: Duration = Duration::from_mins(1);

/// What the state sealed into `requestState` names: the run and each pending call.
#[derive(Debug, Serialize, Deserialize)]
struct Sealed {
    run: String,
    inputs: Vec<SealedInput>,
    /// Sign-ins offered as URL elicitation (`crate::sign_ins`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    sign_ins: Vec<SealedSignIn>,
}

#[derive(Debug, Serialize, Deserialize)]
struct SealedInput {
    id: String,
    call: u32,
    args: String,
}

/// What one `execute` answers with.
pub(crate) enum Answer {
    Envelope(Envelope),
    InputRequired(InputRequiredResult),
    /// The request could not be taken (a bad `requestState`, bad arguments): nothing ran.
    Refused {
        code: &'static str,
        message: String,
    },
}

/// Delivers approvals for the code surface.
pub(crate) struct Approvals {
    hub: Arc<Hub>,
    /// The profile of the surface's clients: runs go through it.
    profile: Option<Profile>,
    codec: crate::state_codec::StateCodec,
    /// Runs whose approval page was opened already (one page per pause).
    opened: Mutex<HashSet<String>>,
}

impl std::fmt::Debug for Approvals {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Approvals").finish_non_exhaustive()
    }
}

impl Approvals {
    pub(crate) fn new(hub: Arc<Hub>, profile: Option<Profile>) -> Self {
        let codec = crate::state_codec::StateCodec::new(hub.clone());
        Self {
            hub,
            profile,
            codec,
            opened: Mutex::new(HashSet::new()),
        }
    }

    /// Runs `execute` and gets whatever it waits for decided where the client allows.
    pub(crate) async fn execute(
        &self,
        arguments: &JsonObject,
        request: ExecuteRequest,
        asking: Asking,
    ) -> Answer {
        let bound = binding(&asking.session, request.client.as_deref(), arguments);
        let mut asking = asking;
        let answering = self.answering_client(&request, &mut asking);
        let cancel = asking.cancel.clone();
        let form_channel = AskingChannel::client_form(request.client.as_deref());
        let can_ask = asking.input_required || asking.elicit_peer.is_some();
        let wall = Duration::from_millis(self.hub.run_limits_in(self.profile.as_ref()).wall_ms);
        let first = if let Some(state) = &asking.request_state {
            match self.take_answers(
                state,
                &bound,
                asking.input_responses.as_ref(),
                answering.as_deref(),
            ) {
                Ok((run_id, all_answered, sign_ins)) => {
                    // A form left unanswered (cancelled) is not asked again in a loop: the
                    // run waits as `awaiting_approval`, for the page or the terminal.
                    asking.input_required &= all_answered;
                    // Sign-in links are offered once: the person accepted and signs in now
                    // (the hub waits for it), or the run waits as `awaiting_connection`.
                    self.take_sign_ins(&mut asking, &sign_ins, wall).await;
                    let options = ExecuteOptions {
                        cancel: cancel.clone(),
                        asked_in: (asking.input_required || asking.elicit_peer.is_some())
                            .then(|| form_channel.clone()),
                    };
                    self.resume(&run_id, request.client.clone(), options).await
                }
                Err((code, message)) => return Answer::Refused { code, message },
            }
        } else {
            let options = ExecuteOptions {
                cancel: cancel.clone(),
                asked_in: can_ask.then(|| form_channel.clone()),
            };
            self.hub
                .execute_in(request.clone(), options, self.profile.as_ref())
                .await
        };
        let mut envelope = match first {
            Ok(envelope) => envelope,
            Err(e) => {
                return Answer::Refused {
                    code: e.code(),
                    message: e.to_string(),
                };
            }
        };
        if let Some(paired) = answering.as_deref().filter(|_| request.code.is_some()) {
            self.hub.pairings().mark_run(&envelope.run_id, paired);
        }
        for _ in 0..MAX_ROUNDS {
            if envelope.status != EnvelopeStatus::AwaitingApproval || cancel.is_cancelled() {
                break;
            }
            let pending = self.pending_approvals(&envelope.run_id);
            if pending.is_empty() {
                break;
            }
            if asking.input_required
                && let Some(result) = self.input_required(
                    &envelope.run_id,
                    &pending,
                    &bound,
                    request.client.as_deref(),
                )
            {
                return Answer::InputRequired(result);
            }
            let Some(peer) = &asking.elicit_peer else {
                break;
            };
            if !self.elicit(peer, &pending, request.client.as_deref()).await {
                break;
            }
            let options = ExecuteOptions {
                cancel: cancel.clone(),
                asked_in: Some(form_channel.clone()),
            };
            match self
                .resume(&envelope.run_id, request.client.clone(), options)
                .await
            {
                Ok(next) => envelope = next,
                Err(e) => {
                    return Answer::Refused {
                        code: e.code(),
                        message: e.to_string(),
                    };
                }
            }
        }
        if let Some(answer) = self
            .offer_sign_ins(&mut envelope, &asking, &bound, &request, wall)
            .await
        {
            return answer;
        }
        self.hand_to_person(&mut envelope);
        Answer::Envelope(envelope)
    }

    /// A run still waiting for approval when no form of the client's asks any more: the popup
    /// and the page take over.
    fn hand_to_person(&self, envelope: &mut Envelope) {
        if envelope.status != EnvelopeStatus::AwaitingApproval {
            return;
        }
        for input in self.pending_approvals(&envelope.run_id) {
            self.hub.approvals().release(&input.id);
        }
        self.open_page(envelope);
    }

    /// The paired client whose own forms answer in this call (its forms on), if any. A resumed
    /// run's forms go only to the paired client that started it: another client (paired or
    /// not) that knows the run's id gets the popup and the page, as any other.
    fn answering_client(&self, request: &ExecuteRequest, asking: &mut Asking) -> Option<String> {
        let answering = asking
            .paired
            .as_ref()
            .filter(|p| p.forms)
            .map(|p| p.id.clone());
        if let (Some(run), Some(paired)) = (&request.resume, &answering)
            && !self.hub.pairings().started_run(run, paired)
        {
            asking.input_required = false;
            asking.elicit_peer = None;
        }
        answering
    }

    async fn resume(
        &self,
        run_id: &str,
        client: Option<String>,
        options: ExecuteOptions,
    ) -> Result<Envelope, LookupError> {
        let request = ExecuteRequest {
            code: None,
            resume: Some(run_id.to_owned()),
            client,
        };
        self.hub
            .execute_in(request, options, self.profile.as_ref())
            .await
    }

    fn pending_approvals(&self, run_id: &str) -> Vec<PendingInput> {
        self.hub
            .approvals()
            .pending_of(run_id)
            .unwrap_or_default()
            .into_iter()
            .filter(|p| p.kind == capa_store::InputKind::Approval)
            .collect()
    }

    /// One form per pending approval, and the state that alone lets their answers in. The
    /// client's forms claim the approvals, so the popup and the page wait for them (for at most
    /// [`FORM_CLAIM`]: a client that never answers must not keep the person from deciding).
    fn input_required(
        &self,
        run_id: &str,
        pending: &[PendingInput],
        bound: &[u8],
        client: Option<&str>,
    ) -> Option<InputRequiredResult> {
        let codec = self.codec.get()?;
        let now = now_ms();
        let ttl_ms = pending
            .iter()
            .map(|p| p.expires_at_ms - now)
            .min()
            .unwrap_or(0)
            .max(1000);
        let sealed = Sealed {
            run: run_id.to_owned(),
            inputs: pending
                .iter()
                .map(|p| SealedInput {
                    id: p.id.clone(),
                    call: p.call_index,
                    args: p.args_digest.clone(),
                })
                .collect(),
            sign_ins: Vec::new(),
        };
        let options = SealOptions::new()
            .associated_data(bound)
            // At least 1000 (the `max` above), so its magnitude is itself.
            .ttl(Duration::from_millis(ttl_ms.unsigned_abs()));
        let state = codec
            .seal_json_with(&sealed, &options)
            .map_err(|e| tracing::error!(error = %e, "could not seal a requestState"))
            .ok()?;
        let requests = pending
            .iter()
            .filter_map(|p| {
                let params = form(p)?;
                Some((
                    p.id.clone(),
                    InputRequest::Elicitation(ElicitRequest::new(params)),
                ))
            })
            .collect::<BTreeMap<_, _>>();
        for input in pending {
            let channel = AskingChannel::client_form(client);
            if let Some(claim) = self
                .hub
                .approvals()
                .claim(&input.id, channel, Some(FORM_CLAIM))
            {
                claim.keep_until_deadline();
            }
        }
        Some(InputRequiredResult::new(Some(requests), Some(state)))
    }

    /// Checks a returned `requestState` and takes the decisions in `responses`. Returns the run
    /// to resume and whether every form got a decision. Any doubt refuses the whole request,
    /// and then nothing is decided or run.
    fn take_answers(
        &self,
        state: &str,
        bound: &[u8],
        responses: Option<&InputResponses>,
        paired: Option<&str>,
    ) -> Result<(String, bool, Vec<SealedSignIn>), (&'static str, String)> {
        let refuse = |message: &str| ("invalid_request_state", message.to_owned());
        let sealed: Sealed = self.codec.open_json_with(state, bound).map_err(|_| {
            refuse("the requestState is not one this hub issued for this request, or it expired; call execute again")
        })?;
        // Approvals are answered only by the paired client that started the run; a state that
        // carries only sign-in links (the person signs in in a browser) needs no pairing.
        if !sealed.inputs.is_empty() {
            let paired = paired.ok_or((
                "not_paired",
                "this client is not paired with the hub (or its forms were turned off), so its answers to approval forms do not count; the person decides in the Capabilities app or at a terminal".to_owned(),
            ))?;
            if !self.hub.pairings().started_run(&sealed.run, paired) {
                return Err(refuse(
                    "this requestState names a run that another client started; only its own client answers its forms",
                ));
            }
        }
        let digest = capa_core::digest::sha256_hex(state.as_bytes());
        let fresh = self
            .hub
            .runs()
            .consume_request_state(&digest)
            .map_err(|e| ("store_unavailable", e.to_string()))?;
        if !fresh {
            return Err((
                "request_state_used",
                "this requestState was used already; each is accepted once".to_owned(),
            ));
        }
        let current = self.pending_approvals(&sealed.run);
        for input in &sealed.inputs {
            let still = current.iter().any(|p| {
                p.id == input.id && p.call_index == input.call && p.args_digest == input.args
            });
            if !still {
                return Err((
                    "approval_changed",
                    format!(
                        "approval {} is no longer pending (decided elsewhere or expired); resume the run to see where it is",
                        input.id
                    ),
                ));
            }
        }
        let empty = InputResponses::new();
        let responses = responses.unwrap_or(&empty);
        let mut all_answered = true;
        for input in &sealed.inputs {
            let Some(choice) = responses.get(&input.id).and_then(choice_of) else {
                // No answer (or cancelled): it stays pending, and the popup or page may ask.
                self.hub.approvals().release(&input.id);
                all_answered = false;
                continue;
            };
            if let Err(e) = self
                .hub
                .approvals()
                .decide_in_form(&input.id, choice, "client")
            {
                tracing::warn!(error = %e, approval = %input.id, "a client's decision was not taken");
            }
        }
        Ok((sealed.run, all_answered, sealed.sign_ins))
    }

    /// Asks an initialize-era client with `elicitation/create`, one approval at a time. While
    /// a form is up the popup and the page stay closed for it; a decision taken in another
    /// channel meanwhile ends the wait. True when every approval got a decision.
    async fn elicit(
        &self,
        peer: &Peer<RoleServer>,
        pending: &[PendingInput],
        client: Option<&str>,
    ) -> bool {
        let wall = Duration::from_millis(self.hub.run_limits_in(self.profile.as_ref()).wall_ms);
        for input in pending {
            let _claim =
                self.hub
                    .approvals()
                    .claim(&input.id, AskingChannel::client_form(client), None);
            if !ask_in_form(&self.hub, peer, input, wall).await {
                return false;
            }
        }
        true
    }

    /// Opens the approval page once per pause and tells the model only that it opened.
    fn open_page(&self, envelope: &mut Envelope) {
        let key = format!(
            "{}:{}",
            envelope.run_id,
            envelope
                .pending
                .iter()
                .filter_map(|p| p.get("id").and_then(Value::as_str))
                .collect::<Vec<_>>()
                .join(",")
        );
        let first_time = self.opened.lock().is_ok_and(|mut o| o.insert(key));
        let shown = first_time && self.hub.approvals().open_page(&envelope.run_id);
        if !shown {
            return;
        }
        let run_id = envelope.run_id.clone();
        for item in &mut envelope.pending {
            if item.get("kind").and_then(Value::as_str) == Some("approval")
                && let Some(fields) = item.as_object_mut()
            {
                fields.insert(
                    "message".to_owned(),
                    Value::String(format!(
                        "An approval page opened on the user's screen. Tell the user; once they decide, call execute with {{\"resume\": \"{run_id}\"}}. If no page appeared, they can run `capabilities hub approve {run_id}` in a terminal."
                    )),
                );
            }
        }
    }
}

/// What a `requestState` is bound to besides its payload: the MCP session (an HTTP session's
/// id, the stdio connection; a stateless 2026-07-28 request has none, and is bound to its
/// client's name and version), the client, and this very request (a digest of the `execute`
/// arguments), so it cannot be replayed by another session or client or against another call.
fn binding(session: &str, client: Option<&str>, arguments: &JsonObject) -> Vec<u8> {
    let arguments = serde_json::to_string(arguments).unwrap_or_default();
    format!(
        "capa/execute\n{session}\n{}\n{}",
        client.unwrap_or_default(),
        capa_core::digest::sha256_hex(arguments.as_bytes())
    )
    .into_bytes()
}

/// The decision in one answer to the form: `accept` with a valid choice, or `decline` (deny).
fn choice_of(response: &Value) -> Option<Choice> {
    match response.get("action").and_then(Value::as_str)? {
        "accept" => response
            .get("content")
            .and_then(|c| c.get("decision"))
            .and_then(Value::as_str)
            .and_then(Choice::parse),
        "decline" => Some(Choice::Deny),
        _ => None,
    }
}

/// The approval form: the call, its connection, why, the redacted preview, and four choices.
pub(super) fn form(input: &PendingInput) -> Option<ElicitRequestParams> {
    let choices: Vec<Value> = Choice::ALL
        .iter()
        .map(|c| json!({"const": c.as_str(), "title": c.title(&input.address)}))
        .collect();
    let schema = json!({
        "type": "object",
        "title": "Approve a tool call",
        "properties": {
            "decision": {
                "type": "string",
                "title": "Decision",
                "oneOf": choices,
            }
        },
        "required": ["decision"]
    });
    let requested_schema: ElicitationSchema = serde_json::from_value(schema)
        .map_err(|e| tracing::error!(error = %e, "the approval form schema did not parse"))
        .ok()?;
    Some(ElicitRequestParams::FormElicitationParams {
        meta: None,
        message: input.message(),
        requested_schema,
    })
}
