//! Approvals of direct calls (expose-all, search's and on-demand's `call_tool`), which have no
//! run to pause: the form of a paired client that can show one, else `approval_required`.

use std::time::Duration;

use capa_core::{
    AskingChannel, Authorization, CallError, Choice, DirectAnswer, Hub, JsonObject, PendingInput,
    Permit, Profile,
};
use rmcp::model::ElicitationAction;
use rmcp::service::{Peer, RoleServer};
use serde_json::Value;

use super::form;
use crate::asking::Asking;

/// A direct call (expose-all, search and on-demand's `call_tool`: no run to pause), decided by
/// the hub's authorizer. A call that needs a person is recorded as a pending input; an
/// initialize-era client with elicitation gets the form mid-call, and while it is up the popup
/// and the page stay closed; a form that is cancelled or times out hands the question to them
/// for the rest of the run's wall time. Clients that cannot show a form are refused with
/// `approval_required` and told how to proceed. `Ok` is the permit to call with.
pub(crate) async fn authorize_direct_call(
    hub: &Hub,
    profile: Option<&Profile>,
    address: &str,
    arguments: Option<&JsonObject>,
    client: Option<&str>,
    asking: &Asking,
) -> Result<Permit, rmcp::model::CallToolResult> {
    let refuse =
        |code: &str, message: String| crate::tool_error::typed_error_result(code, &message, false);
    let question = match hub.authorize_in(address, None, profile).await {
        Ok(Authorization::Allowed(permit)) => return Ok(permit),
        Ok(Authorization::Denied { address, .. }) => {
            return Err(crate::tool_error::error_result(&CallError::Denied {
                address,
            }));
        }
        Ok(Authorization::NeedsPerson(question)) => question,
        Err(e) => return Err(crate::tool_error::error_result(&e)),
    };
    let Some(peer) = &asking.elicit_peer else {
        let declared_forms = asking
            .client_capabilities
            .as_ref()
            .is_some_and(|c| capa_core::Wanted::Elicitation.declared_by(c));
        if declared_forms {
            return Err(refuse(
                "approval_required",
                format!(
                    "{address} needs the user's approval ({}), and this client is not paired with the hub, so its own approval form would not count. Ask the user to pair it (the Capabilities app's Clients page, or `capa clients pair` in a terminal), or call it from code mode's `execute`, which pauses for the user's approval in the app.",
                    question.verdict.reason
                ),
            ));
        }
        // When only the profile asks, a policy rule would not change that.
        let policy_allows = profile.is_some()
            && hub.listing_verdict(&question.tool).decision == capa_core::Decision::Allow;
        let way = if policy_allows {
            "This profile asks for it whatever the policy says; call it from code mode's `execute`, which can pause for approval, or from a client that shows forms"
                .to_owned()
        } else {
            format!(
                "Ask the user to allow it (`capa policy set {address} allow`), or call it from code mode's `execute`, which can pause for approval"
            )
        };
        return Err(refuse(
            "approval_required",
            format!(
                "{address} needs the user's approval ({}). {way}.",
                question.verdict.reason
            ),
        ));
    };
    let arguments = arguments.cloned().map_or(Value::Null, Value::Object);
    let (input, claim) = hub
        .approvals()
        .ask_direct(
            &question,
            &arguments,
            Some(AskingChannel::client_form(client)),
            client,
        )
        .map_err(|e| refuse(e.code(), e.to_string()))?;
    let wall = Duration::from_millis(hub.run_limits_in(profile).wall_ms);
    let deadline = tokio::time::Instant::now() + wall;
    ask_in_form(hub, peer, &input, wall).await;
    // The form is gone: the popup and the page may ask for the rest of the time.
    drop(claim);
    let left = deadline.saturating_duration_since(tokio::time::Instant::now());
    hub.approvals().wait_for_decision(&input.id, left).await;
    match hub
        .approvals()
        .direct_answer(&input.id, question, &arguments)
    {
        Ok(DirectAnswer::Approved(permit)) => Ok(permit),
        Ok(DirectAnswer::Denied) => Err(refuse(
            "denied",
            format!("the user denied the call to {address}"),
        )),
        Ok(DirectAnswer::Pending(_)) => {
            hub.approvals().expire(&input.id);
            Err(refuse(
                "approval_required",
                format!("{address} needs the user's approval, and nobody answered in time"),
            ))
        }
        Ok(DirectAnswer::Expired) => Err(refuse(
            "approval_expired",
            format!("nobody approved the call to {address} in time"),
        )),
        Err(e) => Err(refuse(e.code(), e.to_string())),
    }
}

/// Puts the approval form for `input` to the client (`elicitation/create`) and takes its
/// answer, unless a person decides in another channel first (the popup, the terminal): then the
/// form's answer no longer counts. True when the input got a decision, here or elsewhere.
pub(super) async fn ask_in_form(
    hub: &Hub,
    peer: &Peer<RoleServer>,
    input: &PendingInput,
    wall: Duration,
) -> bool {
    let Some(params) = form(input) else {
        return false;
    };
    tokio::select! {
        answer = peer.create_elicitation_with_timeout(params, Some(wall)) => {
            let Some(choice) = elicited_choice(answer) else {
                return false;
            };
            match hub.approvals().decide_in_form(&input.id, choice, "elicitation") {
                Ok(()) => true,
                Err(e) => {
                    tracing::warn!(error = %e, approval = %input.id, "an elicited decision was not taken");
                    false
                }
            }
        }
        decided = hub.approvals().wait_for_decision(&input.id, wall) => decided,
    }
}

/// The decision in an answer to `elicitation/create`: accept with a valid choice, or decline
/// (deny); cancel, errors and time-outs are no decision.
fn elicited_choice(
    answer: Result<rmcp::model::ElicitResult, rmcp::service::ServiceError>,
) -> Option<Choice> {
    match answer {
        Ok(result) => match result.action {
            ElicitationAction::Accept => result
                .content
                .as_ref()
                .and_then(|c| c.get("decision"))
                .and_then(Value::as_str)
                .and_then(Choice::parse),
            ElicitationAction::Decline => Some(Choice::Deny),
            _ => None,
        },
        Err(e) => {
            tracing::info!(error = %e, "no answer to an approval form");
            None
        }
    }
}
