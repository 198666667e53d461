//! `POST /api/call`: a call through the API, as `capa call` and `capa sh` make it, decided by
//! the hub's authorizer and waiting for a person where the policy asks.

use std::sync::Arc;
use std::time::Duration;

use axum::Json;
use axum::extract::State;
use capa_core::{Authorization, CallContext, CallError, DirectAnswer, Hub, PendingInput};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

/// A call through the API.
#[derive(Debug, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CallRequest {
    pub address: String,
    #[serde(default)]
    pub arguments: Option<serde_json::Map<String, Value>>,
    #[serde(default)]
    pub connection: Option<String>,
    /// The pending input an earlier answer named (`approval_required`): the call runs when a
    /// person approved exactly this call.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub approval: Option<String>,
    /// How long to wait for that person's decision before answering `approval_pending`
    /// (at most [`MAX_APPROVAL_WAIT`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wait_ms: Option<u64>,
    /// The caller stops waiting for the decision on `approval`: the input ends (expired), so
    /// the popup and the page stop asking. Only ever a "no".
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub abandon: bool,
    /// The whole result. Without it the result is cut to the run limits' `inlineResultBytes`
    /// (24 KB) with a notice, as on every channel a model reads: `capa sh` is how tools run in
    /// `toolExposure: none` projects, and an agent reads its output.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub full: bool,
}

/// The longest one request waits for a decision; a caller that waits longer asks again.
pub const MAX_APPROVAL_WAIT: Duration = Duration::from_mins(1);

/// Runs a call and shapes the answer the way the API and `capa call --json` print it. The
/// authorizer decides; a call that needs a person is recorded as a pending input (the popup,
/// the page, `capabilities hub pending` and the UI show it) and answered `approval_required`
/// with its id. The caller then gets a person's decision — at an interactive terminal, or by
/// waiting for one taken in the app — and calls again naming the approval. The bearer token
/// alone never approves anything.
pub async fn call_json(hub: &Hub, request: CallRequest, client: &str) -> Value {
    let CallRequest {
        address,
        arguments,
        connection,
        approval,
        wait_ms,
        abandon,
        full,
    } = request;
    let authorization = match hub.authorize(&address, connection.as_deref()).await {
        Ok(authorization) => authorization,
        Err(e) => return call_error_json(&e),
    };
    let permit = match authorization {
        Authorization::Allowed(permit) => permit,
        Authorization::Denied { address, .. } => {
            return call_error_json(&CallError::Denied { address });
        }
        Authorization::NeedsPerson(question) => {
            let shown = arguments.clone().map_or(Value::Null, Value::Object);
            let Some(approval_id) = approval else {
                return match hub
                    .approvals()
                    .ask_direct(&question, &shown, None, Some(client))
                {
                    Ok((input, _)) => pending_json("approval_required", &input),
                    Err(e) => decide_error_json(&e),
                };
            };
            let wait = Duration::from_millis(wait_ms.unwrap_or(0)).min(MAX_APPROVAL_WAIT);
            if !wait.is_zero() {
                hub.approvals().wait_for_decision(&approval_id, wait).await;
            }
            if abandon
                && let Ok(DirectAnswer::Pending(_)) =
                    hub.approvals()
                        .direct_answer(&approval_id, question.clone(), &shown)
            {
                hub.approvals().expire(&approval_id);
            }
            match hub
                .approvals()
                .direct_answer(&approval_id, question, &shown)
            {
                Ok(DirectAnswer::Approved(permit)) => permit,
                Ok(DirectAnswer::Pending(input)) => {
                    return pending_json("approval_pending", &input);
                }
                Ok(DirectAnswer::Denied) => {
                    return error_json(
                        "denied",
                        &format!("the user denied the call to {address}"),
                        false,
                    );
                }
                Ok(DirectAnswer::Expired) => {
                    return error_json(
                        "approval_expired",
                        &format!("nobody approved the call to {address} in time"),
                        false,
                    );
                }
                Err(e) => return decide_error_json(&e),
            }
        }
    };
    let context = CallContext {
        client: Some(client.to_owned()),
        progress: None,
        asker: None,
    };
    let started = std::time::Instant::now();
    let outcome = hub.call(permit, arguments, &context).await;
    let ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
    match outcome {
        Ok(result) => {
            let budget = hub.run_limits().inline_result_bytes;
            let cut = !full && capa_mcp::inline::measured(&result) > budget;
            let result = if cut {
                capa_mcp::inline::fit(result, budget)
            } else {
                result
            };
            json!({"ok": result.is_error != Some(true), "result": result, "cut": cut, "ms": ms})
        }
        Err(e) => call_error_json(&e),
    }
}

fn error_json(code: &str, message: &str, retryable: bool) -> Value {
    json!({"ok": false, "error": {"code": code, "message": message, "retryable": retryable}})
}

fn call_error_json(error: &CallError) -> Value {
    error_json(error.code(), &error.to_string(), error.retryable())
}

fn decide_error_json(error: &capa_core::DecideError) -> Value {
    error_json(error.code(), &error.to_string(), false)
}

/// A call waiting for a person: the error says so and where to decide, `approval` is the
/// pending input (redacted preview included) to name when calling again.
fn pending_json(code: &str, input: &PendingInput) -> Value {
    let message = format!(
        "{} needs your approval ({}): approve it in the Capabilities app, or run `capabilities hub approve {}` in a terminal",
        input.address, input.reason, input.id
    );
    json!({
        "ok": false,
        "error": {"code": code, "message": message, "retryable": true},
        "approval": input,
    })
}

/// Calls from a UI session (the app's tool tester) are recorded as the app's, others as the
/// CLI's.
pub(super) async fn call(
    State(hub): State<Arc<Hub>>,
    session: Option<axum::Extension<crate::ui::UiSession>>,
    Json(request): Json<CallRequest>,
) -> Json<Value> {
    let client = if session.is_some() {
        "capa-ui"
    } else {
        "capa-cli"
    };
    Json(call_json(&hub, request, client).await)
}
