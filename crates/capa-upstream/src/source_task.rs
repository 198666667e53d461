//! A source's task (SEP-2663, the Tasks extension): a 2026-07-28 source told that the call's
//! client takes tasks may answer a `tools/call` with a task instead of its result. The hub
//! follows it to its end on the client's behalf — `tasks/get` at the source's pace, its
//! questions asked through the call's asker and answered with `tasks/update` — so that to the
//! rest of the hub the call is one call, bounded by its timeout like any other. A call given up
//! (its timeout, its client cancelling) cancels the source's task with `tasks/cancel`, never
//! with `notifications/cancelled`, which SEP-2663 keeps for requests (docs/relay.md, "Tasks").

use std::collections::HashSet;
use std::time::Duration;

use rmcp::model::{
    CallToolResult, CancelTaskParams, CreateTaskResult, GetTaskParams, InputRequests,
    RequestMetaObject, TaskPayload, UpdateTaskParams,
};
use rmcp::service::{Peer, RoleClient};

use crate::asker::ClientAsker;
use crate::error::UpstreamError;
use crate::rounds::{MAX_ROUND_REQUESTS, answer_round};

/// The `_meta` key under which a source names the task a result belongs to: the source's id
/// means nothing to the hub's client, and SEP-2663 keeps it off results given inline.
const RELATED_TASK_META: &str = "io.modelcontextprotocol/related-task";

/// Bounds on the source's suggested polling interval: often enough that a person's answer is
/// passed on promptly, seldom enough that a source suggesting 0 is not asked in a busy loop.
const FASTEST_POLL: Duration = Duration::from_millis(50);
const SLOWEST_POLL: Duration = Duration::from_secs(2);
/// The interval when the source suggests none.
const DEFAULT_POLL: Duration = Duration::from_millis(250);

/// How many requests one task may put to its client in all: each may reach a person.
const MAX_TASK_REQUESTS: usize = 4 * MAX_ROUND_REQUESTS;

/// The longest the hub follows one task of a source, whatever `ttlMs` it gives: a task is for
/// work that outlives a request, not for holding a call of the hub's open without end.
pub const SOURCE_TASK_LIFE: Duration = Duration::from_hours(1);

/// One call whose source made a task of it.
pub(crate) struct Following<'a> {
    pub(crate) source_id: &'a str,
    pub(crate) peer: &'a Peer<RoleClient>,
    pub(crate) asker: &'a dyn ClientAsker,
    /// The call's `_meta` (what its client can answer), sent with each request about the task.
    pub(crate) meta: Option<RequestMetaObject>,
    /// Each request about the task is one call to the source (`upstreamTimeoutMs`).
    pub(crate) request_timeout: Duration,
}

