//! A source's requests during a direct call of a 2026-07-28 client, folded into that client's
//! `input_required` round trip (docs/relay.md, "A source's requests to the client"). Such a
//! client cannot be sent a request mid-call, so the call goes on running in the hub while its
//! answer to the client is `input_required` with the source's requests and a sealed
//! `requestState`; the client's retry with `inputResponses` hands the answers to the waiting
//! source and waits for the call again (another round, or its result).
//!
//! The state names one parked call, is bound to the session, the tool and its arguments, is
//! good once and only while the call may still run (its `upstreamTimeoutMs`). A state that does
//! not open is `-32602`; an answer that is not the result the request asked for is given to the
//! source as an error.

#![expect(
    deprecated,
    reason = "sampling is deprecated by SEP-2577 but 2025-era sources still ask for it"
)]

use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use capa_core::{AskFuture, ClientAsker, Hub, JsonObject, Wanted};
use rmcp::model::{
    ClientCapabilities, CreateMessageRequest, CreateMessageRequestParams, CreateMessageResult,
    ElicitRequest, ElicitRequestParams, ElicitResult, ErrorData, InputRequest, InputRequiredResult,
    InputResponses, ListRootsRequest, ListRootsResult, SealOptions,
};
use serde_json::Value;
use tokio::sync::{mpsc, oneshot};
use tokio_util::sync::CancellationToken;

use crate::asking::Asking;

/// How long a folded call waits for more requests after a source's first one: a source that
/// asks two things at once (`Promise.all`) gets both into one round.
const GATHER: Duration = Duration::from_millis(50);

/// What marks a `requestState` as one of these (the approvals' have none).
const STATE_PREFIX: &str = "f1.";

/// Folded calls started so far: each one's asker key is its own.
static CALLS: AtomicU64 = AtomicU64::new(0);

/// Beyond a call's own timeout, how long a parked call is kept for its client.
const CALL_MARGIN: Duration = Duration::from_secs(5);

/// Starts a call of a 2026-07-28 client that runs on in the hub while the client answers what
/// its source asks: `run` is given the asker the call runs with.
pub(crate) fn spawn<T, F>(
    hub: &Hub,
    asking: &Asking,
    run: impl FnOnce(Arc<dyn ClientAsker>) -> F,
) -> Running<T>
where
    T: Send + 'static,
    F: Future<Output = T> + Send + 'static,
{
    let (asks_tx, asks) = mpsc::unbounded_channel();
    // The source's request is bounded by the hub's own timeout, which a profile does not lower.
    let ends = Instant::now() + hub.upstream_timeout() + CALL_MARGIN;
    // A 2026-07-28 client has no session, and two people may run the same client (name and
    // version): each folded call is its own asker.
    let asker = Arc::new(FoldingAsker {
        key: format!(
            "{}#{}",
            asking.session,
            CALLS.fetch_add(1, Ordering::Relaxed)
        ),
        capabilities: asking.client_capabilities.clone().unwrap_or_default(),
        // Answers with no state of the hub's are the client's own for the source (with a state,
        // they answer the round that state names, or an approval).
        unasked: Mutex::new(
            asking
                .input_responses
                .clone()
                .filter(|_| asking.request_state.is_none()),
        ),
        asks: asks_tx,
        ends: Mutex::new(ends),
    });
    Running {
        outcome: tokio::spawn(run(asker)),
        asks,
        ends,
        tasks: asking.tasks.clone(),
    }
}

/// What a folded call's `requestState` is bound to: the session, what was called (`kind`: a
/// tool, a prompt) and its arguments.
pub(crate) fn binding(
    kind: &str,
    session: &str,
    name: &str,
    arguments: Option<&JsonObject>,
) -> Vec<u8> {
    let arguments = arguments
        .and_then(|a| serde_json::to_vec(a).ok())
        .unwrap_or_default();
    let digest = capa_core::digest::sha256_hex(&arguments);
    format!("folded {kind}\n{session}\n{name}\n{digest}").into_bytes()
}

/// Whether `state` is a folded call's (else it is the approvals').
pub(crate) fn owns(state: &str) -> bool {
    state.starts_with(STATE_PREFIX)
}

/// The parked calls of one surface, each ending in a `T` (a tool's result, a prompt).
pub(crate) struct Folding<T> {
    codec: crate::state_codec::StateCodec,
    parked: Mutex<HashMap<String, Parked<T>>>,
}

