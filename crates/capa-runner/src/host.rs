//! The sandbox's host: guest tool calls go through the hub (catalog, connections, policy,
//! redaction, history) and are journaled in call order; `hub.search` / `hub.describe` answer
//! from the same lookups as the MCP tools, and `hub.read` from the results earlier runs of the
//! same client kept ([`crate::handles`]).
//!
//! Replay: a call the journal already holds is answered from it (after checking the replay asks
//! the same thing at the same place); a call a person must approve first stops the run
//! ([`CallStop::Suspend`]) with a pending input recorded; an approved one is performed for real.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::time::Instant;

use capa_sandbox::{CallStop, Host, HostCall, RunError, ToolFailure};
use capa_store::{ApprovalRecord, ApprovalStatus, InputKind, JournalEntry};
use futures::future::BoxFuture;
use serde_json::Value;

use crate::context::RunnerContext;
use crate::gateway::{CallFailure, Gate, Gateway};
use crate::journal::{self, Durability, Entry};
use capa_domain::{AskingChannel, preview};

/// `hub.read`s answered at once across every run of this process. Each run reads one at a time
/// (capa-sandbox), but runs are many, and a `path` read loads and parses a whole kept result.
static HANDLE_READS: tokio::sync::Semaphore = tokio::sync::Semaphore::const_new(2);

/// One attempt's view of the hub.
pub(crate) struct RunHost<G: Gateway> {
    pub gateway: Arc<G>,
    pub context: Arc<RunnerContext>,
    pub run_id: String,
    pub client: Option<String>,
    /// The run's journal by call index, as it stood when the attempt began.
    pub journal: HashMap<u32, JournalEntry>,
    /// The call indexes with an input (approval or connection) recorded when the attempt
    /// began; `None` when they could not be read. Only a call itself records its input, so a
    /// call at another index has none to look up.
    pub inputs: Option<HashSet<u32>>,
    /// The client shows its own approval forms: approvals are claimed for it when recorded.
    pub asked_in: Option<AskingChannel>,
    /// The sources that listed no tools when the attempt began (their globals take any member).
    pub unlisted: Vec<String>,
}

impl<G: Gateway> Host for RunHost<G> {
    fn call(&self, call: HostCall) -> BoxFuture<'static, Result<Value, CallStop>> {
        let gateway = self.gateway.clone();
        let context = self.context.clone();
        let run_id = self.run_id.clone();
        let client = self.client.clone();
        let journaled = self.journal.get(&call.index).cloned();
        let may_have_input = self
            .inputs
            .as_ref()
            .is_none_or(|inputs| inputs.contains(&call.index));
        let asked_in = self.asked_in.clone();
        let call = if self.unlisted.is_empty() {
            call
        } else {
            crate::unlisted::under_its_own_name(&*self.gateway, &self.unlisted, call)
        };
        Box::pin(async move {
            let digest =
                journal::call_digest(&call.address, call.connection.as_deref(), &call.arguments);
            let step = Step {
                gateway: &*gateway,
                context: &context,
                run_id: &run_id,
                call: &call,
                digest: &digest,
                asked_in: asked_in.as_ref(),
                client: client.as_deref(),
                may_have_input,
                shown: std::sync::OnceLock::new(),
            };
            if let Some(entry) = journaled {
                if !entry.in_flight {
                    return journal::replayed(&entry, &call, &digest);
                }
                step.after_interruption(&entry).await?;
            }
            let cleared = step.gate().await?;
            // A call a replay would make again anyway (it only reads, and no person allowed
            // it) need not be durable before it goes out, nor its answer before the guest
            // sees it: its entries wait for the next group commit. Any other call's entries
            // are durable first, as the journal promises.
            let durable = if cleared.by_policy && step.reads_only() {
                Durability::Grouped
            } else {
                Durability::Now
            };
            let started = Instant::now();
            // Written before the call goes out: if this process ends before the answer, the
            // replay knows the call may have taken effect.
            step.entry().in_flight(durable);
            let outcome = step.perform(cleared.permit, client.clone()).await;
            if let Err(CallStop::Suspend) = &outcome {
                step.entry().forget();
                return outcome;
            }
            if let Some(id) = cleared.waited_for_connection {
                step.connection_arrived(&id);
            }
            step.entry().answered(
                &context.redactor,
                &outcome,
                i64::try_from(started.elapsed().as_millis()).unwrap_or(i64::MAX),
                durable,
            );
            outcome
        })
    }

    fn search(&self, query: String) -> BoxFuture<'static, Result<String, ToolFailure>> {
        let gateway = self.gateway.clone();
        Box::pin(async move { gateway.search(query).await })
    }

    fn describe(&self, targets: Vec<String>) -> BoxFuture<'static, Result<String, ToolFailure>> {
        let gateway = self.gateway.clone();
        Box::pin(async move { gateway.describe(targets).await })
    }

    fn resource(&self, uri: String) -> BoxFuture<'static, Result<Value, ToolFailure>> {
        let gateway = self.gateway.clone();
        Box::pin(async move { gateway.resource(uri).await })
    }

    fn read(
        &self,
        handle: String,
        options: String,
    ) -> BoxFuture<'static, Result<Value, ToolFailure>> {
        let context = self.context.clone();
        let client = self.client.clone();
        // A kept result is up to hundreds of MB of SQLite and JSON: off the runtime's threads.
        Box::pin(async move {
            // Half the inline budget: a piece returned as it is still fits, with room to spare.
            let default_length = context.limits.inline_result_bytes / 2;
            // The permit goes with the blocking work and is released when that ends, not when
            // a timed-out or cancelled run stops waiting for it.
            let permit = HANDLE_READS
                .acquire()
                .await
                .map_err(|_| ToolFailure::new("internal", "hub.read failed"))?;
            tokio::task::spawn_blocking(move || {
                let _permit = permit;
                crate::handles::read(
                    &context.store,
                    crate::handles::Reader::Client(client.as_deref()),
                    &handle,
                    &options,
                    default_length,
                )
            })
            .await
            .unwrap_or_else(|_| Err(ToolFailure::new("internal", "hub.read failed")))
        })
    }
}

