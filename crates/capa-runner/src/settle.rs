//! How a run ends in the history a person reads, and runs nobody came back for.
//!
//! The model's envelope keeps the spec's statuses (`failed` for a refusal); the stored run
//! says more: a run that failed on a call a person denied is `denied`, one that failed on an
//! approval nobody gave in time is `expired`.
//!
//! A client told `awaiting_approval` may never resume (the conversation ended, the model gave
//! up). Once every input of such a run is settled (decided, expired, or its connection added)
//! and the resume window has passed since the last one, the hub ends the run itself: `denied`
//! when a person denied one of its calls, `expired` otherwise. Its envelope then says why, and
//! a late resume gets that envelope, never a replay: an approval is not kept live for a run
//! its client left.

use capa_sandbox::{RunError, ToolFailure};
use capa_store::{ApprovalRecord, ApprovalStatus, RunRecord, RunState, Store};

use crate::envelope::{Envelope, EnvelopeStatus};

/// How long after its last input was settled a paused run waits for its client's resume.
pub const RESUME_WINDOW_MS: i64 = 3_600_000;

/// Where a run stands once an attempt ended with `envelope`.
pub(crate) fn ended_state(store: &Store, envelope: &Envelope) -> RunState {
    let refusal = match (&envelope.status, &envelope.error) {
        (EnvelopeStatus::Failed, Some(error)) => match error.code.as_str() {
            "denied" => RunState::Denied,
            "approval_expired" => RunState::Expired,
            _ => return RunState::Failed,
        },
        (status, _) => return status.run_state(),
    };
    // Guest code can throw a `ToolError` of any code; only a refusal the hub journaled for
    // one of the run's calls makes the run denied or expired.
    let code = envelope.error.as_ref().map(|e| e.code.as_str());
    let journaled = store.journal(&envelope.run_id).is_ok_and(|entries| {
        entries.iter().any(|entry| {
            !entry.ok
                && serde_json::from_str::<ToolFailure>(&entry.outcome)
                    .is_ok_and(|f| Some(f.code.as_str()) == code)
        })
    });
    if journaled { refusal } else { RunState::Failed }
}

/// Ends every paused run whose inputs were all settled at least `window_ms` before `now_ms`
/// and that nobody resumed; returns each with the state it ended in.
pub fn settle_abandoned(store: &Store, now_ms: i64, window_ms: i64) -> Vec<(String, RunState)> {
    if let Err(e) = store.expire_approvals(now_ms) {
        tracing::warn!(error = %e, "could not expire pending inputs");
    }
    let runs = match store.paused_runs() {
        Ok(runs) => runs,
        Err(e) => {
            tracing::error!(error = %e, "could not look for paused runs");
            return Vec::new();
        }
    };
    let mut settled = Vec::new();
    for run in runs {
        let inputs = match store.approvals_of_run(&run.id) {
            Ok(inputs) => inputs,
            Err(e) => {
                tracing::warn!(error = %e, run = %run.id, "could not read a run's inputs");
                continue;
            }
        };
        let Some((state, error)) = abandonment(&inputs, now_ms, window_ms) else {
            continue;
        };
        let envelope = settled_envelope(&run, error);
        let json = match serde_json::to_string(&envelope) {
            Ok(json) => json,
            Err(e) => {
                tracing::error!(error = %e, "could not serialise an envelope");
                continue;
            }
        };
        match store.settle_paused_run(&run.id, run.attempts, state, &json, now_ms) {
            Ok(true) => settled.push((run.id, state)),
            Ok(false) => {}
            Err(e) => tracing::error!(error = %e, run = %run.id, "could not end a paused run"),
        }
    }
    if !settled.is_empty() {
        tracing::info!(
            runs = settled.len(),
            "paused runs ended: their inputs were settled and no client resumed them in time"
        );
    }
    settled
}

/// Whether a run with these inputs was left by its client, and how it ends if so.
fn abandonment(
    inputs: &[ApprovalRecord],
    now_ms: i64,
    window_ms: i64,
) -> Option<(RunState, RunError)> {
    if inputs.is_empty() || inputs.iter().any(|i| i.status == ApprovalStatus::Pending) {
        return None;
    }
    let last = inputs
        .iter()
        .map(|i| i.decided_at_ms.unwrap_or(i.created_at_ms))
        .max()?;
    if now_ms < last.saturating_add(window_ms) {
        return None;
    }
    let minutes = window_ms / 60_000;
    if let Some(denied) = inputs.iter().find(|i| i.status == ApprovalStatus::Denied) {
        return Some((
            RunState::Denied,
            RunError {
                code: "denied".into(),
                message: format!(
                    "the user denied the call to {}, and the run was not resumed within {minutes} minutes; it ended there",
                    denied.address
                ),
                hint: Some("Do not retry it; tell the user what you wanted to do.".into()),
            },
        ));
    }
    let message = match inputs.iter().find(|i| i.status == ApprovalStatus::Expired) {
        Some(expired) => format!("nobody approved the call to {} in time", expired.address),
        None => format!(
            "the run was not resumed within {minutes} minutes after the user's decision; it ended"
        ),
    };
    Some((
        RunState::Expired,
        RunError {
            code: "run_expired".into(),
            message,
            hint: Some("Start a new run with execute({ code }) if it is still needed.".into()),
        },
    ))
}

