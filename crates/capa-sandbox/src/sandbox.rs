//! One QuickJS runtime and context for one run, and what a run sets on them when it starts.
//!
//! A sandbox is made either cold, on the run's own thread when the run starts, or warm, ahead of
//! time on a thread of the pool (`pool.rs`), with the prelude's function already compiled. Only
//! things no run can see or change are made ahead: the runtime, the context and the prelude's
//! compiled (not yet called) function. Everything of the run (its limits, meter, out-of-memory
//! watch, host functions and configuration) is set by [`Sandbox::limit`] and the prelude's call
//! when the run starts. A sandbox serves one run and is then dropped.

use std::cell::Cell;
use std::rc::Rc;

use rquickjs::context::intrinsic;
use rquickjs::{Context, Ctx, Function, Persistent, Runtime};

use crate::Limits;
use crate::meter::Meter;
use crate::oom::Watch;

/// A runtime and its one context, plus the prelude's function when compiled ahead.
pub(crate) struct Sandbox {
    // Fields drop in this order: the handle into the runtime before the context and runtime.
    prelude: Cell<Option<Persistent<Function<'static>>>>,
    pub(crate) ctx: Context,
    pub(crate) rt: Runtime,
}

impl Sandbox {
    /// A fresh runtime and context; the prelude is compiled when the run installs it.
    pub(crate) fn cold() -> rquickjs::Result<Sandbox> {
        let rt = Runtime::new()?;
        let ctx = context(&rt)?;
        Ok(Sandbox {
            prelude: Cell::new(None),
            ctx,
            rt,
        })
    }

    /// A fresh runtime and context with the prelude's function compiled (not called: calling it
    /// captures the run's host functions and configuration). Under the default limits until a
    /// run sets its own.
    pub(crate) fn warm() -> rquickjs::Result<Sandbox> {
        let sandbox = Sandbox::cold()?;
        let limits = Limits::default();
        sandbox.rt.set_memory_limit(limits.memory_bytes);
        sandbox.rt.set_max_stack_size(limits.stack_bytes);
        let prelude = sandbox.ctx.with(|ctx| -> rquickjs::Result<_> {
            let f = crate::prelude::compile(&ctx)?;
            Ok(Persistent::save(&ctx, f))
        })?;
        sandbox.prelude.set(Some(prelude));
        Ok(sandbox)
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

    /// The prelude's function compiled ahead, once (`None` for a cold sandbox, or when taken).
    pub(crate) fn take_prelude<'js>(&self, ctx: &Ctx<'js>) -> Option<Function<'js>> {
        self.prelude.take().and_then(|p| p.restore(ctx).ok())
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
