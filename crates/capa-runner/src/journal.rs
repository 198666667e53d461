//! The journal: what is written of every guest call, and how a replay answers from it.
//!
//! - **What is journaled.** Each call, by its position in the run's issue order: address,
//!   connection, the arguments as a person would be shown them (the redacted preview; never the
//!   raw arguments), a digest of what it asks, and its outcome (the result, or the failure the
//!   guest saw, redacted). A call is written *in flight* before it goes out, and rewritten with
//!   its outcome when the answer comes, so a hub that stops mid-call leaves a trace.
//! - **Refusals are journaled** like answers (denied, expired, a policy that changed), so a
//!   replay sees the same refusal at the same place.
//! - **A call that waits** for a person or a connection is not journaled: the replay makes it
//!   afresh once the input is settled.
//! - **Replay.** A call the journal holds is answered from it when the replay asks the same
//!   thing (address and argument digest) at the same position; anything else is
//!   `replay_diverged`. A call still in flight is repeated only when its tool says it only
//!   reads and the policy allows it without a person; any other gets `outcome_unknown`
//!   (see `host.rs`), so a replay never repeats a write.

use std::collections::{BTreeSet, HashMap, HashSet};

use capa_domain::Redactor;
use capa_sandbox::{CallStop, HostCall, RunError, ToolFailure};
use capa_store::{JournalEntry, Store};
use serde_json::Value;

/// The run's journal by call index, as it stands when an attempt begins.
pub(crate) fn load(store: &Store, run_id: &str) -> HashMap<u32, JournalEntry> {
    match store.journal(run_id) {
        Ok(entries) => entries.into_iter().map(|e| (e.index, e)).collect(),
        Err(e) => {
            tracing::error!(error = %e, run = %run_id, "could not read a run's journal");
            HashMap::new()
        }
    }
}

/// The call indexes of the run with an input recorded, as they stand when an attempt begins;
/// `None` when they could not be read (every call then looks its input up).
pub(crate) fn inputs(store: &Store, run_id: &str) -> Option<HashSet<u32>> {
    match store.approvals_of_run(run_id) {
        Ok(inputs) => Some(inputs.into_iter().map(|a| a.call_index).collect()),
        Err(e) => {
            tracing::warn!(error = %e, run = %run_id, "could not read a run's inputs");
            None
        }
    }
}

/// The answer the journal holds, when the replay asks the same thing at the same place.
pub(crate) fn replayed(
    entry: &JournalEntry,
    call: &HostCall,
    digest: &str,
) -> Result<Value, CallStop> {
    same_call(entry, call, digest)?;
    if entry.ok {
        return Ok(serde_json::from_str(&entry.outcome).unwrap_or(Value::Null));
    }
    let failure = serde_json::from_str::<ToolFailure>(&entry.outcome)
        .unwrap_or_else(|_| ToolFailure::new("tool_error", entry.outcome.clone()));
    Err(CallStop::Failed(failure))
}

/// `Ok` when `entry` is of the call the replay makes now.
pub(crate) fn same_call(
    entry: &JournalEntry,
    call: &HostCall,
    digest: &str,
) -> Result<(), CallStop> {
    if entry.address != call.address || entry.args_digest.as_deref().is_some_and(|d| d != digest) {
        return Err(diverged(call, &entry.address));
    }
    Ok(())
}

/// The replay made another call than the run did before at this position.
pub(crate) fn diverged(call: &HostCall, before: &str) -> CallStop {
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

/// When a journal entry must be durable.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Durability {
    /// Before the write returns (committed with whatever else waits: group commit).
    Now,
    /// With the next group commit, within milliseconds (see capa-store's `deferred.rs`):
    /// for a call a replay makes again anyway.
    Grouped,
}

/// One call's place in the journal.
pub(crate) struct Entry<'a> {
    pub store: &'a Store,
    pub run_id: &'a str,
    pub call: &'a HostCall,
    pub digest: &'a str,
    /// The arguments as a person may see them, as JSON text.
    pub shown: &'a str,
}

impl Entry<'_> {
    fn write(&self, entry: JournalEntry, durability: Durability, what: &str) {
        match durability {
            Durability::Grouped => self.store.defer_journal_call(self.run_id, entry),
            Durability::Now => {
                if let Err(e) = self.store.journal_call(self.run_id, &entry) {
                    tracing::error!(error = %e, run = %self.run_id, "could not journal {what}");
                }
            }
        }
    }

    fn entry(&self, ok: bool, outcome: String, ms: i64, in_flight: bool) -> JournalEntry {
        JournalEntry {
            index: self.call.index,
            address: self.call.address.clone(),
            connection: self.call.connection.clone(),
            arguments: self.shown.to_owned(),
            ok,
            outcome,
            ms,
            args_digest: Some(self.digest.to_owned()),
            in_flight,
        }
    }

    /// Written before the call goes out: if this process ends before the answer, the replay
    /// knows the call may have taken effect.
    pub(crate) fn in_flight(&self, durability: Durability) {
        let entry = self.entry(false, "null".to_owned(), 0, true);
        self.write(entry, durability, "a call before making it");
    }

    /// The call stopped the run before it went out (it waits for its connection): the replay
    /// makes it afresh.
    pub(crate) fn forget(&self) {
        if let Err(e) = self.store.unjournal_call(self.run_id, self.call.index) {
            tracing::error!(error = %e, run = %self.run_id, "could not drop a call's journal entry");
        }
    }

    /// The call's outcome (a result or the failure the guest saw), redacted. A stop that is not
    /// an outcome (the run waits, or aborts) writes nothing.
    pub(crate) fn answered(
        &self,
        redactor: &Redactor,
        outcome: &Result<Value, CallStop>,
        ms: i64,
        durability: Durability,
    ) {
        let (ok, text) = match outcome {
            Ok(value) => (true, value.to_string()),
            Err(CallStop::Failed(failure)) => (
                false,
                serde_json::to_string(failure).unwrap_or_else(|_| "{}".to_owned()),
            ),
            Err(_) => return,
        };
        let entry = self.entry(ok, redactor.redact(&text), ms, false);
        self.write(entry, durability, "a call");
    }
}

/// The sources a run used so far: those of its journaled calls and of its inputs. A resume
/// waits for them, since a replay before they are ready would find their globals missing.
pub fn sources_of_run(store: &Store, run_id: &str) -> BTreeSet<String> {
    let mut sources = BTreeSet::new();
    let namespace = |address: &str| address.split_once('.').map(|(ns, _)| ns.to_owned());
    match store.journal(run_id) {
        Ok(journal) => sources.extend(journal.iter().filter_map(|e| namespace(&e.address))),
        Err(e) => tracing::warn!(error = %e, run = %run_id, "could not read a run's journal"),
    }
    match store.approvals_of_run(run_id) {
        Ok(inputs) => sources.extend(inputs.into_iter().map(|a| a.source)),
        Err(e) => tracing::warn!(error = %e, run = %run_id, "could not read a run's inputs"),
    }
    sources
}

/// SHA-256 (hex) of what a call asks: address, connection and arguments. A journal entry and a
/// person's decision apply to exactly this.
pub fn call_digest(address: &str, connection: Option<&str>, arguments: &Value) -> String {
    use sha2::{Digest, Sha256};
    let text = format!("{address}\n{}\n{arguments}", connection.unwrap_or_default());
    capa_domain::hex::lower_hex(&Sha256::digest(text.as_bytes()))
}
