//! Warm sandboxes, made ahead so that a run does not wait for a thread, a runtime, a context and
//! the prelude (most of a cold start, though the prelude's bytecode is compiled only once).
//!
//! Each warm sandbox is a thread of its own, parked with its sandbox (`sandbox.rs`) until it is
//! handed one run; after that run it ends and its sandbox is freed. Nothing is reused between
//! runs. A refill thread makes a new one whenever one is taken, off the request path: [`offer`]
//! never waits for one to be made, and a run that finds the pool empty starts cold.
//!
//! The pool remembers the namespaces of the last run offered, and the sandboxes it makes after
//! that have them defined already (`primed.rs`). A run with other namespaces (the hub's catalog
//! changed) takes a sandbox made before any run, which a pool of two or more always keeps one
//! of, or starts cold; sandboxes primed with the old namespaces are let go, and the refill
//! makes new ones.

use std::num::NonZeroUsize;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, OnceLock, PoisonError, mpsc};
use std::time::{Duration, Instant};

use crate::primed::Primed;
use crate::sandbox::Sandbox;
use crate::thread::{Task, serve, stack_for};
use crate::{Limits, Namespace};

/// Warm sandboxes at most, however many cores the host has: each holds a parked thread and a
/// runtime with the prelude prepared (a few hundred KB of heap).
const MAX_WARM: usize = 4;
/// How long the refill thread waits after a sandbox is taken before it makes another, unless a
/// pooled run ends sooner: making one takes a core for some milliseconds, and the run that took
/// it should have the cores first (on a busy two-core machine the warm thread otherwise waited
/// milliseconds to be scheduled). Once a run has answered, its client has the result, and the
/// refill is off every request's path: a client whose runs follow each other closely finds a
/// warm sandbox each time.
const REFILL_DELAY: Duration = Duration::from_millis(20);
/// How long the refill thread waits after it could not make a sandbox before it tries again.
const RETRY_AFTER: Duration = Duration::from_secs(1);

/// A warm sandbox's thread, waiting for its one run. Dropped unused, its thread frees the
/// sandbox and ends.
struct Warm {
    tasks: mpsc::Sender<Task>,
    /// The namespaces its sandbox defined ahead, if any.
    primed: Option<Arc<Primed>>,
}

/// The warm sandboxes, and what the next ones are primed with.
#[derive(Default)]
struct Ready {
    warm: Vec<Warm>,
    /// The namespaces of the last run offered.
    latest: Option<Arc<Primed>>,
}

impl Ready {
    /// A warm sandbox for a run with `namespaces`: one primed with them first, else one made
    /// before any run. Sandboxes primed with other namespaces are let go: the runs now have
    /// these (remembered for the next sandboxes made).
    fn take_for(&mut self, namespaces: &Arc<[Namespace]>) -> Option<Warm> {
        if !self.latest.as_ref().is_some_and(|p| p.serves(namespaces)) {
            self.latest = Some(Primed::of(namespaces));
        }
        let latest = self.latest.as_ref();
        self.warm.retain(|w| match &w.primed {
            None => true,
            Some(primed) => latest.is_some_and(|l| Arc::ptr_eq(l, primed)),
        });
        let at = self
            .warm
            .iter()
            .position(|w| w.primed.is_some())
            .or_else(|| self.warm.iter().position(|w| w.primed.is_none()))?;
        Some(self.warm.swap_remove(at))
    }
}

struct Pool {
    ready: Mutex<Ready>,
    /// Signalled when a sandbox is taken (the refill thread makes another) and when a pooled
    /// run ended (it need not wait any longer).
    taken: Condvar,
    /// A pooled run ended since the refill thread last looked.
    run_ended: AtomicBool,
    size: usize,
}

static POOL: OnceLock<Pool> = OnceLock::new();

/// The stack of a warm thread: the default limits' guest stack plus the headroom. A run that
/// asks for more starts cold.
fn warm_stack() -> usize {
    stack_for(&Limits::default())
}

/// One warm sandbox per core, at least one and at most [`MAX_WARM`].
fn size() -> usize {
    std::thread::available_parallelism()
        .map_or(1, NonZeroUsize::get)
        .clamp(1, MAX_WARM)
}

fn lock(pool: &Pool) -> MutexGuard<'_, Ready> {
    pool.ready.lock().unwrap_or_else(PoisonError::into_inner)
}