/// The paused envelope of `run`, ended with `error` and nothing pending.
fn settled_envelope(run: &RunRecord, error: RunError) -> Envelope {
    let mut envelope = run
        .envelope
        .as_deref()
        .and_then(|json| serde_json::from_str::<Envelope>(json).ok())
        .unwrap_or_else(|| Envelope::refused(&run.id, error.clone(), Vec::new()));
    envelope.status = EnvelopeStatus::Failed;
    envelope.error = Some(error);
    envelope.pending.clear();
    envelope
}

#[cfg(test)]
mod tests {
    use capa_store::InputKind;

    use super::*;

    fn input(status: ApprovalStatus, decided_at_ms: Option<i64>) -> ApprovalRecord {
        ApprovalRecord {
            id: "apr_0".into(),
            run_id: "run_0".into(),
            call_index: 0,
            kind: InputKind::Approval,
            address: "demo.delete_note".into(),
            source: "demo".into(),
            connection: None,
            preview: "{}".into(),
            reason: "asks".into(),
            args_digest: "d".into(),
            status,
            scope: None,
            decided_via: None,
            created_at_ms: 0,
            expires_at_ms: 100,
            decided_at_ms,
            client: None,
        }
    }

    #[test]
    fn a_run_waits_while_an_input_is_pending_or_the_window_is_open() {
        let pending = [input(ApprovalStatus::Pending, None)];
        assert!(abandonment(&pending, 1_000_000, 10).is_none());
        let denied = [input(ApprovalStatus::Denied, Some(50))];
        assert!(abandonment(&denied, 59, 10).is_none());
        assert!(abandonment(&[], 1_000_000, 10).is_none());
    }

    #[test]
    fn a_denial_ends_the_run_denied_and_anything_else_expired() {
        let denied = [
            input(ApprovalStatus::Approved, Some(10)),
            input(ApprovalStatus::Denied, Some(50)),
        ];
        let (state, error) = abandonment(&denied, 60, 10).expect("ended");
        assert_eq!((state, error.code.as_str()), (RunState::Denied, "denied"));
        assert!(
            error.message.contains("demo.delete_note"),
            "{}",
            error.message
        );

        let approved = [input(ApprovalStatus::Approved, Some(50))];
        let (state, error) = abandonment(&approved, 60, 10).expect("ended");
        assert_eq!(
            (state, error.code.as_str()),
            (RunState::Expired, "run_expired")
        );

        let expired = [input(ApprovalStatus::Expired, Some(100))];
        let (state, error) = abandonment(&expired, 110, 10).expect("ended");
        assert_eq!(state, RunState::Expired);
        assert!(error.message.contains("in time"), "{}", error.message);
    }

    #[test]
    fn a_settled_envelope_keeps_the_calls_and_drops_what_was_pending() {
        let paused = Envelope {
            pending: vec![serde_json::json!({"id": "apr_0"})],
            status: EnvelopeStatus::AwaitingApproval,
            ..Envelope::refused(
                "run_0",
                RunError {
                    code: "x".into(),
                    message: "y".into(),
                    hint: None,
                },
                vec!["a notice".into()],
            )
        };
        let run = RunRecord {
            id: "run_0".into(),
            code: String::new(),
            seed: 0,
            clock_start_ms: 0,
            client: None,
            status: RunState::AwaitingApproval,
            envelope: serde_json::to_string(&paused).ok(),
            attempts: 1,
            created_at_ms: 0,
            updated_at_ms: 0,
            resumable: true,
            owner: None,
            lease: None,
        };
        let error = RunError {
            code: "denied".into(),
            message: "m".into(),
            hint: None,
        };
        let ended = settled_envelope(&run, error.clone());
        assert_eq!(ended.status, EnvelopeStatus::Failed);
        assert_eq!(ended.error, Some(error));
        assert!(ended.pending.is_empty());
        assert_eq!(ended.notices, vec!["a notice".to_owned()]);
    }
}
