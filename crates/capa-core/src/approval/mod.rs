//! The approval lifecycle: a pending input from creation to decision or expiry, and the one
//! place where people's decisions are taken.
//!
//! A call the authorizer says needs a person becomes a pending input: a run's (recorded by the
//! runner when the call stops the run) or a direct call's ([`direct`]). Every delivery channel —
//! the 2026-07-28 `input_required` form, the 2025 `elicitation/create` form, the desktop popup,
//! the approval page, the terminal — ends in [`decide_in_store`] (through [`Approvals::decide`] in the
//! hub, directly from an interactive terminal): a decision is stored once, for exactly the
//! pending call it names. [`asking`] says which channel asks for an input now, so that only one
//! does at a time.

pub(crate) mod asking;
mod direct;
pub(crate) mod signals;

use capa_store::{ApprovalRecord, ApprovalStatus, InputKind};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

pub use asking::{AskingChannel, AskingClaim};
pub use direct::DirectAnswer;
pub use signals::PageOpener;

use crate::clock::now_ms;
use crate::hub::Hub;
use crate::policy::Decision;

pub(crate) use capa_runner::{call_digest, new_approval_id};

/// The four answers a person can give to an approval.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Choice {
    /// This call only.
    Once,
    /// This call and every later call of the same tool in this run.
    Run,
    /// This call, and the tool is allowed from now on (a policy rule is written).
    Always,
    Deny,
}

impl Choice {
    /// The form's values, in the order they are offered.
    pub const ALL: [Choice; 4] = [Choice::Once, Choice::Run, Choice::Always, Choice::Deny];

    pub fn as_str(self) -> &'static str {
        match self {
            Choice::Once => "approve_once",
            Choice::Run => "approve_run",
            Choice::Always => "always_allow",
            Choice::Deny => "deny",
        }
    }

    pub fn parse(text: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|c| c.as_str() == text)
    }

    /// The label a person reads.
    pub fn title(self, address: &str) -> String {
        match self {
            Choice::Once => "Approve once".to_owned(),
            Choice::Run => "Approve for the rest of this run".to_owned(),
            Choice::Always => format!("Always allow {address}"),
            Choice::Deny => "Deny".to_owned(),
        }
    }
}

/// How the reason of a pending input that waits for an OAuth sign-in starts.
pub const SIGN_IN_PREFIX: &str = "Sign in to ";

/// A pending input as frontends show it. The preview is already redacted.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PendingInput {
    pub id: String,
    pub run_id: String,
    /// The call's position in the run's issue order.
    pub call_index: u32,
    /// SHA-256 of what the call asks; a decision applies to exactly this.
    #[serde(skip)]
    pub args_digest: String,
    pub kind: InputKind,
    pub address: String,
    pub source: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub connection: Option<String>,
    pub preview: Value,
    pub reason: String,
    pub created_at_ms: i64,
    pub expires_at_ms: i64,
    /// The client that asks, "name version" as it introduced itself (cleaned and bounded:
    /// `capa_domain::client`); none when it did not say (`capa call`, old records).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client: Option<String>,
}

impl PendingInput {
    pub fn from_record(record: &ApprovalRecord) -> Self {
        Self {
            id: record.id.clone(),
            run_id: record.run_id.clone(),
            call_index: record.call_index,
            args_digest: record.args_digest.clone(),
            kind: record.kind,
            address: record.address.clone(),
            source: record.source.clone(),
            connection: record.connection.clone(),
            preview: serde_json::from_str(&record.preview).unwrap_or(Value::Null),
            reason: record.reason.clone(),
            created_at_ms: record.created_at_ms,
            expires_at_ms: record.expires_at_ms,
            client: record
                .client
                .as_deref()
                .and_then(capa_domain::clean_client_label),
        }
    }

    /// What a person reads before deciding: the call, its connection, why, and the preview.
    pub fn message(&self) -> String {
        let connection = self
            .connection
            .as_deref()
            .map_or_else(String::new, |c| format!(" with connection \"{c}\""));
        let preview =
            serde_json::to_string_pretty(&self.preview).unwrap_or_else(|_| "{}".to_owned());
        format!(
            "Allow a call to {}{connection}?\nWhy you are asked: {}\nArguments:\n{preview}",
            self.address, self.reason
        )
    }

    /// Whether this input waits for an OAuth sign-in: the hub phrases those needs as
    /// [`SIGN_IN_PREFIX`]` <source> …` (`hub/oauth.rs`, `CallError::from`).
    pub fn is_sign_in(&self) -> bool {
        self.kind == InputKind::Connection && self.reason.starts_with(SIGN_IN_PREFIX)
    }

