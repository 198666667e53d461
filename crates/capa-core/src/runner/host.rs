//! The sandbox's host: guest tool calls go through the hub (catalog, connections, policy,
//! redaction, history) and are journaled in call order; `hub.search` / `hub.describe` answer
//! from the same lookups as the MCP tools.
//!
//! Replay: a call the journal already holds is answered from it (after checking the replay asks
//! the same thing at the same place); a call a person must approve first stops the run
//! ([`CallStop::Suspend`]) with a pending input recorded; an approved one is performed for real.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Instant;

use capa_sandbox::{CallStop, Host, HostCall, RunError, ToolFailure};
use capa_store::{ApprovalRecord, ApprovalStatus, InputKind, JournalEntry};
use futures::future::BoxFuture;
use serde_json::Value;

use crate::approval::{AskingChannel, call_digest, new_approval_id};
use crate::authorize::{Authorization, Permit};
use crate::hub::{CallContext, Hub};
use crate::lookup::{LookupError, SearchRequest};
use crate::{CallError, CallToolResult};
use capa_domain::preview;

/// One attempt's view of the hub.
pub(super) struct HubHost {
    pub hub: Arc<Hub>,
    pub run_id: String,
    pub client: Option<String>,
    /// The run's journal by call index, as it stood when the attempt began.
    pub journal: HashMap<u32, JournalEntry>,
    /// The client shows its own approval forms: approvals are claimed for it when recorded.
    pub asked_in: Option<AskingChannel>,
}

impl Host for HubHost {
    fn call(&self, call: HostCall) -> BoxFuture<'static, Result<Value, CallStop>> {
        let hub = self.hub.clone();
        let run_id = self.run_id.clone();
        let client = self.client.clone();
        let journaled = self.journal.get(&call.index).cloned();
        let asked_in = self.asked_in.clone();
        Box::pin(async move {
            let digest = call_digest(&call.address, call.connection.as_deref(), &call.arguments);
            let step = Step {
                hub: &hub,
                run_id: &run_id,
                call: &call,
                digest: &digest,
                asked_in: asked_in.as_ref(),
                shown: std::sync::OnceLock::new(),
            };
            if let Some(entry) = journaled {
                if !entry.in_flight {
                    return from_journal(&entry, &call, &digest);
                }
                step.after_interruption(&entry).await?;
            }
            let (permit, waited_for_connection) = step.gate().await?;
            let started = Instant::now();
            // Written before the call goes out: if this process ends before the answer, the
            // replay knows the call may have taken effect.
            step.journal_in_flight();
            let outcome = step.perform(permit, client).await;
            if let Err(CallStop::Suspend) = &outcome {
                step.unjournal();
                return outcome;
            }
            if let Some(id) = waited_for_connection {
                step.connection_arrived(&id);
            }
            step.journal(&outcome, started.elapsed().as_millis() as i64);
            outcome
        })
    }

    fn search(&self, query: String) -> BoxFuture<'static, Result<String, ToolFailure>> {
        let hub = self.hub.clone();
        Box::pin(async move {
            let request = SearchRequest {
                query,
                ..SearchRequest::default()
            };
            hub.search(&request).await.map_err(|e| lookup_failure(&e))
        })
    }

    fn describe(&self, targets: Vec<String>) -> BoxFuture<'static, Result<String, ToolFailure>> {
        let hub = self.hub.clone();
        Box::pin(async move { hub.describe(&targets).await.map_err(|e| lookup_failure(&e)) })
    }
}

/// The answer the journal holds, when the replay asks the same thing at the same place.
fn from_journal(entry: &JournalEntry, call: &HostCall, digest: &str) -> Result<Value, CallStop> {
    if entry.address != call.address || entry.args_digest.as_deref().is_some_and(|d| d != digest) {
        return Err(diverged(call, &entry.address));
    }
    if entry.ok {
        return Ok(serde_json::from_str(&entry.outcome).unwrap_or(Value::Null));
    }
    let failure = serde_json::from_str::<ToolFailure>(&entry.outcome)
        .unwrap_or_else(|_| ToolFailure::new("tool_error", entry.outcome.clone()));
    Err(CallStop::Failed(failure))
}

