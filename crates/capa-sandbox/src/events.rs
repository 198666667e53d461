//! What finishes an operation of a run, as the sandbox thread receives it, and the failure
//! records handed to the guest. Shared by the run's state and the hub lookups it starts.

use serde_json::json;

use crate::ToolFailure;

/// What the sandbox thread waits for between guest turns.
#[derive(Debug)]
pub(crate) enum Event {
    /// An operation (tool call or hub lookup) finished; `payload` is JSON (the value, or the
    /// failure record when `!ok`).
    Done {
        seq: usize,
        ok: bool,
        payload: String,
        ms: u64,
    },
    /// A tool call asked the run to stop ([`crate::CallStop::Suspend`] or `Abort`).
    Stop { seq: usize, stop: Stop, ms: u64 },
    /// The caller of `run` went away or the outer wall timer fired.
    Cancel,
}

/// Why a host call stopped the run.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Stop {
    Suspend,
    Abort(crate::RunError),
}

pub(crate) fn failure_json(f: &ToolFailure, address: &str) -> String {
    json!({
        "code": f.code,
        "message": f.message,
        "hint": f.hint,
        "status": f.status,
        "retryable": f.retryable,
        "address": address,
    })
    .to_string()
}

pub(crate) fn refusal(code: &str, message: String, hint: Option<&str>, address: &str) -> String {
    let mut f = ToolFailure::new(code, message);
    f.hint = hint.map(str::to_string);
    failure_json(&f, address)
}