/// One call that is not in the journal.
struct Step<'a, G: Gateway> {
    gateway: &'a G,
    context: &'a RunnerContext,
    run_id: &'a str,
    call: &'a HostCall,
    digest: &'a str,
    asked_in: Option<&'a AskingChannel>,
    /// The client of the attempt ("name version"), recorded with an input it waits for.
    client: Option<&'a str>,
    /// Whether an input may be recorded for this call's index (see [`RunHost::inputs`]).
    may_have_input: bool,
    /// The call's arguments as a person may see them, made once per call: the pending input,
    /// the in-flight entry and the answer's entry all show it.
    shown: std::sync::OnceLock<Shown>,
}

/// A call's arguments as a person may see them, and as JSON text (what the journal stores).
struct Shown {
    value: Value,
    text: String,
}

/// What the authorizer let through.
struct Cleared<P> {
    permit: P,
    /// The policy allowed the call (no person did).
    by_policy: bool,
    /// The input recorded when this call last lacked its connection.
    waited_for_connection: Option<String>,
}

impl<G: Gateway> Step<'_, G> {
    /// Whether the call may go ahead now, decided by the hub's authorizer: a call the policy
    /// allows goes; one it denies is refused; one that needs a person goes once a person
    /// approved it (this call, or the tool for the rest of the run), else the run stops with a
    /// pending input.
    async fn gate(&self) -> Result<Cleared<G::Permit>, CallStop> {
        let store = &self.context.store;
        let recorded = if self.may_have_input {
            store
                .approval_for_call(self.run_id, self.call.index)
                .map_err(|e| store_failure(&e))?
        } else {
            None
        };
        if let Some(record) = &recorded
            && record.args_digest != self.digest
            && !crate::unlisted::asked_before_tools_were_known(record, self.call)
        {
            return Err(journal::diverged(self.call, &record.address));
        }
        // A value the hub hid from the guest (a stored secret in an earlier result) would be
        // written as the literal `[redacted]`: refused, never passed on (docs/security.md,
        // "Secrets inside data").
        if carries_redaction(&self.call.arguments) {
            return Err(self.refused(ToolFailure {
                hint: Some("Do not copy values that read [redacted]: the hub hid a stored secret there and does not pass secrets between tools. Tell the user what you wanted to write.".into()),
                ..ToolFailure::new(
                    "secret_in_arguments",
                    format!(
                        "the arguments of {} hold {}, where the hub hid a stored secret; the call was not made, so nothing was written with it",
                        self.call.address,
                        capa_domain::redact::REDACTED
                    ),
                )
            }));
        }
        let (question, reason, connection) = match self
            .gateway
            .authorize(&self.call.address, self.call.connection.as_deref())
            .await
        {
            Gate::Allowed(permit) => {
                let waited = recorded
                    .filter(|r| r.kind == InputKind::Connection)
                    .map(|r| r.id);
                return Ok(Cleared {
                    permit,
                    by_policy: true,
                    waited_for_connection: waited,
                });
            }
            Gate::Refused(failure) => return Err(self.refused(failure)),
            Gate::NeedsConnection { message } => {
                // Its source waits for a person (a first sign-in) and lists no tools yet: the
                // run waits for the connection, asked once; the replay after it meets the tool.
                if recorded.is_none() {
                    self.record_pending(
                        InputKind::Connection,
                        &message,
                        self.call.connection.clone(),
                    )?;
                }
                return Err(CallStop::Suspend);
            }
            Gate::NeedsPerson {
                question,
                reason,
                connection,
            } => (question, reason, connection),
        };
        if let Some(record) = recorded {
            if record.kind == InputKind::Connection {
                // The call waited for its source's connection, and now that the connection is
                // there the policy asks: a source signed in for the first time had no tools, so
                // no policy, when the call first came. One call has one input: the spent
                // connection input gives its place to the approval asked below.
                store
                    .forget_connection_input(&record.id)
                    .map_err(|e| store_failure(&e))?;
            } else {
                return match record.status {
                    ApprovalStatus::Approved => Ok(self.approved(question)),
                    ApprovalStatus::Denied => Err(self.refused(ToolFailure {
                        hint: Some("Do not retry it; tell the user what you wanted to do.".into()),
                        ..ToolFailure::new(
                            "denied",
                            format!("the user denied the call to {}", self.call.address),
                        )
                    })),
                    ApprovalStatus::Expired => Err(self.refused(ToolFailure::new(
                        "approval_expired",
                        format!("nobody approved the call to {} in time", self.call.address),
                    ))),
                    _ => Err(CallStop::Suspend),
                };
            }
        }
        let granted = store
            .is_granted_for_run(self.run_id, &self.call.address)
            .map_err(|e| store_failure(&e))?;
        if granted {
            return Ok(self.approved(question));
        }
        if self.gateway.approvals_paused() {
            return Err(self.refused(ToolFailure {
                hint: Some("Tell the user; they can resume approvals in Capabilities.".into()),
                ..ToolFailure::new("denied", "approvals are paused in Capabilities")
            }));
        }
        self.record_pending(InputKind::Approval, &reason, connection)?;
        Err(CallStop::Suspend)
    }

    fn approved(&self, question: G::Question) -> Cleared<G::Permit> {
        Cleared {
            permit: self.gateway.approved(question),
            by_policy: false,
            waited_for_connection: None,
        }
    }

    /// Whether the call's tool says it only reads (an upstream's hint).
    fn reads_only(&self) -> bool {
        self.gateway
            .catalog()
            .get(&self.call.address)
            .and_then(|t| t.definition.read_only_hint())
            .unwrap_or(false)
    }

    /// A call whose journal entry is still in flight: it went out and its answer never came
    /// back before the attempt ended (the hub stopped, or the call was cancelled with its
    /// attempt), so nobody knows whether it took effect. It is made again only when its tool
    /// says it only reads and the policy allows it without a person: an upstream's annotation
    /// is a hint, so it never repeats a call a person approved. Any other call fails in the
    /// guest with `outcome_unknown` (journaled), so a replay never repeats a write.
    async fn after_interruption(&self, entry: &JournalEntry) -> Result<(), CallStop> {
        journal::same_call(entry, self.call, self.digest)?;
        let read_only = self.reads_only();
        let allowed = matches!(
            self.gateway
                .authorize(&self.call.address, self.call.connection.as_deref())
                .await,
            Gate::Allowed(_)
        );
        if read_only && allowed {
            tracing::info!(run = %self.run_id, call = self.call.index, address = %self.call.address, "calling a read-only tool again: its earlier call got no answer");
            return Ok(());
        }
        Err(self.refused(ToolFailure {
            hint: Some(
                "Check whether it took effect (look it up with a read-only tool) before doing it again.".into(),
            ),
            ..ToolFailure::new(
                "outcome_unknown",
                format!(
                    "the call to {} got no answer before its run stopped (the hub stopped, or the call was cancelled), so whether it took effect is unknown",
                    self.call.address
                ),
            )
        }))
    }

    /// The connection this call waited for is there now: its input is settled.
    fn connection_arrived(&self, id: &str) {
        let settled = self.context.store.decide_approval(
            id,
            ApprovalStatus::Resolved,
            None,
            "connection",
            capa_domain::clock::now_ms(),
        );
        if let Err(e) = settled {
            tracing::warn!(error = %e, input = id, "could not mark a connection input settled");
        }
    }

    /// A refusal is journaled like any answer, so a later replay sees the same.
    fn refused(&self, failure: ToolFailure) -> CallStop {
        let stop = CallStop::Failed(failure);
        self.entry().answered(
            &self.context.redactor,
            &Err(stop.clone()),
            0,
            Durability::Now,
        );
        stop
    }

    /// The call's arguments as a person may see them.
    fn preview(&self) -> &Shown {
        self.shown.get_or_init(|| {
            let catalog = self.gateway.catalog();
            let no_schema = serde_json::Map::new();
            let schema = catalog
                .get(&self.call.address)
                .map_or(&no_schema, |t| t.definition.input_schema.as_ref());
            let value = preview(&self.call.arguments, schema, &self.context.redactor);
            let text = value.to_string();
            Shown { value, text }
        })
    }

    /// This call's place in the journal.
    fn entry(&self) -> Entry<'_> {
        Entry {
            store: &self.context.store,
            run_id: self.run_id,
            call: self.call,
            digest: self.digest,
            shown: &self.preview().text,
        }
    }

    /// Records the input this call waits for; `connection` is the one the call uses (the
    /// requested one, else the source's default), as a person is shown it.
    fn record_pending(
        &self,
        kind: InputKind,
        reason: &str,
        connection: Option<String>,
    ) -> Result<ApprovalRecord, CallStop> {
        let redactor = &self.context.redactor;
        let shown = self.preview();
        let now = capa_domain::clock::now_ms();
        let source = self
            .call
            .address
            .split_once('.')
            .map_or(self.call.address.as_str(), |(ns, _)| ns)
            .to_owned();
        let record = ApprovalRecord {
            id: crate::ids::new_approval_id(),
            run_id: self.run_id.to_owned(),
            call_index: self.call.index,
            kind,
            address: self.call.address.clone(),
            source,
            connection,
            preview: redactor.redact(&shown.text),
            reason: redactor.redact(&reason_with_secret_note(reason, &shown.value)),
            args_digest: self.digest.to_owned(),
            status: ApprovalStatus::Pending,
            scope: None,
            decided_via: None,
            created_at_ms: now,
            expires_at_ms: now + self.context.approval_ttl_ms,
            decided_at_ms: None,
            client: self.client.map(|c| redactor.redact(c)),
        };
        let stored = self
            .context
            .store
            .insert_approval(&record)
            .map_err(|e| store_failure(&e));
        // The client's own form asks first: claimed before anyone can see the input, so the
        // popup does not open beside the form (the delivery renews or ends the claim). The
        // people who decide hear of it even when reading it back failed: it may be stored.
        self.gateway.input_recorded(
            stored.as_ref().ok(),
            self.asked_in,
            self.context.limits.wall_ms,
        );
        stored
    }

    /// Performs the call; a source without its connection stops the run with a pending input.
    async fn perform(&self, permit: G::Permit, client: Option<String>) -> Result<Value, CallStop> {
        let arguments = match &self.call.arguments {
            Value::Object(map) => Some(map.clone()),
            Value::Null => None,
            _ => {
                return Err(CallStop::Failed(ToolFailure::new(
                    "invalid_arguments",
                    format!("{} takes an object of arguments", self.call.address),
                )));
            }
        };
        match self.gateway.call(permit, arguments, client).await {
            Ok(value) => Ok(value),
            Err(CallFailure::NeedsConnection { message }) => {
                self.record_pending(
                    InputKind::Connection,
                    &message,
                    self.call.connection.clone(),
                )?;
                Err(CallStop::Suspend)
            }
            Err(CallFailure::Failed(failure)) => Err(CallStop::Failed(failure)),
        }
    }
}

fn store_failure(error: &capa_store::StoreError) -> CallStop {
    CallStop::Abort(RunError {
        code: "store_unavailable".to_owned(),
        message: format!("the hub could not read or write the run's state: {error}"),
        hint: Some("Try again with execute({ resume }) once the hub's database is back.".into()),
    })
}

/// Whether a string anywhere in `arguments` holds the redaction marker.
fn carries_redaction(arguments: &Value) -> bool {
    match arguments {
        Value::String(text) => text.contains(capa_domain::redact::REDACTED),
        Value::Array(items) => items.iter().any(carries_redaction),
        Value::Object(map) => map.iter().any(|(key, value)| {
            key.contains(capa_domain::redact::REDACTED) || carries_redaction(value)
        }),
        _ => false,
    }
}

/// The reason a person is asked, saying so when the arguments hold a stored secret: the preview
/// shows `[redacted]` there, and the person should know what they cannot see.
fn reason_with_secret_note(reason: &str, preview: &Value) -> String {
    if carries_redaction(preview) {
        format!(
            "{reason}. The arguments hold a stored secret, shown as {}; it goes to the tool as is",
            capa_domain::redact::REDACTED
        )
    } else {
        reason.to_owned()
    }
}
