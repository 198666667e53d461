//! One `execute`: a new run from code, or a resume that replays a paused one, each attempt in
//! a fresh sandbox, its envelope recorded when it ends.

use std::sync::Arc;

use capa_domain::AskingChannel;
use capa_domain::clock::now_ms;
use capa_sandbox::{CancellationToken, Limits, RunError, RunInput, RunStatus, Whole};
use capa_store::{InputKind, RunRecord, RunState, Store};

use crate::absent;
use crate::context::RunnerContext;
use crate::envelope::{self, Envelope, EnvelopeStatus};
use crate::gateway::{Gateway, Unready};
use crate::handles;
use crate::host::RunHost;
use crate::ownership::{Progress, progress};
use crate::slots::{RunRefusal, RunSlots};
use crate::{journal, prepare, settle};

/// An `execute` request: exactly one of `code` and `resume`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ExecuteRequest {
    pub code: Option<String>,
    pub resume: Option<String>,
    /// The client's name, for history.
    pub client: Option<String>,
}

/// How the client of an `execute` takes part in its run.
#[derive(Debug, Clone, Default)]
pub struct ExecuteOptions {
    /// Fires when the client cancels or goes away: the attempt ends — queued calls never start,
    /// calls in flight are cancelled upstream — and the run is recorded `cancelled`, which a
    /// later `resume` answers with.
    pub cancel: CancellationToken,
    /// The client shows its own approval forms: approvals of this attempt are claimed for it
    /// from the moment they are recorded, so the popup and the page wait (see
    /// [`AskingChannel`]).
    pub asked_in: Option<AskingChannel>,
}

/// A run the hub would not start, as the envelope's error.
fn refused(refusal: &RunRefusal) -> RunError {
    RunError {
        code: refusal.code().to_owned(),
        message: refusal.to_string(),
        hint: Some(refusal.hint()),
    }
}

/// What the envelope's result and logs may take of `inlineResultBytes`: the rest is for its
/// one-line text summary, so that both channels together stay within the limit.
fn envelope_budget(limits: &Limits) -> usize {
    limits
        .inline_result_bytes
        .saturating_sub(envelope::SUMMARY_BYTES)
}

/// Code that holds the value of a stored secret, refused before it runs.
fn secret_in_code() -> RunError {
    RunError {
        code: "secret_in_code".to_owned(),
        message: "the code holds the value of a secret stored in Capabilities, so the hub does not run it: it never keeps secrets in history, and a run it cannot keep could not go on after an approval".to_owned(),
        hint: Some("Remove the secret from the code: a tool gets its credentials from its connection, never from code. Then run the code again.".to_owned()),
    }
}

/// What one attempt runs.
struct Attempt {
    run_id: String,
    code: String,
    seed: u64,
    clock_start_ms: i64,
    client: Option<String>,
    /// Sources the code names that were still missing when the run started.
    unready: Vec<Unready>,
}

/// Why an `execute` got no envelope.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ExecuteError {
    /// The request is not one the runner can answer; the message says how to fix it.
    #[error("{0}")]
    InvalidArguments(String),
    /// The run's records could not be read.
    #[error("{0}")]
    Store(String),
}

/// Runs code and resumes runs, reaching tools through `G`.
pub struct Runner<G: Gateway> {
    gateway: Arc<G>,
    context: Arc<RunnerContext>,
}

impl<G: Gateway> std::fmt::Debug for Runner<G> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Runner").finish_non_exhaustive()
    }
}

impl<G: Gateway> Runner<G> {
    pub fn new(gateway: Arc<G>, context: RunnerContext) -> Self {
        Self {
            gateway,
            context: Arc::new(context),
        }
    }

    /// Runs model code, or goes on with an earlier run; `options` say how the client takes
    /// part (cancel, its own forms).
    pub async fn execute(
        &self,
        request: ExecuteRequest,
        options: ExecuteOptions,
    ) -> Result<Envelope, ExecuteError> {
        match (request.code, request.resume) {
            (Some(code), None) => Ok(self.run_code(code, request.client, options).await),
            (None, Some(run_id)) => self.resume(&run_id, options).await,
            _ => Err(ExecuteError::InvalidArguments(
                "send exactly one of `code` (the body of an async function) or `resume` (a run id)"
                    .to_owned(),
            )),
        }
    }

