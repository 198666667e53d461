//! Pending inputs of direct calls: a call outside `execute` (`capa call`, `capa sh`,
//! `POST /api/call`, an expose-all tool answered through a form) that the authorizer says needs
//! a person. There is no run to pause, so the call waits: its question is recorded like a run's
//! (the popup, the page, `capabilities hub pending` and the UI show it), keyed by a call id
//! (`call_…`) in place of a run id, and a person's "yes" is spent by exactly one call with the
//! same address, connection and arguments.

use std::time::Duration;

use capa_store::{ApprovalRecord, ApprovalStatus};
use serde_json::Value;

use super::Approvals;
use super::{AskingChannel, AskingClaim, DecideError, PendingInput, call_digest, store_error};
use crate::authorize::{Permit, Question};
use capa_domain::preview;

use crate::clock::now_ms;

/// Where a direct call's question stands.
// A pending input is the larger answer and the common one while a person decides.
#[derive(Debug)]
#[expect(clippy::large_enum_variant, reason = "see the comment above")]
pub enum DirectAnswer {
    /// A person approved it: the permit for this one call (the approval is spent).
    Approved(Permit),
    /// Nobody decided yet.
    Pending(PendingInput),
    Denied,
    Expired,
}

/// `call_` and 16 random hex digits.
fn new_call_id() -> String {
    format!(
        "call_{:016x}",
        getrandom::u64().unwrap_or_else(|_| now_ms().cast_unsigned())
    )
}

impl Approvals<'_> {
    /// Records the question of a direct call as a pending input and returns it; claimed for
    /// `asked_in` (the client's own form) before anyone else can see it. `client`: who asks
    /// ("name version", `capa_domain::client_label`), shown with it.
    pub fn ask_direct(
        &self,
        question: &Question,
        arguments: &Value,
        asked_in: Option<AskingChannel>,
        client: Option<&str>,
    ) -> Result<(PendingInput, Option<AskingClaim>), DecideError> {
        let address = question.tool.address.to_string();
        let digest = call_digest(
            &address,
            question.requested_connection.as_deref(),
            arguments,
        );
        let shown = preview(
            arguments,
            question.tool.definition.input_schema.as_ref(),
            self.hub.redactor(),
        );
        let now = now_ms();
        let record = ApprovalRecord {
            id: super::new_approval_id(),
            run_id: new_call_id(),
            call_index: 0,
            kind: capa_store::InputKind::Approval,
            address,
            source: question.tool.address.namespace.clone(),
            connection: question.connection.clone(),
            preview: self.hub.redactor().redact(&shown.to_string()),
            reason: self.hub.redactor().redact(&question.verdict.reason),
            args_digest: digest,
            status: ApprovalStatus::Pending,
            scope: None,
            decided_via: None,
            created_at_ms: now,
            expires_at_ms: now.saturating_add(
                i64::try_from(self.hub.config().approval_ttl.as_millis()).unwrap_or(i64::MAX),
            ),
            decided_at_ms: None,
            client: client.map(|c| self.hub.redactor().redact(c)),
        };
        let stored = self
            .hub
            .store()
            .insert_approval(&record)
            .map_err(store_error)?;
        self.hub.remember_definition(&stored);
        let claim = asked_in.and_then(|channel| self.claim(&stored.id, channel, None));
        self.refresh_pending();
        Ok((PendingInput::from_record(&stored), claim))
    }

    /// Where the direct call's input `approval_id` stands for this very call (same address,
    /// connection and arguments). An approval is spent by the call it returns a permit for.
    pub fn direct_answer(
        &self,
        approval_id: &str,
        question: Question,
        arguments: &Value,
    ) -> Result<DirectAnswer, DecideError> {
        // Expiry is applied first, so the status read below is current.
        self.hub
            .store()
            .expire_approvals(now_ms())
            .map_err(store_error)?;
        let record = self
            .hub
            .store()
            .approval(approval_id)
            .map_err(store_error)?
            .ok_or_else(|| DecideError::NotFound(approval_id.to_owned()))?;
        let address = question.tool.address.to_string();
        let digest = call_digest(
            &address,
            question.requested_connection.as_deref(),
            arguments,
        );
        if !record.run_id.starts_with("call_") || record.address != address {
            return Err(DecideError::NotFound(format!(
                "{approval_id} (no approval of a direct call to {address})"
            )));
        }
        if record.args_digest != digest {
            return Err(DecideError::OtherCall(approval_id.to_owned()));
        }
        match record.status {
            ApprovalStatus::Pending => {
                Ok(DirectAnswer::Pending(PendingInput::from_record(&record)))
            }
            ApprovalStatus::Approved => {
                if self
                    .hub
                    .store()
                    .use_approval(approval_id)
                    .map_err(store_error)?
                {
                    Ok(DirectAnswer::Approved(question.approved()))
                } else {
                    Err(DecideError::AlreadyDecided {
                        id: approval_id.to_owned(),
                        status: "used",
                    })
                }
            }
            ApprovalStatus::Denied => Ok(DirectAnswer::Denied),
            ApprovalStatus::Expired => Ok(DirectAnswer::Expired),
            ApprovalStatus::Used | ApprovalStatus::Resolved => Err(DecideError::AlreadyDecided {
                id: approval_id.to_owned(),
                status: record.status.as_str(),
            }),
        }
    }

    /// Ends an input nobody will answer any more (its caller gave up waiting): the popup and
    /// the page close it.
    pub fn expire(&self, approval_id: &str) {
        let ended = self.hub.store().decide_approval(
            approval_id,
            ApprovalStatus::Expired,
            None,
            "timeout",
            now_ms(),
        );
        if let Err(e) = ended {
            tracing::warn!(error = %e, approval = approval_id, "could not end an unanswered input");
        }
        self.release(approval_id);
        self.refresh_pending();
    }

    /// Waits until the input `approval_id` is no longer pending, or `limit` passed, or it
    /// expired. Returns whether it was decided (or expired) by then.
    pub async fn wait_for_decision(self, approval_id: &str, limit: Duration) -> bool {
        let mut decisions = self.hub.approval_signals.watch_decisions();
        let deadline = tokio::time::Instant::now() + limit;
        loop {
            let status = self
                .hub
                .store()
                .approval(approval_id)
                .ok()
                .flatten()
                .map(|r| {
                    if r.status == ApprovalStatus::Pending && r.expires_at_ms <= now_ms() {
                        ApprovalStatus::Expired
                    } else {
                        r.status
                    }
                });
            match status {
                Some(ApprovalStatus::Pending) => {}
                _ => return true,
            }
            // Decisions taken by another process (the terminal writes to the database) are seen
            // when it pokes the hub, or at the next poll.
            let tick = tokio::time::sleep(Duration::from_millis(500));
            tokio::select! {
                _ = decisions.changed() => {}
                () = tick => {}
                () = tokio::time::sleep_until(deadline) => return false,
            }
        }
    }
}
