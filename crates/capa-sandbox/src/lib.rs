//! The QuickJS sandbox behind code mode's `execute`.
//!
//! [`run`] takes plain JavaScript (the body of an async function, TypeScript already stripped by
//! the code pipeline), the run's namespaces, seed and limits, and a [`Host`] through which tool
//! calls and hub lookups go. It returns a [`RunOutput`] shaped like the `execute` envelope's
//! `status`, `result`, `error`, `logs`, `calls`, `truncated` and `notices`.
//!
//! Where it sits: the hub's runner (code pipeline → this sandbox → tool calls → journal) owns run
//! ids, the journal and replay; its `Host` implementation answers calls through the catalog,
//! connections and policy. This crate knows none of that, and is the only one that links QuickJS.
//!
//! How a run works (details in `engine.rs`, `state.rs`, `output.rs` and `prelude/`):
//! - Each run gets a fresh QuickJS runtime and context on a thread of its own: guest code never
//!   blocks a tokio worker, and QuickJS's non-`Send` handles never cross threads. Usually they
//!   were made ahead, in the pool (below).
//! - The guest prelude (`prelude/`, one file per job, joined by `prelude.rs`) defines the
//!   namespaces, `hub`, `ToolError`, `console`, the logical clock, seeded randomness, timers and
//!   the small web APIs, and removes `eval` and the Function constructors.
//! - The sandbox drives its own event loop: microtasks, then the next tool result *in issue
//!   order*, then the next timer on the logical clock. The order in which the guest sees anything
//!   depends only on its code, seed and tool results — never on network timing — so a replay
//!   reproduces a run exactly.
//! - Guest time is measured only while the guest runs (`compute_ms`); the wall clock bounds the
//!   whole run (`wall_ms`), waiting included.
//!
//! The pool (`pool.rs`, `sandbox.rs`): a cold start (a thread, a runtime, a context, and
//! loading and running the ~1,100-line prelude, whose bytecode is compiled once per process)
//! costs most of a millisecond, several times a small run. So a few sandboxes are kept warm:
//! each a parked thread whose runtime and context exist and whose prelude was loaded and called
//! with nothing of any run (`prelude::prepare`). A run
//! takes one and sets everything of its own when it starts: its limits, meter, interrupt
//! handler and out-of-memory watch on the runtime, its host functions on the prelude's host
//! object, and its namespaces, seed and clock through the prelude's `configure`; a sandbox made
//! after a run has that run's namespaces defined already, and a run with the same ones (every
//! run until the hub's catalog changes) skips that step (`primed.rs`). Nothing of one
//! run reaches another: a warm sandbox serves exactly one run and is then freed, never reused.
//! A cold start makes its sandbox the same way on the spot, so pooled and unpooled runs give
//! the same output. There is one warm sandbox per core (at least one, at most four); a
//! background thread makes a new one once the run that took one has ended (at most 20 ms after
//! the take), so a run never waits for one to be made: when none is ready (a burst) it starts
//! cold. The pool starts on the first run,
//! or earlier with [`prewarm`]; [`run_unpooled`] always starts cold.

mod awaiting;
mod engine;
mod events;
mod guest_code;
mod host_object;
mod limits;
mod logs;
mod lookups;
mod meter;
mod oom;
mod output;
mod pool;
mod prelude;
mod primed;
mod run_tools;
mod sandbox;
mod state;
mod thread;
mod thrown;
mod types;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::time::{Duration, Instant};

pub use tokio_util::sync::CancellationToken;

pub use limits::Limits;
/// How a run fits its result into `inline_result_bytes`, also used by the hub for direct calls.
pub use output::{human_bytes, shrink};
pub use types::{
    CallStop, CallSummary, Host, HostCall, KEPT_LOG_BYTES, Namespace, RunError, RunInput,
    RunOutput, RunStatus, ToolBinding, ToolFailure, Truncated, Whole,
};

use thread::WALL_GRACE;

/// Sets the cancel flag and wakes the sandbox thread when `run` ends or is dropped.
struct CancelOnDrop {
    cancel: Arc<AtomicBool>,
    events: mpsc::Sender<events::Event>,
}

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        self.cancel.store(true, Ordering::Relaxed);
        let _ = self.events.send(events::Event::Cancel);
    }
}

/// Fits a run's result and logs into `inline_result_bytes` again, counted as the envelope
/// serialises them, for a host that changed them after the run (redaction can make text
/// longer). Returns the lines kept, what was shortened (nothing when they fit) and the notices
/// saying so.
pub fn fit_inline(
    result: &mut Option<serde_json::Value>,
    logs: Vec<String>,
    inline_result_bytes: usize,
) -> (Vec<String>, Truncated, Vec<String>) {
    let limits = Limits {
        inline_result_bytes,
        ..Limits::default()
    }
    .effective();
    let mut held = logs::Logs::with_cap(limits.inline_result_bytes);
    for line in logs {
        if !held.push(line) {
            break;
        }
    }
    let fitted = output::fit(result, held, &limits, false);
    (fitted.lines, fitted.truncated, fitted.notices)
}

