//! Where one surface's tasks live (SEP-2663, `crate::tasks`): rmcp's [`TaskManager`], shared by
//! every request of every client of the surface, as a task's id is all a client needs.
//!
//! rmcp keeps an ended task for its whole `ttlMs` again (70 minutes here), with its result and
//! bounds only what runs. So the store counts what it holds: at most [`MAX_RUNNING`] tasks
//! running and [`MAX_HELD`] held (running or ended, not yet evicted). Past either, the call is not
//! handed to a task: its source's task is followed while the client waits, as for a client that
//! takes none. A token holder whose source makes quick tasks cannot pile them up.
//!
//! Counting what rmcp still holds means asking it about each task, and each question sweeps all
//! of its tasks and copies the task's result. So the store asks only about tasks that could have
//! been evicted (rmcp keeps every task at least its ttl from when it was made), and at most once
//! per [`RECOUNT_EVERY`]: a client calling again and again at the limit costs a comparison of
//! times, not a thousand copies of results.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use rmcp::model::Task;
use rmcp::task_manager::{TaskContext, TaskFuture, TaskManager, TaskOptions};

/// How many tasks of one surface may run at once.
pub(crate) const MAX_RUNNING: usize = 64;

/// How many tasks one surface holds, running or ended: each keeps its result (at most
/// `inlineResultBytes`) and its questions until rmcp evicts it.
pub(crate) const MAX_HELD: usize = 1024;

/// At the limit, how often the store asks rmcp again which of its tasks are gone.
const RECOUNT_EVERY: Duration = Duration::from_secs(1);

/// The tasks of one surface. Cheap to clone; the clones share the tasks.
#[derive(Clone, Default)]
pub struct TaskStore {
    manager: TaskManager,
    held: Arc<Mutex<Held>>,
    /// Where each task's state is kept for after a restart (`crate::kept_tasks`); none in
    /// tests of the store alone.
    keeper: Option<crate::kept_tasks::Keeper>,
}

/// What the store counts beside rmcp.
#[derive(Default)]
struct Held {
    /// The tasks handed out that rmcp may still hold, oldest first: each id with the time before
    /// which rmcp cannot have evicted it (made + ttl; rmcp keeps an ended task a ttl after it
    /// ended, and fails a running one a ttl after it was made).
    /// `None`: no ttl, so rmcp keeps the task as long as it lives.
    tasks: VecDeque<(String, Option<Instant>)>,
    /// Slots given to calls about to be handed over, not yet spawned.
    reserved: usize,
    /// When rmcp was last asked which tasks are gone.
    recounted: Option<Instant>,
}

impl Held {
    /// Forgets the tasks rmcp has evicted, asking it only about those old enough to be gone,
    /// and at most once per [`RECOUNT_EVERY`].
    fn forget_evicted(&mut self, manager: &TaskManager) {
        let now = Instant::now();
        if self
            .recounted
            .is_some_and(|at| now.duration_since(at) < RECOUNT_EVERY)
        {
            return;
        }
        self.recounted = Some(now);
        self.tasks.retain(|(id, kept_until)| match kept_until {
            Some(until) if *until <= now => manager.get_task(id).is_ok(),
            _ => true,
        });
    }
}

impl std::fmt::Debug for TaskStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TaskStore")
            .field("running", &self.manager.running_task_count())
            .finish_non_exhaustive()
    }
}

impl TaskStore {
    /// The tasks of one surface, each kept by `keeper` so that a restarted hub answers for it.
    pub(crate) fn kept_by(keeper: crate::kept_tasks::Keeper) -> Self {
        Self {
            keeper: Some(keeper),
            ..Self::default()
        }
    }

    /// Where the tasks are kept for after a restart.
    pub(crate) fn keeper(&self) -> Option<&crate::kept_tasks::Keeper> {
        self.keeper.as_ref()
    }

    /// The tasks, for a client's `tasks/get`, `tasks/update` and `tasks/cancel`.
    pub(crate) fn manager(&self) -> &TaskManager {
        &self.manager
    }

    /// Room for one more task, kept until it is spawned or dropped; none when [`MAX_RUNNING`]
    /// run or [`MAX_HELD`] are held, counting the slots already given.
    pub(crate) fn reserve(&self) -> Option<Slot> {
        let mut held = self.held.lock().ok()?;
        if held.tasks.len() + held.reserved >= MAX_HELD {
            held.forget_evicted(&self.manager);
        }
        let running = self.manager.running_task_count() + held.reserved;
        if running >= MAX_RUNNING || held.tasks.len() + held.reserved >= MAX_HELD {
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
        let made = Instant::now();
        let task = match self.store.keeper.clone() {
            // Kept when it starts, with rmcp's own times, and when it ends.
            Some(keeper) => {
                let (made, seed) = tokio::sync::oneshot::channel();
                let task = self
                    .store
                    .manager
                    .spawn(options, |context| keeper.follow(context, work, seed));
                keeper.started(&task);
                let _ = made.send(task.clone());
                task
            }
            None => self.store.manager.spawn(options, work),
        };
        if let Ok(mut held) = self.store.held.lock() {
            held.reserved = held.reserved.saturating_sub(1);
            let kept_until = task
                .ttl_ms
                .and_then(|ms| made.checked_add(Duration::from_millis(ms)));
            held.tasks.push_back((task.task_id.clone(), kept_until));
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
        assert_eq!(
            store.held.lock().map(|h| h.tasks.len()).ok(),
            Some(MAX_HELD)
        );
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
        assert!(store.held.lock().map_or(usize::MAX, |h| h.tasks.len()) < MAX_HELD);
    }

    #[test]
    fn only_tasks_old_enough_to_be_gone_are_asked_about_and_at_most_once_a_second() {
        // Ids this manager never made: asked about, each is "unknown", so forgotten.
        let manager = TaskManager::default();
        let now = Instant::now();
        let past = now.checked_sub(Duration::from_secs(5));
        let mut held = Held::default();
        held.tasks.push_back(("old".to_owned(), past));
        held.tasks
            .push_back(("young".to_owned(), Some(now + Duration::from_mins(1))));
        held.tasks.push_back(("no-ttl".to_owned(), None));
        held.forget_evicted(&manager);
        let ids = |held: &Held| {
            held.tasks
                .iter()
                .map(|(id, _)| id.clone())
                .collect::<Vec<_>>()
        };
        // The young task and the one without a ttl were not asked about.
        assert_eq!(ids(&held), ["young", "no-ttl"]);
        // Within the second: not asked again, even about a task old enough to be gone.
        held.tasks.push_back(("old-too".to_owned(), past));
        held.forget_evicted(&manager);
        assert_eq!(ids(&held), ["young", "no-ttl", "old-too"]);
        // A second later it is.
        held.recounted = held.recounted.and_then(|at| at.checked_sub(RECOUNT_EVERY));
        held.forget_evicted(&manager);
        assert_eq!(ids(&held), ["young", "no-ttl"]);
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