/// The process's pool, started (its refill thread spawned) on first use.
fn pool() -> &'static Pool {
    let mut fresh = false;
    let pool = POOL.get_or_init(|| {
        fresh = true;
        Pool {
            ready: Mutex::new(Ready::default()),
            taken: Condvar::new(),
            run_ended: AtomicBool::new(false),
            size: size(),
        }
    });
    if fresh {
        let started = std::thread::Builder::new()
            .name("capa-sandbox-refill".into())
            .spawn(move || refill(pool));
        if let Err(e) = started {
            tracing::warn!("could not start the sandbox pool ({e}); every run starts cold");
        }
    }
    pool
}

/// Starts the pool if it is not running yet: its sandboxes are made in the background.
pub(crate) fn start() {
    pool();
}

/// How many warm sandboxes wait now.
pub(crate) fn ready() -> usize {
    lock(pool()).warm.len()
}

/// Whether a warm thread's stack is big enough for a run that needs a thread stack of `stack`.
fn fits_warm(stack: usize) -> bool {
    stack <= warm_stack()
}

/// Hands `task` to a warm sandbox, if one is ready and its thread's stack is at least `stack`
/// bytes. Never waits for a sandbox to be made: when none is ready, the task comes back, to be
/// run cold.
pub(crate) fn offer(task: Task, stack: usize) -> Option<Task> {
    if !fits_warm(stack) {
        return Some(task);
    }
    let pool = pool();
    let warm = lock(pool).take_for(&task.job.input.namespaces);
    let Some(warm) = warm else {
        // None, or only sandboxes primed for a catalog that changed (let go above): the refill
        // makes them again, primed with this run's namespaces.
        pool.taken.notify_one();
        return Some(task);
    };
    // The run that takes this sandbox has the cores until it ends (or the delay is over).
    pool.run_ended.store(false, Ordering::Release);
    pool.taken.notify_one();
    // An error: the thread ended before its run (it panicked while parked); run cold.
    warm.tasks.send(task).err().map(|e| e.0)
}

/// The refill thread: keeps the pool full, one sandbox at a time.
fn refill(pool: &'static Pool) {
    loop {
        {
            let mut ready = lock(pool);
            while ready.warm.len() >= pool.size {
                ready = pool
                    .taken
                    .wait(ready)
                    .unwrap_or_else(PoisonError::into_inner);
            }
        }
        let deadline = Instant::now() + REFILL_DELAY;
        let mut ready = lock(pool);
        while !pool.run_ended.swap(false, Ordering::AcqRel) {
            let Some(left) = deadline.checked_duration_since(Instant::now()) else {
                break;
            };
            ready = pool
                .taken
                .wait_timeout(ready, left)
                .unwrap_or_else(PoisonError::into_inner)
                .0;
        }
        let primed = next_primed(&ready, pool.size);
        drop(ready);
        match make(primed) {
            Ok(warm) => lock(pool).warm.push(warm),
            Err(e) => {
                tracing::warn!("could not make a warm sandbox: {e}");
                std::thread::sleep(RETRY_AFTER);
            }
        }
    }
}

/// What the next sandbox is primed with: the latest runs' namespaces, except that one sandbox
/// of a pool of two or more is made before any run, so that runs whose namespaces alternate (two
/// profiles' clients at once) still find a warm sandbox rather than start cold.
fn next_primed(ready: &Ready, size: usize) -> Option<Arc<Primed>> {
    let has_unprimed = ready.warm.iter().any(|w| w.primed.is_none());
    if size >= 2 && !has_unprimed {
        None
    } else {
        ready.latest.clone()
    }
}

type Made = Result<(mpsc::Sender<Task>, Option<Arc<Primed>>), String>;