/// A call running in the hub: its result to come, and the requests its source sends meanwhile.
pub(crate) struct Running<T> {
    pub(crate) outcome: tokio::task::JoinHandle<T>,
    pub(crate) asks: mpsc::UnboundedReceiver<CallEvent>,
    /// When the call can no longer be running (its timeout, with a margin).
    pub(crate) ends: Instant,
    /// Its client takes tasks, and these are the surface's (`crate::tasks`): when the source
    /// makes a task of the call, so does the hub for the client, if there is room.
    pub(crate) tasks: Option<crate::task_store::TaskStore>,
}

impl<T> Running<T> {
    /// Room for a task of the hub's, now that the call's source made one: none when the client
    /// takes no tasks or the surface holds as many as it may (`task_store.rs`); the source's
    /// task is then followed while the client waits, as for any call.
    fn room_for_task(&self) -> Option<crate::task_store::Slot> {
        self.tasks.as_ref()?.reserve()
    }
}

/// What the call's source does meanwhile.
pub(crate) enum CallEvent {
    /// It asks the client something.
    Asked(Box<Asked>),
    /// It made a task of the call (SEP-2663), which the hub follows.
    Tasked,
}

/// A call whose source made a task of it, handed to a task of the hub's, with the requests
/// already gathered for a round that will not be sent.
pub(crate) struct Handed<T> {
    pub(crate) running: Running<T>,
    pub(crate) pending: BTreeMap<String, Asked>,
    /// The room the task takes in the surface's store.
    pub(crate) slot: crate::task_store::Slot,
}

/// A call that waits for a client's answers to its source's requests, by key.
struct Parked<T> {
    running: Running<T>,
    waiting: BTreeMap<String, Asked>,
    binding: Vec<u8>,
}

/// What a client is answered for a folded call.
pub(crate) enum Round<T> {
    /// The call's outcome.
    Done(T),
    /// Its source asks: the client answers and retries.
    Asks(InputRequiredResult),
    /// Its source made a task of it: the client is given one of the hub's (`crate::tasks`).
    Task(Box<Handed<T>>),
    /// It ended without one: `code` and a sentence say why.
    Lost {
        code: &'static str,
        message: &'static str,
    },
}

/// One request of a source, waiting for its answer.
pub(crate) struct Asked {
    /// The source's own key for it (a 2026-07-28 source's round), kept for the client.
    pub(crate) key: Option<String>,
    pub(crate) request: InputRequest,
    pub(crate) reply: oneshot::Sender<Result<Value, ErrorData>>,
}

#[derive(serde::Serialize, serde::Deserialize)]
struct Sealed {
    call: String,
}

impl<T> std::fmt::Debug for Folding<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Folding").finish_non_exhaustive()
    }
}