    fn store(&self) -> &Store {
        &self.context.store
    }

    fn slots(&self) -> &RunSlots {
        &self.context.slots
    }

    async fn run_code(
        &self,
        code: String,
        client: Option<String>,
        options: ExecuteOptions,
    ) -> Envelope {
        self.gateway.startup_done().await;
        let unready = self.unready_named_in(&code).await;
        let run_id = crate::ids::new_run_id();
        let seed = crate::ids::new_seed();
        let started = now_ms();
        // History never holds a secret, even one a model pasted into its code. Such code is
        // refused before it runs: it could not be kept, so a run that paused for a person could
        // never go on, and the person would decide for nothing.
        let stored_code = self.context.redactor.redact(&code);
        let holds_secret = stored_code != code;
        let record = RunRecord {
            id: run_id.clone(),
            resumable: !holds_secret,
            code: stored_code,
            seed,
            clock_start_ms: started,
            client: client.clone(),
            status: RunState::Running,
            envelope: None,
            attempts: 1,
            created_at_ms: started,
            updated_at_ms: started,
            owner: Some(self.slots().owner()),
            lease: Some(self.slots().holder().lease(started)),
        };
        // Durable with the run's first call that may write, its pause or its end (each commits
        // the store's queue first); until then a replay would need nothing of it.
        self.store().defer_insert_run(record);
        if holds_secret {
            let envelope = Envelope::refused(&run_id, secret_in_code(), Vec::new());
            self.record_envelope(&envelope);
            return envelope;
        }
        let attempt = Attempt {
            run_id: run_id.clone(),
            code,
            seed,
            clock_start_ms: started,
            client,
            unready,
        };
        let lock = self.slots().lock_of(&run_id);
        let _held = lock.lock().await;
        let _slot = match self.slots().slot(&options.cancel).await {
            Ok(slot) => slot,
            Err(refusal) => {
                // Recorded like any run that ended: the model sends its code again.
                let envelope = Envelope::refused(&run_id, refused(&refusal), Vec::new());
                self.record_envelope(&envelope);
                return envelope;
            }
        };
        self.attempt(attempt, options).await
    }

    /// The sources `code` reads the global of that have no tools: one restarting (or slow to
    /// start) is waited for, a bounded time, as the code would otherwise meet a bare
    /// `ReferenceError`; the ones still missing after that.
    async fn unready_named_in(&self, code: &str) -> Vec<Unready> {
        let named = absent::named_sources_without_tools(
            code,
            &self.gateway.source_ids(),
            &self.gateway.catalog(),
        );
        if named.is_empty() {
            Vec::new()
        } else {
            self.gateway.wait_for_sources(named).await
        }
    }

