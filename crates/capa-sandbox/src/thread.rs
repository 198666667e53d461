//! A run's thread: what it is handed, how it answers, and the stack it needs.
//!
//! QuickJS's handles are not `Send`, so a sandbox lives and dies on the thread that made it:
//! either the run's own thread (a cold start) or a warm thread of the pool (`pool.rs`). Both
//! answer through [`serve`], which frees the sandbox only after the output went out.

use std::time::Duration;

use crate::engine::{self, Job};
use crate::sandbox::Sandbox;
use crate::{Limits, RunOutput};

/// Extra stack for the sandbox thread beyond the guest's `stack_bytes`: Rust frames, and the C
/// code QuickJS runs between its stack checks.
const THREAD_STACK_HEADROOM: usize = 8 * 1024 * 1024;
/// How long past `wall_ms` `run` waits for the sandbox thread to report before giving up on it.
pub(crate) const WALL_GRACE: Duration = Duration::from_secs(2);

/// The stack of a thread that runs a guest with `limits`.
pub(crate) fn stack_for(limits: &Limits) -> usize {
    limits.stack_bytes + THREAD_STACK_HEADROOM
}

/// One run, and where its output goes.
pub(crate) struct Task {
    pub(crate) job: Job,
    pub(crate) done: tokio::sync::oneshot::Sender<RunOutput>,
}

/// Runs `task` in `sandbox` on this thread, sends the output, then frees the sandbox (freeing a
/// runtime takes a while; the caller need not wait for it).
pub(crate) fn serve(task: Task, sandbox: rquickjs::Result<Sandbox>) {
    let Task { job, done } = task;
    let out = match &sandbox {
        Ok(sandbox) => std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            engine::execute(job, sandbox)
        }))
        .unwrap_or_else(|_| RunOutput::failed("internal", "the sandbox failed unexpectedly", None)),
        Err(e) => RunOutput::failed("internal", format!("sandbox error: {e}"), None),
    };
    let _ = done.send(out);
    if let Ok(sandbox) = sandbox {
        sandbox.free();
    }
}

/// Starts `task` on a new thread with a cold sandbox made there.
pub(crate) fn spawn_cold(task: Task, stack: usize) -> std::io::Result<()> {
    std::thread::Builder::new()
        .name("capa-sandbox".into())
        .stack_size(stack)
        .spawn(move || serve(task, Sandbox::new()))
        .map(drop)
}