impl<T: Send + 'static> Folding<T> {
    pub(crate) fn new(hub: Arc<capa_core::Hub>) -> Self {
        Self {
            codec: crate::state_codec::StateCodec::new(hub),
            parked: Mutex::new(HashMap::new()),
        }
    }

    /// Waits for `running` to end, or for its source to ask something: then parks it and answers
    /// `input_required`. A client that cancels its request (or goes away) ends the call.
    pub(crate) async fn wait(
        &self,
        mut running: Running<T>,
        binding: Vec<u8>,
        cancel: CancellationToken,
    ) -> Round<T> {
        let first = loop {
            let event = tokio::select! {
                outcome = &mut running.outcome => return complete(outcome),
                event = running.asks.recv() => event,
                () = cancel.cancelled() => {
                    running.outcome.abort();
                    return Round::Lost { code: "cancelled", message: "the client cancelled the call" };
                }
            };
            match event {
                Some(CallEvent::Asked(asked)) => break *asked,
                Some(CallEvent::Tasked) => {
                    if let Some(slot) = running.room_for_task() {
                        let pending = BTreeMap::new();
                        return Round::Task(Box::new(Handed {
                            running,
                            pending,
                            slot,
                        }));
                    }
                    // Otherwise the client waits for the call as for any other.
                }
                None => return complete((&mut running.outcome).await),
            }
        };
        let mut waiting = BTreeMap::new();
        gathered(&mut waiting, first);
        let gather = tokio::time::sleep(GATHER);
        tokio::pin!(gather);
        loop {
            tokio::select! {
                () = &mut gather => break,
                event = running.asks.recv() => match event {
                    Some(CallEvent::Asked(asked)) => gathered(&mut waiting, *asked),
                    Some(CallEvent::Tasked) => {
                        if let Some(slot) = running.room_for_task() {
                            return Round::Task(Box::new(Handed {
                                running,
                                pending: waiting,
                                slot,
                            }));
                        }
                    }
                    None => break,
                },
            }
        }
        self.park(running, waiting, binding)
    }

    /// A retry of a parked call with the client's answers.
    pub(crate) async fn resume(
        &self,
        state: &str,
        binding: Vec<u8>,
        responses: Option<InputResponses>,
        cancel: CancellationToken,
    ) -> Result<Round<T>, ErrorData> {
        let refused = || {
            ErrorData::invalid_params(
                "the requestState is not one this hub issued for this request, it expired, or it was used already; send the request again without it",
                None,
            )
        };
        let sealed = state.strip_prefix(STATE_PREFIX).ok_or_else(refused)?;
        let sealed: Sealed = self
            .codec
            .open_json_with(sealed, &binding)
            .map_err(|_| refused())?;
        let parked = self.lock().remove(&sealed.call).ok_or_else(refused)?;
        if parked.binding != binding {
            return Err(refused());
        }
        let mut responses = responses.unwrap_or_default();
        let mut missing = BTreeMap::new();
        for (key, asked) in parked.waiting {
            match responses.remove(&key) {
                Some(answer) => {
                    // The source may have given up meanwhile: nobody to hand it to.
                    let _ = asked.reply.send(Ok(answer));
                }
                None => {
                    missing.insert(key, asked);
                }
            }
        }
        if !missing.is_empty() {
            return Ok(self.park(parked.running, missing, binding));
        }
        Ok(self.wait(parked.running, binding, cancel).await)
    }

    fn park(
        &self,
        running: Running<T>,
        waiting: BTreeMap<String, Asked>,
        binding: Vec<u8>,
    ) -> Round<T> {
        let requests: BTreeMap<String, InputRequest> = waiting
            .iter()
            .map(|(key, asked)| (key.clone(), asked.request.clone()))
            .collect();
        // Without randomness there is no id no other call could have: the call ends.
        let (Ok(high), Ok(low)) = (getrandom::u64(), getrandom::u64()) else {
            return lost_without_state(waiting);
        };
        let call = format!("{high:016x}{low:016x}");
        let ttl = running.ends.saturating_duration_since(Instant::now());
        let options = SealOptions::new()
            .associated_data(&binding)
            .ttl(ttl.max(Duration::from_secs(1)));
        let sealed = self.codec.get().and_then(|codec| {
            codec
                .seal_json_with(&Sealed { call: call.clone() }, &options)
                .ok()
        });
        let Some(sealed) = sealed else {
            return lost_without_state(waiting);
        };
        let mut parked = self.lock();
        let now = Instant::now();
        // Calls whose clients never came back have ended by now: let them go.
        parked.retain(|_, p| p.running.ends > now);
        parked.insert(
            call,
            Parked {
                running,
                waiting,
                binding,
            },
        );
        Round::Asks(InputRequiredResult::new(
            Some(requests),
            Some(format!("{STATE_PREFIX}{sealed}")),
        ))
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Parked<T>>> {
        self.parked.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// A round that cannot be handed to the client (no id or state could be made): the source is
/// told, and the call ends.
fn lost_without_state<T>(waiting: BTreeMap<String, Asked>) -> Round<T> {
    for (_, asked) in waiting {
        let _ = asked.reply.send(Err(ErrorData::internal_error(
            "the hub could not seal a requestState for the client",
            None,
        )));
    }
    Round::Lost {
        code: "internal",
        message: "the hub could not pass the source's request on to this client",
    }
}

/// Adds a source's request to a round: under the source's own key when it gave one not taken,
/// else under `source_request_N`.
fn gathered(waiting: &mut BTreeMap<String, Asked>, asked: Asked) {
    let key = key_for(asked.key.as_deref(), waiting.len(), |k| {
        waiting.contains_key(k)
    });
    waiting.insert(key, asked);
}

/// The key a source's request is put to the client under, given the `count` keys `taken`
/// already: the source's own when it gave one not taken, else `source_request_N`.
pub(crate) fn key_for(wanted: Option<&str>, count: usize, taken: impl Fn(&str) -> bool) -> String {
    match wanted {
        Some(key) if !taken(key) => key.to_owned(),
        // Of these count + 1 names, the count taken leave one free.
        _ => (count..=2 * count)
            .map(|n| format!("source_request_{n}"))
            .find(|k| !taken(k))
            .unwrap_or_default(),
    }
}

fn complete<T>(outcome: Result<T, tokio::task::JoinError>) -> Round<T> {
    outcome.map_or(
        Round::Lost {
            code: "internal",
            message: "the call failed inside the hub",
        },
        Round::Done,
    )
}

/// The asker of a folded call: each request goes to [`Folding::wait`] and waits for the
/// client's answer.
struct FoldingAsker {
    key: String,
    capabilities: ClientCapabilities,
    unasked: Mutex<Option<InputResponses>>,
    asks: mpsc::UnboundedSender<CallEvent>,
    /// When the call can no longer be running: a client that has not answered by then never
    /// will, and the source is told so. Later once its source made a task of it.
    ends: Mutex<Instant>,
}

impl FoldingAsker {
    async fn ask(
        &self,
        key: Option<&str>,
        wanted: Wanted,
        request: InputRequest,
    ) -> Result<Value, ErrorData> {
        crate::asker::require(&self.capabilities, wanted)?;
        let (reply, answer) = oneshot::channel();
        let asked = Asked {
            key: key.map(str::to_owned),
            request,
            reply,
        };
        self.asks
            .send(CallEvent::Asked(Box::new(asked)))
            .map_err(|_| {
                ErrorData::internal_error("the call no longer waits for the client", None)
            })?;
        let unanswered = || ErrorData::internal_error("the client did not answer in time", None);
        let ends = *self.ends.lock().unwrap_or_else(PoisonError::into_inner);
        tokio::time::timeout_at(ends.into(), answer)
            .await
            .map_err(|_| unanswered())?
            .map_err(|_| unanswered())?
    }
}

fn answer_as<T: serde::de::DeserializeOwned>(value: Value, what: &str) -> Result<T, ErrorData> {
    serde_json::from_value(value).map_err(|e| {
        ErrorData::invalid_params(format!("the client's answer is no {what}: {e}"), None)
    })
}

impl ClientAsker for FoldingAsker {
    fn key(&self) -> &str {
        &self.key
    }

    fn create_message(
        &self,
        params: CreateMessageRequestParams,
    ) -> AskFuture<'_, CreateMessageResult> {
        Box::pin(async move {
            let request = InputRequest::CreateMessage(CreateMessageRequest::new(params));
            let answer = self.ask(None, Wanted::Sampling, request).await?;
            answer_as(answer, "sampling result")
        })
    }

    fn create_elicitation(&self, params: ElicitRequestParams) -> AskFuture<'_, ElicitResult> {
        Box::pin(async move {
            let request = InputRequest::Elicitation(ElicitRequest::new(params));
            let answer = self.ask(None, Wanted::Elicitation, request).await?;
            answer_as(answer, "elicitation result")
        })
    }

    fn list_roots(&self) -> AskFuture<'_, ListRootsResult> {
        Box::pin(async move {
            let request = InputRequest::ListRoots(ListRootsRequest::default());
            let answer = self.ask(None, Wanted::Roots, request).await?;
            answer_as(answer, "roots list")
        })
    }

    fn capabilities(&self) -> ClientCapabilities {
        self.capabilities.clone()
    }

    fn answered_unasked(&self) -> Option<InputResponses> {
        self.unasked
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take()
    }

    fn task_started(&self, lasts: Duration) {
        *self.ends.lock().unwrap_or_else(PoisonError::into_inner) =
            Instant::now() + lasts + CALL_MARGIN;
        // Nobody listens once the call has ended: then there is nothing to hand over.
        let _ = self.asks.send(CallEvent::Tasked);
    }

    /// Under the source's key, and handed back as the client gave it: the source reads it.
    fn answer(&self, key: &str, request: InputRequest) -> AskFuture<'_, Value> {
        let wanted = Wanted::of(&request);
        let key = key.to_owned();
        Box::pin(async move {
            let wanted = wanted.ok_or_else(|| {
                ErrorData::invalid_params("the hub cannot ask a client this", None)
            })?;
            self.ask(Some(&key), wanted, request).await
        })
    }
}