    /// One attempt of a run (the first, or a replay), recorded when it ends.
    async fn attempt(&self, attempt: Attempt, options: ExecuteOptions) -> Envelope {
        let run_id = attempt.run_id.clone();
        let mut whole = Whole::default();
        let mut limits = self.context.limits.clone();
        // The text line beside the envelope is part of what goes out inline.
        limits.inline_result_bytes = envelope_budget(&limits);
        let envelope = match prepare::prepare(&attempt.code, limits.code_bytes).await {
            Err(error) => Envelope::refused(
                &run_id,
                RunError {
                    code: error.code().to_owned(),
                    message: error.to_string(),
                    hint: Some(error.hint()),
                },
                Vec::new(),
            ),
            Ok(prepared) => {
                let journal = journal::load(self.store(), &run_id);
                let inputs = journal::inputs(self.store(), &run_id);
                let input = RunInput {
                    code: prepared.js,
                    namespaces: self.context.namespaces.get(
                        &self.gateway.catalog(),
                        self.gateway.listing(),
                        &attempt.unready,
                    ),
                    seed: attempt.seed,
                    clock_start_ms: attempt.clock_start_ms,
                    limits,
                    calls_before: 0,
                    keep_whole: true,
                };
                let unlisted = input
                    .namespaces
                    .iter()
                    .filter_map(|ns| ns.unlisted_source.clone())
                    .collect();
                let host = Arc::new(RunHost {
                    gateway: self.gateway.clone(),
                    context: self.context.clone(),
                    run_id: run_id.clone(),
                    client: attempt.client.clone(),
                    journal,
                    inputs,
                    asked_in: options.asked_in,
                    unlisted,
                });
                let mut output = capa_sandbox::run_cancellable(input, host, options.cancel).await;
                whole = std::mem::take(&mut output.whole);
                if output.status == RunStatus::Suspended {
                    self.paused_envelope(&run_id, output, prepared.notices)
                } else {
                    let mut envelope = Envelope::from_run(&run_id, output, prepared.notices);
                    if let Some(error) = envelope.error.as_ref()
                        && let Some(explained) = absent::explain(error, &attempt.unready)
                    {
                        envelope.error = Some(explained);
                    }
                    envelope
                }
            }
        };
        let mut envelope = self.redact_envelope(envelope);
        if whole != Whole::default() {
            // Tens of MB to redact, serialise and write: off the runtime's threads.
            let store = Arc::clone(&self.context.store);
            let redactor = Arc::clone(&self.context.redactor);
            let (id, client) = (run_id.clone(), attempt.client.clone());
            let kept = tokio::task::spawn_blocking(move || {
                handles::keep(&store, &redactor, &id, client.as_deref(), whole, now_ms())
            })
            .await;
            let (handles, notices) = kept.unwrap_or_else(|_| {
                (
                    Vec::new(),
                    vec!["the whole result could not be kept for hub.read".to_owned()],
                )
            });
            envelope.handles = handles;
            envelope.notices.extend(notices);
        }
        self.record_envelope(&envelope);
        envelope
    }

    /// The envelope of a run that waits for people: its pending inputs, nothing else to do.
    fn paused_envelope(
        &self,
        run_id: &str,
        output: capa_sandbox::RunOutput,
        notices: Vec<String>,
    ) -> Envelope {
        let pending = self.gateway.pending_of_run(run_id).unwrap_or_else(|e| {
            tracing::error!(error = %e, run = %run_id, "could not read a run's pending inputs");
            Vec::new()
        });
        let status = if pending.iter().any(|p| p.kind == InputKind::Approval) {
            EnvelopeStatus::AwaitingApproval
        } else {
            EnvelopeStatus::AwaitingConnection
        };
        let mut envelope = Envelope::from_run(run_id, output, notices);
        envelope.status = status;
        envelope.pending = pending.into_iter().map(|p| p.item).collect();
        envelope
    }

    fn record_envelope(&self, envelope: &Envelope) {
        let paused = matches!(
            envelope.status,
            EnvelopeStatus::AwaitingApproval | EnvelopeStatus::AwaitingConnection
        );
        if !paused
            && let Err(e) = self
                .store()
                .end_connection_inputs_of_run(&envelope.run_id, now_ms())
        {
            tracing::warn!(error = %e, run = %envelope.run_id, "could not end the connection inputs of an ended run");
        }
        match serde_json::to_string(envelope) {
            Ok(json) => {
                if let Err(e) = self.store().finish_run(
                    &envelope.run_id,
                    settle::ended_state(self.store(), envelope),
                    &json,
                    now_ms(),
                ) {
                    tracing::error!(error = %e, run = %envelope.run_id, "could not record a run's end");
                }
            }
            Err(e) => tracing::error!(error = %e, "could not serialise an envelope"),
        }
    }

