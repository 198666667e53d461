//! Waiting for a person's decision on a call the hub answered `approval_required`: the call is
//! asked again naming the approval, each time waiting up to the API's longest wait, until a
//! person decided or the time is up; then the caller abandons it (the input ends, so the popup
//! and the page stop asking).

use capa_core::clock::now_ms;
use capa_server::http::MAX_APPROVAL_WAIT;

use super::HubClient;
use crate::api::{CallAnswer, CallRequest};
use crate::running::ClientError;

/// The answer of `request` once the approval `id` is decided, or, at `until_ms` (epoch
/// milliseconds), the answer of the abandoned call.
pub async fn call_when_decided(
    client: &impl HubClient,
    request: impl Fn() -> CallRequest,
    id: &str,
    until_ms: i64,
) -> Result<CallAnswer, ClientError> {
    loop {
        let left = u64::try_from(until_ms - now_ms()).unwrap_or(0);
        let answer = client
            .call(CallRequest {
                approval: Some(id.to_owned()),
                wait_ms: Some(
                    left.min(u64::try_from(MAX_APPROVAL_WAIT.as_millis()).unwrap_or(u64::MAX)),
                ),
                abandon: left == 0,
                ..request()
            })
            .await?;
        if answer.error_code() != Some("approval_pending") || left == 0 {
            return Ok(answer);
        }
    }
}