/// Makes one warm sandbox on a thread of its own, primed with `primed` if it can be (else as
/// before any run); returns once it is ready.
fn make(primed: Option<Arc<Primed>>) -> Result<Warm, String> {
    let (ready_tx, ready_rx) = mpsc::channel::<Made>();
    std::thread::Builder::new()
        .name("capa-sandbox".into())
        .stack_size(warm_stack())
        .spawn(move || {
            // A catalog too big to define within the default limits is defined by its run.
            let made = Sandbox::primed(primed.clone())
                .map(|sandbox| (sandbox, primed))
                .or_else(|_| Sandbox::new().map(|sandbox| (sandbox, None)));
            let (sandbox, primed) = match made {
                Ok(made) => made,
                Err(e) => {
                    let _ = ready_tx.send(Err(e.to_string()));
                    return;
                }
            };
            let (tasks, inbox) = mpsc::channel();
            if ready_tx.send(Ok((tasks, primed))).is_err() {
                sandbox.free();
                return;
            }
            // Parked until taken, or let go (its sender dropped) when its namespaces are no
            // longer the runs'.
            match inbox.recv() {
                Ok(task) => {
                    serve(task, Ok(sandbox));
                    if let Some(pool) = POOL.get() {
                        pool.run_ended.store(true, Ordering::Release);
                        pool.taken.notify_all();
                    }
                }
                Err(_) => sandbox.free(),
            }
        })
        .map_err(|e| e.to_string())?;
    let (tasks, primed) = ready_rx
        .recv()
        .map_err(|_| "the thread stopped while making its sandbox".to_string())??;
    Ok(Warm { tasks, primed })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pool_is_sized_by_cores_within_bounds() {
        assert!((1..=MAX_WARM).contains(&size()));
    }

    /// A new list each call: equal lists of separate calls are told apart by content.
    fn namespaces(global: &str) -> Arc<[Namespace]> {
        Arc::from(vec![Namespace {
            global: global.into(),
            tools: Vec::new(),
            unlisted_source: None,
        }])
    }

    fn warm(primed: Option<&Arc<Primed>>) -> Warm {
        Warm {
            tasks: mpsc::channel().0,
            primed: primed.cloned(),
        }
    }

    #[test]
    fn a_run_takes_a_sandbox_primed_with_its_namespaces_first() {
        let mut ready = Ready::default();
        ready.warm.push(warm(None));
        // The first run: nothing was primed yet; the next sandboxes are made with its namespaces.
        let taken = ready.take_for(&namespaces("a")).map(|w| w.primed.is_none());
        assert_eq!(taken, Some(true));
        let latest = ready.latest.clone();
        assert!(latest.as_ref().is_some_and(|p| p.serves(&namespaces("a"))));
        ready.warm.push(warm(None));
        ready.warm.push(warm(latest.as_ref()));
        let taken = ready.take_for(&namespaces("a"));
        assert!(taken.is_some_and(|w| w.primed.is_some()));
        // The same namespaces keep the one remembered.
        assert!(matches!((&ready.latest, &latest), (Some(a), Some(b)) if Arc::ptr_eq(a, b)));
        assert_eq!(ready.warm.len(), 1);
    }

    #[test]
    fn other_namespaces_let_the_primed_sandboxes_go_and_take_an_unprimed_one() {
        let mut ready = Ready::default();
        let _ = ready.take_for(&namespaces("a"));
        let old = ready.latest.clone();
        ready.warm.push(warm(old.as_ref()));
        ready.warm.push(warm(old.as_ref()));
        assert!(ready.take_for(&namespaces("b")).is_none());
        assert!(ready.warm.is_empty(), "sandboxes primed for `a` let go");
        assert!(
            ready
                .latest
                .as_ref()
                .is_some_and(|p| p.serves(&namespaces("b")))
        );
        ready.warm.push(warm(old.as_ref()));
        ready.warm.push(warm(None));
        let taken = ready.take_for(&namespaces("b"));
        assert!(taken.is_some_and(|w| w.primed.is_none()));
        assert!(ready.warm.is_empty());
    }

    #[test]
    fn a_pool_of_two_or_more_keeps_one_sandbox_made_before_any_run() {
        let mut ready = Ready::default();
        let _ = ready.take_for(&namespaces("a"));
        assert!(next_primed(&ready, 2).is_none(), "none unprimed: make one");
        ready.warm.push(warm(None));
        assert!(next_primed(&ready, 2).is_some_and(|p| p.serves(&namespaces("a"))));
        ready.warm.clear();
        assert!(next_primed(&ready, 1).is_some(), "a pool of one is primed");
        // Namespaces that alternate find the unprimed sandbox warm.
        let latest = ready.latest.clone();
        ready.warm.push(warm(latest.as_ref()));
        ready.warm.push(warm(None));
        assert!(
            ready
                .take_for(&namespaces("b"))
                .is_some_and(|w| w.primed.is_none())
        );
    }

    #[test]
    fn a_run_needing_more_stack_than_a_warm_thread_has_starts_cold() {
        assert!(fits_warm(stack_for(&Limits::default())));
        assert!(!fits_warm(warm_stack() + 1));
    }
}
