//! Where one surface's tasks live (SEP-2663, `crate::tasks`): rmcp's [`TaskManager`], shared by
//! every request of every client of the surface, as a task's id is all a client needs.
//!
//! rmcp keeps an ended task for its whole `ttlMs` again (70 minutes here), with its result and
//! bounds only what runs. So the store counts what it holds: at most [`MAX_RUNNING`] tasks
//! running and [`MAX_HELD`] held (running or ended, not yet evicted). Past either, the call is not
//! handed to a task: its source's task is followed while the client waits, as for a client that
//! takes none. A token holder whose source makes quick tasks cannot pile them up.

use std::sync::{Arc, Mutex};

use rmcp::model::Task;
use rmcp::task_manager::{TaskContext, TaskFuture, TaskManager, TaskOptions};

/// How many tasks of one surface may run at once.
pub(crate) const MAX_RUNNING: usize = 64;

/// How many tasks one surface holds, running or ended: each keeps its result (at most
/// `inlineResultBytes`) and its questions until rmcp evicts it.
pub(crate) const MAX_HELD: usize = 1024;

/// The tasks of one surface. Cheap to clone; the clones share the tasks.
#[derive(Clone, Default)]
pub struct TaskStore {
    manager: TaskManager,
    held: Arc<Mutex<Held>>,
}

/// What the store counts beside rmcp.
#[derive(Default)]
struct Held {
    /// The ids of the tasks handed out that rmcp may still hold, oldest first.
    ids: Vec<String>,
    /// Slots given to calls about to be handed over, not yet spawned.
    reserved: usize,
}

impl std::fmt::Debug for TaskStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TaskStore")
            .field("running", &self.manager.running_task_count())
            .finish_non_exhaustive()
    }
}

impl TaskStore {
    /// The tasks, for a client's `tasks/get`, `tasks/update` and `tasks/cancel`.
    pub(crate) fn manager(&self) -> &TaskManager {
        &self.manager
    }

    /// Room for one more task, kept until it is spawned or dropped; none when [`MAX_RUNNING`]
    /// run or [`MAX_HELD`] are held, counting the slots already given.
    pub(crate) fn reserve(&self) -> Option<Slot> {
        let mut held = self.held.lock().ok()?;
        if held.ids.len() + held.reserved >= MAX_HELD {
            // Forget the tasks rmcp has evicted (their ttl after they ended).
            held.ids.retain(|id| self.manager.get_task(id).is_ok());
        }
        let running = self.manager.running_task_count() + held.reserved;
        if running >= MAX_RUNNING || held.ids.len() + held.reserved >= MAX_HELD {
            return None;
        }
        held.reserved += 1;
        Some(Slot {
            store: self.clone(),
            spawned: false,
        })
    }
}

/// Room for one task in a [`TaskStore`], taken by [`Slot::spawn`] or given back when dropped.
pub(crate) struct Slot {
    store: TaskStore,
    spawned: bool,
}

impl Slot {
    /// Starts the task running `work` in the room this slot kept.
    pub(crate) fn spawn<F>(mut self, options: TaskOptions, work: F) -> Task
    where
        F: FnOnce(TaskContext) -> TaskFuture,
    {
        let task = self.store.manager.spawn(options, work);
        if let Ok(mut held) = self.store.held.lock() {
            held.reserved = held.reserved.saturating_sub(1);
            held.ids.push(task.task_id.clone());
        }
        self.spawned = true;
        task
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        if !self.spawned
            && let Ok(mut held) = self.store.held.lock()
        {
            held.reserved = held.reserved.saturating_sub(1);
        }
    }
}

#[cfg(test)]
mod tests {
    use rmcp::model::CallToolResult;

    use super::*;

    fn quick(_context: TaskContext) -> TaskFuture {
        Box::pin(async { Ok(CallToolResult::success(Vec::new())) })
    }

    #[tokio::test]
    async fn ended_tasks_count_until_they_are_evicted() {
        let store = TaskStore::default();
        let kept = TaskOptions::new().with_ttl_ms(60_000);
        for _ in 0..MAX_HELD {
            let slot = store.reserve().expect("room");
            slot.spawn(kept.clone(), quick);
            // Never more than MAX_RUNNING at once: let each end.
            while store.manager.running_task_count() > 0 {
                tokio::task::yield_now().await;
            }
        }
        // Every one of them has ended; they are still held, so there is no room.
        assert!(store.reserve().is_none());
        assert_eq!(store.held.lock().map(|h| h.ids.len()).ok(), Some(MAX_HELD));
    }

    #[tokio::test]
    async fn evicted_tasks_make_room() {
        let store = TaskStore::default();
        // A TTL of 1 ms: each task is evicted soon after it ends.
        let brief = TaskOptions::new().with_ttl_ms(1);
        for _ in 0..MAX_HELD {
            store.reserve().expect("room").spawn(brief.clone(), quick);
            while store.manager.running_task_count() > 0 {
                tokio::task::yield_now().await;
            }
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        assert!(store.reserve().is_some());
        assert!(store.held.lock().map_or(usize::MAX, |h| h.ids.len()) < MAX_HELD);
    }

    #[tokio::test]
    async fn running_tasks_are_bounded_apart() {
        let store = TaskStore::default();
        let (_release, released) = tokio::sync::watch::channel(());
        let slow = |released: tokio::sync::watch::Receiver<()>| {
            move |_context: TaskContext| -> TaskFuture {
                Box::pin(async move {
                    let mut released = released;
                    let _ = released.changed().await;
                    Ok(CallToolResult::success(Vec::new()))
                })
            }
        };
        let options = TaskOptions::new().with_ttl_ms(60_000);
        for _ in 0..MAX_RUNNING - 1 {
            let slot = store.reserve().expect("room");
            slot.spawn(options.clone(), slow(released.clone()));
        }
        // The last room, reserved and not yet spawned, counts as running.
        let last = store.reserve().expect("room for the last");
        assert!(store.reserve().is_none());
        // Given back unused, it is room again.
        drop(last);
        let last = store.reserve().expect("room again");
        last.spawn(options, slow(released.clone()));
        assert!(store.reserve().is_none());
    }
}