    /// The envelope's `pending` item: no preview (the model wrote the arguments) and no link.
    pub(crate) fn envelope_item(&self, run_id: &str) -> Value {
        let summary = match self.kind {
            InputKind::Connection if self.is_sign_in() => {
                format!("Sign in to {} to continue ({})", self.source, self.address)
            }
            InputKind::Connection => {
                format!("{} needs a connection for `{}`", self.address, self.source)
            }
            InputKind::Approval => format!(
                "{} needs the user's approval ({})",
                self.address, self.reason
            ),
        };
        let message = match self.kind {
            // The model gets neither the sign-in page's address nor anything of the sign-in.
            InputKind::Connection if self.is_sign_in() => {
                let name = self.connection.as_deref().unwrap_or("personal");
                format!(
                    "Ask the user to sign in to `{}` in Capabilities (Sources, Sign in) or with `capa connections login {} --connection {name}`; never ask for passwords, codes or links in chat. Then call execute with {{\"resume\": \"{run_id}\"}}.",
                    self.source, self.source
                )
            }
            InputKind::Connection => {
                let name = self.connection.as_deref().unwrap_or("<name>");
                format!(
                    "Ask the user to add the connection in Capabilities (or `capa connections set {} {name}`); never ask for secrets in chat. Then call execute with {{\"resume\": \"{run_id}\"}}.",
                    self.source
                )
            }
            InputKind::Approval => format!(
                "Tell the user; they can approve it in Capabilities or with `capabilities hub approve {run_id}` in a terminal. Then call execute with {{\"resume\": \"{run_id}\"}}."
            ),
        };
        json!({
            "id": self.id,
            "kind": self.kind,
            "address": self.address,
            "summary": summary,
            "message": message,
        })
    }
}

/// Why a decision was not taken.
#[derive(Debug, thiserror::Error)]
pub enum DecideError {
    #[error("no pending approval `{0}`")]
    NotFound(String),
    #[error("approval `{id}` is already {status}: a decision is taken once")]
    AlreadyDecided { id: String, status: &'static str },
    #[error("`{0}` waits for a connection, not an approval: add the connection, then resume")]
    NotAnApproval(String),
    #[error("approval `{0}` was given for another call (other arguments or connection)")]
    OtherCall(String),
    #[error("database error: {0}")]
    Store(String),
    #[error("could not write the policy: {0}")]
    Policy(String),
}

impl DecideError {
    pub fn code(&self) -> &'static str {
        match self {
            Self::NotFound(_) => "not_found",
            Self::AlreadyDecided { .. } => "already_decided",
            Self::NotAnApproval(_) => "not_an_approval",
            Self::OtherCall(_) => "approval_for_other_call",
            Self::Store(_) => "store_unavailable",
            Self::Policy(_) => "policy_unavailable",
        }
    }
}

#[expect(
    clippy::needless_pass_by_value,
    reason = "made for `map_err(store_error)`"
)]
pub(crate) fn store_error(e: capa_store::StoreError) -> DecideError {
    DecideError::Store(e.to_string())
}

/// The stored part of a decision: the approval (once), and a grant for `approve_run`. The
/// caller writes the allow rule for `always_allow` (the hub, or the CLI when no hub runs).
/// Returns the approval as it was.
pub fn decide_in_store(
    store: &capa_store::Store,
    approval_id: &str,
    choice: Choice,
    via: &str,
) -> Result<ApprovalRecord, DecideError> {
    let record = store
        .approval(approval_id)
        .map_err(store_error)?
        .ok_or_else(|| DecideError::NotFound(approval_id.to_owned()))?;
    if record.kind != InputKind::Approval {
        return Err(DecideError::NotAnApproval(approval_id.to_owned()));
    }
    let (status, scope) = match choice {
        Choice::Deny => (ApprovalStatus::Denied, None),
        Choice::Once => (ApprovalStatus::Approved, Some("once")),
        Choice::Run => (ApprovalStatus::Approved, Some("run")),
        Choice::Always => (ApprovalStatus::Approved, Some("always")),
    };
    let taken = store
        .decide_approval(approval_id, status, scope, via, now_ms())
        .map_err(store_error)?;
    if !taken {
        let status = store
            .approval(approval_id)
            .map_err(store_error)?
            .map_or("gone", |r| r.status.as_str());
        return Err(DecideError::AlreadyDecided {
            id: approval_id.to_owned(),
            status,
        });
    }
    if choice == Choice::Run {
        store
            .grant_for_run(&record.run_id, &record.address)
            .map_err(store_error)?;
    }
    tracing::info!(
        approval = %approval_id,
        run = %record.run_id,
        address = %record.address,
        decision = choice.as_str(),
        via,
        "approval decided"
    );
    Ok(record)
}

/// A person's say over what runs ask: the pending inputs, decisions from every channel, the
/// pause, which channel asks about an input now, and the approval page. Get it with
/// [`Hub::approvals`].
#[derive(Clone, Copy)]
pub struct Approvals<'a> {
    pub(crate) hub: &'a Hub,
}