impl Following<'_> {
    /// Follows the source's task `created` until it ends (within the life it gives it, at most
    /// [`SOURCE_TASK_LIFE`]), asking the call's client what the task asks.
    pub(crate) async fn follow(
        &self,
        created: CreateTaskResult,
    ) -> Result<CallToolResult, UpstreamError> {
        let life = created
            .task
            .ttl_ms
            .map_or(SOURCE_TASK_LIFE, Duration::from_millis)
            .min(SOURCE_TASK_LIFE);
        self.asker.task_started(life);
        let pace = created
            .task
            .poll_interval_ms
            .map_or(DEFAULT_POLL, Duration::from_millis)
            .clamp(FASTEST_POLL, SLOWEST_POLL);
        let task_id = created.task.task_id;
        let mut cancel = CancelOnDrop {
            peer: self.peer.clone(),
            task_id: Some(task_id.clone()),
            meta: self.meta.clone(),
        };
        let ended = tokio::time::timeout(life, self.poll(&task_id, pace)).await;
        let outcome = ended.map_err(|_| UpstreamError::Timeout {
            source_id: self.source_id.to_owned(),
            timeout: life,
        })?;
        // Ended (or failed to be read, when cancelling is still right): nothing to cancel.
        if !matches!(outcome, Err(Polled::Unreadable(_))) {
            cancel.task_id = None;
        }
        outcome.map_err(Polled::into_error)
    }

    async fn poll(&self, task_id: &str, pace: Duration) -> Result<CallToolResult, Polled> {
        let mut asked: HashSet<String> = HashSet::new();
        loop {
            let mut params = GetTaskParams::new(task_id);
            params.meta.clone_from(&self.meta);
            let got = self.bounded(self.peer.get_task(params)).await?;
            match got.task.payload {
                TaskPayload::InputRequired { input_requests } => {
                    let new: InputRequests = input_requests
                        .into_iter()
                        .filter(|(key, _)| !asked.contains(key))
                        .collect();
                    if new.len() > MAX_ROUND_REQUESTS || asked.len() + new.len() > MAX_TASK_REQUESTS
                    {
                        return Err(Polled::Unreadable(self.protocol(
                            None,
                            format!(
                                "its task asked for more than the hub passes on ({MAX_ROUND_REQUESTS} at once, {MAX_TASK_REQUESTS} in all)"
                            ),
                        )));
                    }
                    if !new.is_empty() {
                        asked.extend(new.keys().cloned());
                        let answers = answer_round(self.source_id, self.asker, new)
                            .await
                            .map_err(Polled::Unreadable)?;
                        let mut params = UpdateTaskParams::new(task_id, answers);
                        params.meta.clone_from(&self.meta);
                        self.bounded(self.peer.update_task(params)).await?;
                        // Answered: the task goes on at once, look again without waiting.
                        continue;
                    }
                }
                TaskPayload::Completed { result } => {
                    let mut result: CallToolResult =
                        serde_json::from_value(serde_json::Value::Object(result)).map_err(|e| {
                            Polled::Ended(
                                self.protocol(
                                    None,
                                    format!("its task ended with no tool result: {e}"),
                                ),
                            )
                        })?;
                    if let Some(meta) = result.meta.as_mut() {
                        meta.0.remove(RELATED_TASK_META);
                        if meta.0.is_empty() {
                            result.meta = None;
                        }
                    }
                    return Ok(result);
                }
                TaskPayload::Failed { error } => {
                    let code = error
                        .get("code")
                        .and_then(serde_json::Value::as_i64)
                        .and_then(|c| i32::try_from(c).ok());
                    let message = error
                        .get("message")
                        .and_then(serde_json::Value::as_str)
                        .unwrap_or("its task failed without saying why")
                        .to_owned();
                    return Err(Polled::Ended(self.protocol(code, message)));
                }
                TaskPayload::Cancelled => {
                    return Err(Polled::Ended(
                        self.protocol(None, "it cancelled the task of this call".to_owned()),
                    ));
                }
                // Working, and any status a later revision adds: look again.
                _ => {}
            }
            tokio::time::sleep(pace).await;
        }
    }

    /// One request about the task, within the call's timeout.
    async fn bounded<T>(
        &self,
        request: impl Future<Output = Result<T, rmcp::ServiceError>>,
    ) -> Result<T, Polled> {
        match tokio::time::timeout(self.request_timeout, request).await {
            Ok(Ok(answer)) => Ok(answer),
            Ok(Err(e)) => Err(Polled::Unreadable(UpstreamError::from_service(
                self.source_id,
                e,
            ))),
            Err(_) => Err(Polled::Unreadable(UpstreamError::Timeout {
                source_id: self.source_id.to_owned(),
                timeout: self.request_timeout,
            })),
        }
    }

    fn protocol(&self, code: Option<i32>, message: String) -> UpstreamError {
        UpstreamError::Protocol {
            source_id: self.source_id.to_owned(),
            code,
            message,
        }
    }
}

/// Why following a task stopped without a result.
enum Polled {
    /// The task ended without one (failed, cancelled, or a result that is none).
    Ended(UpstreamError),
    /// The hub could no longer read or answer it: the task may still run at the source.
    Unreadable(UpstreamError),
}

impl Polled {
    fn into_error(self) -> UpstreamError {
        match self {
            Self::Ended(e) | Self::Unreadable(e) => e,
        }
    }
}

/// Cancels the source's task when the call stops following it before it ended.
struct CancelOnDrop {
    peer: Peer<RoleClient>,
    task_id: Option<String>,
    meta: Option<RequestMetaObject>,
}

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        let Some(task_id) = self.task_id.take() else {
            return;
        };
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return;
        };
        let peer = self.peer.clone();
        let mut params = CancelTaskParams::new(task_id);
        params.meta = self.meta.take();
        runtime.spawn(async move {
            // Best effort: the source may be gone, and its task then with it.
            if let Err(e) = peer.cancel_task(params).await {
                tracing::debug!(error = %e, "a source's task could not be cancelled");
            }
        });
    }
}
