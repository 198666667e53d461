//! Tasks the hub gives its clients (SEP-2663, the Tasks extension; docs/relay.md, "Tasks").
//!
//! A source may answer a direct call of a client that declared the extension with a task of its
//! own. The hub follows that task (`capa_upstream`'s `source_task.rs`) and hands the client a
//! task of the hub's at once: the client polls `tasks/get` here, answers the questions with
//! `tasks/update`, and may `tasks/cancel`. The call behind it is the same call, with the same
//! policy, approvals, redaction, result budget and timeout; only the way its answer travels
//! changes. The hub makes no task of its own accord.
//!
//! The tasks of one surface (the hub's own, or one profile's) live in its
//! [`TaskStore`](crate::task_store::TaskStore) (rmcp's task manager), and their states in the
//! hub's store (`crate::kept_tasks`), so that a restarted hub answers `tasks/get` for them.
//! Their ids are random (UUID v4) and are all a client needs to reach one.

use std::collections::{BTreeMap, HashSet};
use std::time::Duration;

use capa_core::CallToolResult;
use rmcp::model::{CreateTaskResult, ErrorData};
use rmcp::task_manager::{TaskContext, TaskExit, TaskOptions};

use crate::folded::{Asked, CallEvent, Handed, Running};

/// The polling interval suggested to clients: a person's answer or a result is seen soon,
/// without a busy loop.
const POLL_INTERVAL: Duration = Duration::from_millis(250);

/// How long a task stays readable after the longest a source's task is followed
/// ([`capa_core::SOURCE_TASK_LIFE`]): rmcp fails a task still running at its `ttlMs`, and keeps
/// an ended one that long again.
const KEPT_FOR: Duration = Duration::from_mins(10);

/// A direct call's outcome: what a client waiting on it is answered and, when the source failed
/// the call with a JSON-RPC error, that error. A task ends `failed` with it (SEP-2663 keeps
/// `failed` for errors of the protocol); a client answered at once gets the tool result the
/// model reads, as it always has.
pub(crate) struct Called {
    pub(crate) answer: Result<CallToolResult, ErrorData>,
    pub(crate) source_error: Option<ErrorData>,
}

/// Gives the client a task of the hub's, in the room `handed` holds, that follows the call to
/// its end.
pub(crate) fn start(handed: Handed<Called>) -> CreateTaskResult {
    let Handed {
        running,
        pending,
        slot,
    } = handed;
    let kept =
        u64::try_from((capa_core::SOURCE_TASK_LIFE + KEPT_FOR).as_millis()).unwrap_or(u64::MAX);
    let poll = u64::try_from(POLL_INTERVAL.as_millis()).unwrap_or(1);
    let options = TaskOptions::new()
        .with_ttl_ms(kept)
        .with_poll_interval_ms(poll);
    let task = slot.spawn(options, move |context| {
        Box::pin(follow(context, running, pending))
    });
    CreateTaskResult::new(task)
}

/// The task's work: the call's outcome, with each question its source asks meanwhile put to
/// the client as one of the task's `inputRequests`.
async fn follow(
    context: TaskContext,
    mut running: Running<Called>,
    pending: BTreeMap<String, Asked>,
) -> Result<CallToolResult, TaskExit> {
    let mut keys = Keys::default();
    for (key, asked) in pending {
        ask(&context, keys.unique(Some(&key)), asked);
    }
    loop {
        tokio::select! {
            outcome = &mut running.outcome => return finished(outcome),
            event = running.asks.recv() => match event {
                Some(CallEvent::Asked(asked)) => {
                    let key = keys.unique(asked.key.as_deref());
                    ask(&context, key, *asked);
                }
                Some(CallEvent::Tasked) => {}
                None => return finished((&mut running.outcome).await),
            },
            () = context.cancelled() => {
                // Dropping the call cancels the source's task (`tasks/cancel`) and releases
                // what it held.
                running.outcome.abort();
                return Err(TaskExit::Cancelled);
            }
        }
    }
}

/// Puts one question to the client and hands its answer to the source when it comes.
fn ask(context: &TaskContext, key: String, asked: Asked) {
    let context = context.clone();
    tokio::spawn(async move {
        let answer = context
            .request_input(key, asked.request)
            .await
            .map_err(|_| {
                ErrorData::internal_error("the task ended before the client answered", None)
            });
        // The source may have given up meanwhile: nobody to hand it to.
        let _ = asked.reply.send(answer);
    });
}

fn finished(outcome: Result<Called, tokio::task::JoinError>) -> Result<CallToolResult, TaskExit> {
    match outcome {
        Ok(Called {
            source_error: Some(error),
            ..
        }) => Err(TaskExit::Error(error)),
        Ok(Called { answer, .. }) => answer.map(crate::relayed::relayed).map_err(TaskExit::Error),
        Err(_) => Err(TaskExit::Error(ErrorData::internal_error(
            "the call failed inside the hub",
            None,
        ))),
    }
}

/// The keys of one task's questions: unique over the task's life, as SEP-2663 asks
/// (`folded::key_for`, as a round's are named).
#[derive(Default)]
struct Keys {
    used: HashSet<String>,
}

impl Keys {
    fn unique(&mut self, wanted: Option<&str>) -> String {
        let key = crate::folded::key_for(wanted, self.used.len(), |k| self.used.contains(k));
        self.used.insert(key.clone());
        key
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_the_sources_until_one_repeats() {
        let mut keys = Keys::default();
        assert_eq!(keys.unique(Some("confirm")), "confirm");
        assert_eq!(keys.unique(Some("confirm")), "source_request_1");
        assert_eq!(keys.unique(None), "source_request_2");
        assert_eq!(keys.unique(Some("source_request_3")), "source_request_3");
        assert_eq!(keys.unique(None), "source_request_4");
    }
}