    /// Goes on with a run: an ended run answers with its envelope again; a paused one answers
    /// with the same pending envelope until a person decided, then replays and goes on; an
    /// interrupted one (its hub stopped mid-attempt) replays at once.
    async fn resume(
        &self,
        run_id: &str,
        options: ExecuteOptions,
    ) -> Result<Envelope, ExecuteError> {
        // Wait for an attempt of the same run in progress (a parallel resume, or the first
        // attempt still letting its calls finish), then look at where the run is.
        let lock = self.slots().lock_of(run_id);
        let _held = lock.lock().await;
        let run = self
            .store()
            .run(run_id)
            .map_err(|e| ExecuteError::Store(e.to_string()))?
            .ok_or_else(|| {
                ExecuteError::InvalidArguments(format!(
                    "no run `{run_id}`: resume takes a runId from an earlier execute"
                ))
            })?;
        let stored = run
            .envelope
            .as_deref()
            .and_then(|json| serde_json::from_str::<Envelope>(json).ok());
        match run.status {
            RunState::AwaitingApproval | RunState::AwaitingConnection | RunState::Interrupted => {}
            RunState::Running => {
                match progress(run.owner, run.lease, self.slots().holder(), now_ms()) {
                    Progress::Here | Progress::Orphaned => {}
                    Progress::Elsewhere(owner) => {
                        return Err(ExecuteError::InvalidArguments(format!(
                            "run `{run_id}` is running in another Capabilities hub (process {}); resume it from the client that started it once that attempt ends",
                            owner.pid
                        )));
                    }
                }
            }
            _ => {
                return stored.ok_or_else(|| {
                    ExecuteError::Store(format!("run `{run_id}` has no stored envelope"))
                });
            }
        }
        let undecided = self
            .gateway
            .pending_of_run(run_id)
            .map_err(ExecuteError::Store)?
            .iter()
            .any(|p| p.kind == InputKind::Approval);
        if undecided && let Some(envelope) = stored.clone() {
            return Ok(envelope);
        }
        if !run.resumable {
            return Err(ExecuteError::InvalidArguments(format!(
                "run `{run_id}` cannot be resumed: its code held a secret value, which the hub does not keep; start it again with code (and keep secrets out of code)"
            )));
        }
        // A hub that just started (a client's own `capa mcp`, a restart) is still connecting
        // its sources: a replay before they are ready would find their globals missing.
        self.gateway.startup_done().await;
        let unready = self
            .gateway
            .wait_for_sources(journal::sources_of_run(self.store(), run_id))
            .await;
        if !unready.is_empty() {
            // Still waiting for a person to connect its sources: the same paused envelope, with
            // what the model is to ask of them, as for an approval nobody decided yet.
            if unready.iter().all(|u| u.needs_connection)
                && let Some(envelope) =
                    stored.filter(|e| e.status == EnvelopeStatus::AwaitingConnection)
            {
                return Ok(envelope);
            }
            // Not recorded: the run stays where it was, and the same resume may go on later.
            return Ok(Envelope::waiting_for_sources(run_id, &unready));
        }
        // A source the code reaches only after the call that paused it may still wait for its
        // first sign-in: its global is there all the same, and a call of it pauses the run again.
        // Waited for (a bounded time, for one still starting) before the attempt takes a slot.
        let unready = self.unready_named_in(&run.code).await;
        // Not recorded either: a busy hub refuses the attempt, not the run.
        let _slot = match self.slots().slot(&options.cancel).await {
            Ok(slot) => slot,
            Err(refusal) => return Ok(Envelope::refused(run_id, refused(&refusal), Vec::new())),
        };
        let now = now_ms();
        let holder = self.slots().holder();
        let started = self
            .store()
            .start_attempt(run_id, now, holder.owner, holder.lease(now), run.attempts)
            .map_err(|e| ExecuteError::Store(e.to_string()))?;
        if !started {
            return Err(ExecuteError::InvalidArguments(format!(
                "run `{run_id}` is being resumed by another Capabilities hub right now; resume it again in a moment to get its outcome"
            )));
        }
        tracing::info!(run = %run_id, attempt = run.attempts + 1, was = %run.status, "resuming a run by replay");
        Ok(self
            .attempt(
                Attempt {
                    run_id: run.id,
                    code: run.code,
                    seed: run.seed,
                    clock_start_ms: run.clock_start_ms,
                    client: run.client,
                    unready,
                },
                options,
            )
            .await)
    }

    /// Nothing secret leaves in an envelope (results were redacted per call; logs and errors
    /// are the guest's own text and may quote them).
    fn redact_envelope(&self, envelope: Envelope) -> Envelope {
        if self.context.redactor.is_empty() {
            return envelope;
        }
        let Ok(mut value) = serde_json::to_value(&envelope) else {
            return envelope;
        };
        self.context.redactor.redact_json(&mut value);
        let mut redacted: Envelope = serde_json::from_value(value).unwrap_or(envelope);
        // `[redacted]` can be longer than the secret it replaced: the inline bound holds after.
        redacted.fit_inline(envelope_budget(&self.context.limits));
        redacted
    }
}