/// Starts the pool of warm sandboxes now rather than at the first run (the hub calls it when it
/// starts), so that the first runs find sandboxes ready. Returns at once; they are made in the
/// background.
pub fn prewarm() {
    pool::start();
}

/// How many warm sandboxes are ready to be taken now (starting the pool if it is not running).
/// For tests and diagnostics.
pub fn prewarmed() -> usize {
    pool::ready()
}

/// Where a run's sandbox comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Start {
    /// A warm sandbox of the pool when one is ready, else cold.
    Pooled,
    /// Always a fresh thread and sandbox, made when the run starts.
    Cold,
}

/// Run one attempt of model-written code. Never panics; returns within `wall_ms` (plus a short
/// grace) whatever the guest does. Must be called from within a tokio runtime with its time
/// driver enabled (any flavour): host calls are spawned onto it. Dropping the future cancels the
/// run.
pub async fn run(input: RunInput, host: Arc<dyn Host>) -> RunOutput {
    run_cancellable(input, host, CancellationToken::new()).await
}

/// [`run`] without the pool: always a cold start (a new thread, runtime and context, and the
/// prelude compiled and run), as before the pool. For benchmarks comparing the two.
pub async fn run_unpooled(input: RunInput, host: Arc<dyn Host>) -> RunOutput {
    guarded(run_inner(
        input,
        host,
        CancellationToken::new(),
        Start::Cold,
    ))
    .await
}

/// [`run`], ended early when `cancel` fires (the client cancelled or went away): queued calls
/// never start, calls in flight are cancelled, the guest stops, and the output says
/// [`RunStatus::Cancelled`] with the calls made until then.
pub async fn run_cancellable(
    input: RunInput,
    host: Arc<dyn Host>,
    cancel: CancellationToken,
) -> RunOutput {
    guarded(run_inner(input, host, cancel, Start::Pooled)).await
}

/// `run` as a failed output when it panics.
async fn guarded(run: impl Future<Output = RunOutput>) -> RunOutput {
    use futures::FutureExt;
    std::panic::AssertUnwindSafe(run)
        .catch_unwind()
        .await
        .unwrap_or_else(|_| RunOutput::failed("internal", "the sandbox failed unexpectedly", None))
}

async fn run_inner(
    input: RunInput,
    host: Arc<dyn Host>,
    token: CancellationToken,
    start: Start,
) -> RunOutput {
    let started = Instant::now();
    let limits = input.limits.effective();
    if input.code.len() > limits.code_bytes {
        return RunOutput::failed(
            "code_too_large",
            format!(
                "the code is {} bytes; the limit is {} bytes",
                input.code.len(),
                limits.code_bytes
            ),
            Some("Send less code: fetch and filter data in code rather than pasting it.".into()),
        );
    }
    let Ok(handle) = tokio::runtime::Handle::try_current() else {
        return RunOutput::failed("internal", "run() was called outside a tokio runtime", None);
    };
    let (tx, rx) = mpsc::channel();
    let cancel = Arc::new(AtomicBool::new(false));
    let guard = CancelOnDrop {
        cancel: Arc::clone(&cancel),
        events: tx.clone(),
    };
    let (done_tx, done_rx) = tokio::sync::oneshot::channel();
    let wall = Duration::from_millis(limits.wall_ms);
    let stack = thread::stack_for(&limits);
    let job = engine::Job {
        input,
        limits,
        host,
        handle,
        events: (tx, rx),
        cancel,
        started,
    };
    let task = thread::Task { job, done: done_tx };
    let cold = match start {
        Start::Pooled => pool::offer(task, stack),
        Start::Cold => Some(task),
    };
    if let Some(task) = cold
        && let Err(e) = thread::spawn_cold(task, stack)
    {
        return RunOutput::failed(
            "internal",
            format!("could not start the sandbox: {e}"),
            None,
        );
    }
    let mut done_rx = done_rx;
    let limit = (wall + WALL_GRACE).saturating_sub(started.elapsed());
    let finished = tokio::select! {
        finished = tokio::time::timeout(limit, &mut done_rx) => finished,
        () = token.cancelled() => {
            // Stop the guest and everything queued, then take its report (the calls made so
            // far) within the grace.
            drop(guard);
            tokio::time::timeout(WALL_GRACE, &mut done_rx).await
        }
    };
    match finished {
        Ok(Ok(out)) => out,
        Ok(Err(_)) => RunOutput::failed("internal", "the sandbox stopped without a result", None),
        Err(_) => {
            tracing::warn!("sandbox thread did not stop by the wall limit; abandoning it");
            RunOutput::failed(
                "wall_limit",
                format!("the run took longer than {} ms", wall.as_millis()),
                None,
            )
        }
    }
}
