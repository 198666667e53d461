//! The tasks a surface gives its clients, kept in the hub's store (`capa_core::Hub`'s
//! `keep_client_task`) so that a restarted hub still answers `tasks/get` for them: the state
//! when a task starts (`working`) and when it ends (its result or error), each until rmcp would
//! have let it go. A task whose hub process stopped while it worked is answered `failed`: the
//! call behind it went with that process, and whether it took effect is unknown. Questions a
//! task puts to its client meanwhile (`input_required`) live in memory only.

use std::sync::Arc;

use capa_core::Hub;
use rmcp::model::{DetailedTask, ErrorData, JsonObject, Task, TaskPayload};
use rmcp::task_manager::{TaskContext, TaskExit, TaskFuture, current_timestamp};

/// Keeps the tasks of one surface.
#[derive(Clone)]
pub(crate) struct Keeper {
    hub: Arc<Hub>,
    /// The surface's name in the store: only that surface answers its tasks.
    surface: String,
}

impl Keeper {
    /// The keeper of the tasks of the surface named `surface` (the hub's own, a profile's).
    pub(crate) fn new(hub: Arc<Hub>, surface: String) -> Self {
        Self { hub, surface }
    }

    /// `work` for task `context`, its end kept once `made` gives the task as rmcp made it.
    pub(crate) fn follow<F>(
        &self,
        context: TaskContext,
        work: F,
        made: tokio::sync::oneshot::Receiver<Task>,
    ) -> TaskFuture
    where
        F: FnOnce(TaskContext) -> TaskFuture,
    {
        let keeper = self.clone();
        let future = work(context);
        Box::pin(async move {
            let outcome = future.await;
            let payload = match &outcome {
                Ok(result) => TaskPayload::Completed {
                    result: object_of(result),
                },
                Err(TaskExit::Cancelled) => TaskPayload::Cancelled,
                Err(TaskExit::Error(error)) => TaskPayload::Failed {
                    error: object_of(error),
                },
            };
            if let Ok(mut task) = made.await {
                task.last_updated_at = current_timestamp();
                // Kept before rmcp marks the task ended: a client that saw it end in memory
                // finds the same end after a restart.
                let _ = keeper.keep(&task, payload).await;
            }
            outcome
        })
    }

    /// Keeps `task` as rmcp made it, working (a no-op when its end was kept already, so the
    /// write need not be waited for).
    pub(crate) fn started(&self, task: &Task) {
        drop(self.keep(task, TaskPayload::Working));
    }

    /// Writes `task`'s state off the async runtime (SQLite, a result of up to the inline
    /// budget, maybe waiting for another hub process's lock).
    fn keep(&self, task: &Task, payload: TaskPayload) -> tokio::task::JoinHandle<()> {
        let ended = !matches!(payload, TaskPayload::Working);
        let detail = DetailedTask::new(task.clone(), payload);
        let text = serde_json::to_string(&detail).ok();
        // rmcp fails a task still working a ttl after it was made, and keeps an ended one a ttl
        // after it ended: from now, at most the same.
        let ttl = task
            .ttl_ms
            .and_then(|ms| i64::try_from(ms).ok())
            .unwrap_or(i64::MAX / 4);
        let expires = capa_core::clock::now_ms().saturating_add(ttl);
        let (hub, surface, id) = (self.hub.clone(), self.surface.clone(), task.task_id.clone());
        tokio::task::spawn_blocking(move || {
            if let Some(text) = text {
                hub.runs()
                    .keep_client_task(&id, &surface, text, ended, expires);
            }
        })
    }

    /// Task `id` as kept, for a `tasks/get` the surface's memory cannot answer (a restarted
    /// hub, or another hub process on the same data that follows it).
    pub(crate) fn kept(&self, id: &str) -> Option<DetailedTask> {
        let kept = self.hub.runs().kept_client_task(id, &self.surface)?;
        let detail: DetailedTask = serde_json::from_str(&kept.detail).ok()?;
        if !kept.orphaned {
            return Some(detail);
        }
        let mut task = detail.task;
        task.last_updated_at = current_timestamp();
        let error = ErrorData::internal_error(
            "Capabilities stopped while this task's call ran, so whether it took effect is unknown; check before calling the tool again",
            None,
        );
        Some(DetailedTask::new(
            task,
            TaskPayload::Failed {
                error: object_of(&error),
            },
        ))
    }
}

/// `value` as a JSON object (a tool result, an error), as rmcp puts it in a task.
fn object_of<T: serde::Serialize>(value: &T) -> JsonObject {
    match serde_json::to_value(value) {
        Ok(serde_json::Value::Object(map)) => map,
        _ => JsonObject::new(),
    }
}
