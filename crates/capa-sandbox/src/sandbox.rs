//! One QuickJS runtime and context for one run, and what a run sets on them when it starts.
//!
//! A sandbox is made the same way whether cold (on the run's own thread when the run starts) or
//! warm (ahead of time on a thread of the pool, `pool.rs`): a runtime, a context, and the
//! prelude loaded (from bytecode compiled once per process) and called with nothing of any run
//! (`prelude::prepare`). What is the run's
//! own (its limits, meter, out-of-memory watch, host functions, namespaces, seed and clock) is
//! set by [`Sandbox::limit`] and `prelude::install` when the run starts, except the namespaces
//! of a primed warm sandbox (`primed.rs`), defined ahead. A sandbox serves one run and is then
//! freed.

use std::cell::Cell;
use std::rc::Rc;
use std::sync::Arc;

use rquickjs::context::intrinsic;
use rquickjs::{Context, Runtime};

use crate::Limits;
use crate::meter::Meter;
use crate::oom::Watch;
use crate::prelude::Prepared;
use crate::primed::Primed;

/// A runtime and its one context, with the prelude prepared.
pub(crate) struct Sandbox {
    // Fields drop in this order: the handles into the runtime before the context and runtime.
    prepared: Cell<Option<Prepared>>,
    /// The namespaces defined already, if the sandbox was primed (`primed.rs`): only a run
    /// with exactly these may take it.
    primed: Option<Arc<Primed>>,
    ctx: Context,
    rt: Runtime,
}

impl Sandbox {
    /// A fresh runtime and context with the prelude prepared, under the default limits until a
    /// run sets its own.
    pub(crate) fn new() -> rquickjs::Result<Sandbox> {
        Self::primed(None)
    }

    /// [`Sandbox::new`], with `primed`'s namespaces defined too when given.
    pub(crate) fn primed(primed: Option<Arc<Primed>>) -> rquickjs::Result<Sandbox> {
        let rt = Runtime::new()?;
        let limits = Limits::default();
        rt.set_memory_limit(limits.memory_bytes);
        rt.set_max_stack_size(limits.stack_bytes);
        let ctx = context(&rt)?;
        let prepared = ctx.with(|ctx| -> rquickjs::Result<Prepared> {
            let prepared = crate::prelude::prepare(&ctx)?;
            if let Some(primed) = &primed {
                crate::prelude::prime(&ctx, &prepared, &primed.namespaces)?;
            }
            Ok(prepared)
        })?;
        Ok(Sandbox {
            prepared: Cell::new(Some(prepared)),
            primed,
            ctx,
            rt,
        })
    }

    /// The namespaces this sandbox has defined already, if it was primed.
    pub(crate) fn primed_with(&self) -> Option<&Arc<Primed>> {
        self.primed.as_ref()
    }

    pub(crate) fn rt(&self) -> &Runtime {
        &self.rt
    }

    pub(crate) fn ctx(&self) -> &Context {
        &self.ctx
    }

    /// Sets the run's limits and handlers on the runtime: nothing of them exists before.
    pub(crate) fn limit(&self, limits: &Limits, meter: &Rc<Meter>, watch: &Rc<Watch>) {
        let rt = &self.rt;
        rt.set_memory_limit(limits.memory_bytes);
        rt.set_max_stack_size(limits.stack_bytes);
        rt.set_gc_threshold((limits.memory_bytes / 8).clamp(256 * 1024, 4 * 1024 * 1024));
        let meter = Rc::clone(meter);
        rt.set_interrupt_handler(Some(Box::new(move || meter.interrupt())));
        watch.install(rt);
    }

    /// The prepared prelude, once: a sandbox serves one run.
    pub(crate) fn take_prepared(&self) -> Option<Prepared> {
        self.prepared.take()
    }

    /// Frees the sandbox: first the cycles the GC can collect, then the runtime.
    pub(crate) fn free(self) {
        drop(self.prepared.take());
        self.rt.run_gc();
    }
}

/// No Performance (a real clock), no WeakRef/FinalizationRegistry (GC timing would leak into the
/// run): both would break determinism.
fn context(rt: &Runtime) -> rquickjs::Result<Context> {
    Context::builder()
        .with::<intrinsic::Date>()
        .with::<intrinsic::Eval>()
        .with::<intrinsic::RegExpCompiler>()
        .with::<intrinsic::RegExp>()
        .with::<intrinsic::Json>()
        .with::<intrinsic::Proxy>()
        .with::<intrinsic::MapSet>()
        .with::<intrinsic::TypedArrays>()
        .with::<intrinsic::Promise>()
        .with::<intrinsic::DOMException>()
        .build(rt)
}