fn diverged(call: &HostCall, before: &str) -> CallStop {
    CallStop::Abort(RunError {
        code: "replay_diverged".to_owned(),
        message: format!(
            "the resumed run made a different call at position {}: {} now, {before} with other arguments or another address before",
            call.index, call.address
        ),
        hint: Some(
            "A resumed run replays the same code; it must make the same calls in the same order. Start a new run with execute({ code }).".to_owned(),
        ),
    })
}

/// One call that is not in the journal.
struct Step<'a> {
    hub: &'a Arc<Hub>,
    run_id: &'a str,
    call: &'a HostCall,
    digest: &'a str,
    asked_in: Option<&'a AskingChannel>,
    /// The call's arguments as a person may see them, made once per call: the pending input,
    /// the in-flight entry and the answer's entry all show it.
    shown: std::sync::OnceLock<Value>,
}

impl Step<'_> {
    /// Whether the call may go ahead now, decided by the hub's authorizer: a call the policy
    /// allows goes; one it denies is refused; one that needs a person goes once a person
    /// approved it (this call, or the tool for the rest of the run), else the run stops with a
    /// pending input. Returns the permit and the id of the input recorded when this call last
    /// lacked its connection.
    async fn gate(&self) -> Result<(Permit, Option<String>), CallStop> {
        let store = self.hub.store();
        let recorded = store
            .approval_for_call(self.run_id, self.call.index)
            .map_err(|e| store_failure(&e))?;
        if let Some(record) = &recorded
            && record.args_digest != self.digest
        {
            return Err(diverged(self.call, &record.address));
        }
        let authorization = self
            .hub
            .authorize(&self.call.address, self.call.connection.as_deref())
            .await
            .map_err(|e| self.refused(call_failure(&e)))?;
        let question = match authorization {
            Authorization::Allowed(permit) => {
                let waited = recorded
                    .filter(|r| r.kind == InputKind::Connection)
                    .map(|r| r.id);
                return Ok((permit, waited));
            }
            Authorization::Denied { address, .. } => {
                return Err(self.refused(call_failure(&CallError::Denied { address })));
            }
            Authorization::NeedsPerson(question) => question,
        };
        if let Some(record) = recorded {
            return match (record.kind, record.status) {
                (InputKind::Approval, ApprovalStatus::Approved) => {
                    Ok((question.approved(), None))
                }
                (InputKind::Approval, ApprovalStatus::Denied) => Err(self.refused(ToolFailure {
                    hint: Some("Do not retry it; tell the user what you wanted to do.".into()),
                    ..ToolFailure::new(
                        "denied",
                        format!("the user denied the call to {}", self.call.address),
                    )
                })),
                (InputKind::Approval, ApprovalStatus::Expired) => Err(self.refused(ToolFailure::new(
                    "approval_expired",
                    format!("nobody approved the call to {} in time", self.call.address),
                ))),
                (InputKind::Approval, _) => Err(CallStop::Suspend),
                // The call waited for its connection when the policy did not ask; it asks now,
                // and one call has one input: the run cannot ask again at this place.
                (InputKind::Connection, _) => Err(self.refused(ToolFailure {
                    hint: Some("Start a new run with execute({ code }).".into()),
                    ..ToolFailure::new(
                        "approval_required",
                        format!(
                            "{} needs the user's approval since the policy changed while the run waited",
                            self.call.address
                        ),
                    )
                })),
            };
        }
        let granted = store
            .is_granted_for_run(self.run_id, &self.call.address)
            .map_err(|e| store_failure(&e))?;
        if granted {
            return Ok((question.approved(), None));
        }
        if self.hub.approvals_paused() {
            return Err(self.refused(ToolFailure {
                hint: Some("Tell the user; they can resume approvals in Capabilities.".into()),
                ..ToolFailure::new("denied", "approvals are paused in Capabilities")
            }));
        }
        self.record_pending(
            InputKind::Approval,
            &question.verdict.reason,
            question.connection,
        )?;
        Err(CallStop::Suspend)
    }

    /// A call whose journal entry is still in flight: it went out and its answer never came
    /// back before the attempt ended (the hub stopped, or the call was cancelled with its
    /// attempt), so nobody knows whether it took effect. It is made again only when its tool
    /// says it only reads and the policy allows it without a person: an upstream's annotation
    /// is a hint, so it never repeats a call a person approved. Any other call fails in the
    /// guest with `outcome_unknown` (journaled), so a replay never repeats a write.
    async fn after_interruption(&self, entry: &JournalEntry) -> Result<(), CallStop> {
        if entry.address != self.call.address
            || entry
                .args_digest
                .as_deref()
                .is_some_and(|d| d != self.digest)
        {
            return Err(diverged(self.call, &entry.address));
        }
        let read_only = self
            .hub
            .catalog()
            .get(&self.call.address)
            .and_then(|t| t.definition.annotations.as_ref()?.read_only_hint)
            .unwrap_or(false);
        let allowed = matches!(
            self.hub
                .authorize(&self.call.address, self.call.connection.as_deref())
                .await,
            Ok(Authorization::Allowed(_))
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
        let settled = self.hub.store().decide_approval(
            id,
            ApprovalStatus::Resolved,
            None,
            "connection",
            super::now_ms(),
        );
        if let Err(e) = settled {
            tracing::warn!(error = %e, input = id, "could not mark a connection input settled");
        }
    }

    /// A refusal is journaled like any answer, so a later replay sees the same.
    fn refused(&self, failure: ToolFailure) -> CallStop {
        let stop = CallStop::Failed(failure);
        let outcome = Err(stop.clone());
        self.journal(&outcome, 0);
        stop
    }

    /// The call's arguments as a person may see them.
    fn preview(&self) -> &Value {
        self.shown.get_or_init(|| {
            let catalog = self.hub.catalog();
            let no_schema = serde_json::Map::new();
            let schema = catalog
                .get(&self.call.address)
                .map_or(&no_schema, |t| t.definition.input_schema.as_ref());
            preview(&self.call.arguments, schema, self.hub.redactor())
        })
    }

    /// Records the input this call waits for; `connection` is the one the call uses (the
    /// requested one, else the source's default), as a person is shown it.
    fn record_pending(
        &self,
        kind: InputKind,
        reason: &str,
        connection: Option<String>,
    ) -> Result<ApprovalRecord, CallStop> {
        let hub = self.hub;
        let shown = self.preview();
        let now = super::now_ms();
        let ttl = hub.config().approval_ttl.as_millis() as i64;
        let source = self
            .call
            .address
            .split_once('.')
            .map_or(self.call.address.as_str(), |(ns, _)| ns)
            .to_owned();
        let record = ApprovalRecord {
            id: new_approval_id(),
            run_id: self.run_id.to_owned(),
            call_index: self.call.index,
            kind,
            address: self.call.address.clone(),
            source,
            connection,
            preview: hub.redactor().redact(&shown.to_string()),
            reason: hub.redactor().redact(reason),
            args_digest: self.digest.to_owned(),
            status: ApprovalStatus::Pending,
            scope: None,
            decided_via: None,
            created_at_ms: now,
            expires_at_ms: now + ttl,
            decided_at_ms: None,
        };
        let stored = hub
            .store()
            .insert_approval(&record)
            .map_err(|e| store_failure(&e));
        // The client's own form asks first: claimed before anyone can see the input, so the
        // popup does not open beside the form (the delivery renews or ends the claim).
        if let (Ok(stored), Some(channel)) = (&stored, self.asked_in)
            && stored.kind == InputKind::Approval
            && let Some(claim) = hub.claim_asking(
                &stored.id,
                channel.clone(),
                Some(std::time::Duration::from_millis(hub.run_limits().wall_ms)),
            )
        {
            claim.keep_until_deadline();
        }
        hub.refresh_pending();
        stored
    }

    /// Performs the call; a source without its connection stops the run with a pending input.
    async fn perform(&self, permit: Permit, client: Option<String>) -> Result<Value, CallStop> {
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
        let context = CallContext {
            client,
            progress: None,
        };
        match self.hub.call(permit, arguments, &context).await {
            Ok(result) => tool_value(&self.call.address, result).map_err(CallStop::Failed),
            Err(CallError::NeedsConnection { message, .. }) => {
                self.record_pending(
                    InputKind::Connection,
                    &message,
                    self.call.connection.clone(),
                )?;
                Err(CallStop::Suspend)
            }
            Err(error) => Err(CallStop::Failed(call_failure(&error))),
        }
    }

    /// The journal entry of a call that is about to go out.
    fn journal_in_flight(&self) {
        let entry = JournalEntry {
            index: self.call.index,
            address: self.call.address.clone(),
            connection: self.call.connection.clone(),
            arguments: self.preview().to_string(),
            ok: false,
            outcome: "null".to_owned(),
            ms: 0,
            args_digest: Some(self.digest.to_owned()),
            in_flight: true,
        };
        if let Err(e) = self.hub.store().journal_call(self.run_id, &entry) {
            tracing::error!(error = %e, run = %self.run_id, "could not journal a call before making it");
        }
    }

    /// The call stopped the run before it went out (it waits for its connection): the replay
    /// makes it afresh.
    fn unjournal(&self) {
        if let Err(e) = self
            .hub
            .store()
            .unjournal_call(self.run_id, self.call.index)
        {
            tracing::error!(error = %e, run = %self.run_id, "could not drop a call's journal entry");
        }
    }

    fn journal(&self, outcome: &Result<Value, CallStop>, ms: i64) {
        let hub = self.hub;
        // History keeps what a person would be shown: secret-named and schema-marked fields
        // removed, long values bounded. Replay compares digests, never these arguments.
        let arguments = self.preview();
        let (ok, text) = match outcome {
            Ok(value) => (true, value.to_string()),
            Err(CallStop::Failed(failure)) => (
                false,
                serde_json::to_string(failure).unwrap_or_else(|_| "{}".to_owned()),
            ),
            Err(_) => return,
        };
        let entry = JournalEntry {
            index: self.call.index,
            address: self.call.address.clone(),
            connection: self.call.connection.clone(),
            arguments: arguments.to_string(),
            ok,
            outcome: hub.redactor().redact(&text),
            ms,
            args_digest: Some(self.digest.to_owned()),
            in_flight: false,
        };
        if let Err(e) = hub.store().journal_call(self.run_id, &entry) {
            tracing::error!(error = %e, run = %self.run_id, "could not journal a call");
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

fn failure(code: &str, message: String, retryable: bool) -> ToolFailure {
    ToolFailure {
        retryable,
        ..ToolFailure::new(code, message)
    }
}

fn call_failure(error: &CallError) -> ToolFailure {
    let hint = match error {
        CallError::UnknownTool { .. } => Some("Use hub.search() to find tools.".to_owned()),
        CallError::Upstream(capa_upstream::UpstreamError::TooLarge { .. }) => Some(
            "Ask for less per call: filter, paginate or pick fields if the tool can.".to_owned(),
        ),
        _ => None,
    };
    ToolFailure {
        hint,
        ..failure(error.code(), error.to_string(), error.retryable())
    }
}

fn lookup_failure(error: &LookupError) -> ToolFailure {
    failure(error.code(), error.to_string(), error.retryable())
}

/// What a guest receives for a tool's result: its structured content when it has one, else its
/// single text block (parsed as JSON when it is JSON), else its content blocks. A result with
/// `isError` becomes a `ToolError` with the tool's own text as the message.
fn tool_value(address: &str, result: CallToolResult) -> Result<Value, ToolFailure> {
    let texts: Vec<&str> = result
        .content
        .iter()
        .filter_map(|block| block.as_text().map(|t| t.text.as_str()))
        .collect();
    if result.is_error == Some(true) {
        let message = if texts.is_empty() {
            format!("{address} reported an error")
        } else {
            texts.join("\n")
        };
        return Err(failure("tool_error", message, false));
    }
    if let Some(structured) = result.structured_content {
        return Ok(structured);
    }
    if let [text] = texts.as_slice()
        && result.content.len() == 1
    {
        return Ok(serde_json::from_str(text).unwrap_or_else(|_| Value::String((*text).to_owned())));
    }
    Ok(serde_json::to_value(&result.content).unwrap_or(Value::Null))
}