impl Hub {
    /// Pending inputs and their decisions.
    pub fn approvals(&self) -> Approvals<'_> {
        Approvals { hub: self }
    }

    fn decide_as(
        &self,
        approval_id: &str,
        choice: Choice,
        via: &str,
        by: crate::hub::ChangedBy,
    ) -> Result<(), DecideError> {
        let record = decide_in_store(self.store(), approval_id, choice, via)?;
        self.approvals().release(approval_id);
        match choice {
            Choice::Always => self
                .set_policy_rule(&record.address, None, Decision::Allow, by)
                .map_err(|e| DecideError::Policy(e.to_string()))?,
            Choice::Once | Choice::Run | Choice::Deny => {}
        }
        self.approval_signals.notify_decision();
        self.approvals().refresh_pending();
        Ok(())
    }

    /// Replicas of a team hub on one database: another's decision wakes the calls waiting
    /// here at once, and inputs recorded there count here (where the store can tell).
    pub(crate) fn follow_decisions_elsewhere(self: &std::sync::Arc<Self>) {
        let hub = std::sync::Arc::downgrade(self);
        self.store().follow_changes(Box::new(move || {
            if let Some(hub) = hub.upgrade() {
                hub.approvals().changed_elsewhere();
            }
        }));
    }
}

impl Approvals<'_> {
    /// Every pending input of every run, oldest first.
    pub fn pending(&self) -> Result<Vec<PendingInput>, DecideError> {
        let records = self
            .hub
            .store()
            .pending_approvals(now_ms())
            .map_err(store_error)?;
        self.hub
            .approval_signals
            .set_pending_count(records.len() as u64);
        let mut inputs: Vec<PendingInput> = records.iter().map(PendingInput::from_record).collect();
        self.hub.mark_changed_definitions(&mut inputs);
        Ok(inputs)
    }

    /// The pending inputs of one run.
    pub fn pending_of(&self, run_id: &str) -> Result<Vec<PendingInput>, DecideError> {
        Ok(self
            .pending()?
            .into_iter()
            .filter(|p| p.run_id == run_id)
            .collect())
    }

    /// Takes a person's decision on one pending approval. `via` says where (`page`, `cli`,
    /// `app`) for the history.
    pub fn decide(&self, approval_id: &str, choice: Choice, via: &str) -> Result<(), DecideError> {
        self.hub
            .decide_as(approval_id, choice, via, crate::hub::ChangedBy::Person)
    }

    /// Takes the answer of a paired client's own form (`via`: `client`, `elicitation`). It
    /// decides the call, but never loosens the policy by itself: "Always allow" approves this
    /// call and writes the allow rule held, until a person confirms it (docs/policies.md).
    pub fn decide_in_form(
        &self,
        approval_id: &str,
        choice: Choice,
        via: &str,
    ) -> Result<(), DecideError> {
        self.hub
            .decide_as(approval_id, choice, via, crate::hub::ChangedBy::Unconfirmed)
    }

    /// Another process (an interactive terminal, another replica of a team hub) stored
    /// decisions or inputs in the database, and maybe an allow rule in the policy file:
    /// waiting calls and runs look again, the popup recounts.
    pub fn changed_elsewhere(&self) {
        if let Err(e) = self.hub.reload_policy() {
            tracing::warn!(error = %e, "the policy file does not read; the previous policy stays in force");
        }
        self.hub.approval_signals.notify_decision();
        self.refresh_pending();
    }

    /// Recounts pending inputs for [`Approvals::watch_pending`].
    pub(crate) fn refresh_pending(self) {
        match self.hub.store().pending_approvals(now_ms()) {
            Ok(pending) => self
                .hub
                .approval_signals
                .set_pending_count(pending.len() as u64),
            Err(e) => tracing::warn!(error = %e, "could not count pending inputs"),
        }
    }

    /// The number of pending inputs, updated when one is recorded or decided (for the tray
    /// and the UI's live view). Expiries are seen at the next change or [`Approvals::pending`].
    pub fn watch_pending(&self) -> tokio::sync::watch::Receiver<u64> {
        self.refresh_pending();
        self.hub.approval_signals.watch_pending()
    }

    /// "Pause approvals": while paused, a call that would ask a person is denied in the guest
    /// (`ToolError` `denied`, journaled like a denial) instead of waiting. Not kept across restarts.
    pub fn set_paused(&self, paused: bool) {
        tracing::info!(paused, "approvals paused changed");
        self.hub.approval_signals.set_paused(paused);
    }

    pub fn paused(&self) -> bool {
        self.hub.approval_signals.paused()
    }

    /// Decides every pending approval of a run the same way (the terminal's
    /// `capabilities hub approve <runId>`). Returns how many were decided.
    pub fn decide_run(
        &self,
        run_id: &str,
        choice: Choice,
        via: &str,
    ) -> Result<usize, DecideError> {
        let pending: Vec<PendingInput> = self
            .pending_of(run_id)?
            .into_iter()
            .filter(|p| p.kind == InputKind::Approval)
            .collect();
        if pending.is_empty() {
            return Err(DecideError::NotFound(format!(
                "{run_id} (no approval of this run is pending)"
            )));
        }
        for input in &pending {
            self.decide(&input.id, choice, via)?;
        }
        Ok(pending.len())
    }
}
