//! Out-of-memory that QuickJS would otherwise lose.
//!
//! An allocation that fails while the guest runs throws `InternalError: out of memory`, or
//! `null` when even that error cannot be built. Thrown in ordinary code, it reaches the run's
//! end like any error. Inside promise jobs it can vanish:
//! - a handler that runs out of memory rejects its derived promise, which nobody may handle: the
//!   error sits in an unhandled rejection and the run ends as `never_settled`, or even completes;
//! - a job that cannot be queued (`JS_EnqueueJob` out of memory) is dropped, and its error is
//!   left pending on the runtime while the job reports success.
//!
//! [`Watch`] sees both: the host promise rejection tracker records unhandled rejections whose
//! reason may be an out-of-memory, and the driver checks for a pending exception after every job.
//!
//! A thrown `null` is the engine's out-of-memory only when memory was short: when the tracker or
//! the driver first sees it, a 64 KiB probe allocation must fail (the heap is still full: the
//! data that filled it is alive), or an out-of-memory was already seen in this run. Otherwise it
//! is the guest's own `throw null`, reported like any thrown value.

use std::cell::{Cell, RefCell};
use std::rc::Rc;

use rquickjs::{Ctx, Object, Persistent, Runtime, Value};

/// Heap left below which a thrown `null` counts as out of memory. An engine `null` means not even
/// an error object (about 200 bytes) fitted; what unwinding freed since is small next to this.
const PROBE_BYTES: usize = 64 * 1024;
/// Unhandled rejections kept for a look at the next checkpoint. A guest that leaves more
/// unhandled at once only hides later ones from this watch; they are still its own errors.
const MAX_CANDIDATES: usize = 64;

/// An unhandled rejection whose reason may be an out-of-memory.
struct Candidate {
    promise: Persistent<Value<'static>>,
    /// `None`: the reason was `null`.
    reason: Option<Persistent<Value<'static>>>,
}

#[derive(Default)]
struct Inner {
    /// The promise of the guest's main function, left without handlers until it settles so that
    /// its rejection reaches the tracker while the function's frame (and its data) is alive.
    main: Option<Persistent<Value<'static>>>,
    candidates: Vec<Candidate>,
    /// `InternalError.prototype`, taken before the guest runs: engine out-of-memory errors are
    /// made with it.
    internal_error: Option<Persistent<Object<'static>>>,
}

/// What the run has seen of out-of-memory. Shared between the driver and the rejection tracker;
/// the tracker never runs guest code and never holds the borrow across a call into QuickJS.
pub(crate) struct Watch {
    inner: RefCell<Inner>,
    /// An out-of-memory was seen in this run: an `InternalError: out of memory`, or a `null`
    /// thrown while the heap was full.
    seen: Cell<bool>,
}

impl Watch {
    pub(crate) fn new() -> Rc<Self> {
        Rc::new(Watch {
            inner: RefCell::new(Inner::default()),
            seen: Cell::new(false),
        })
    }

    /// Installs the rejection tracker on `rt`.
    pub(crate) fn install(self: &Rc<Self>, rt: &Runtime) {
        let watch = Rc::clone(self);
        rt.set_host_promise_rejection_tracker(Some(Box::new(
            move |ctx: Ctx<'_>, promise: Value<'_>, reason: Value<'_>, handled: bool| {
                watch.track(&ctx, promise, reason, handled);
            },
        )));
    }

    /// Takes `InternalError.prototype` from a context the guest has not touched yet.
    pub(crate) fn remember_internal_error(&self, ctx: &Ctx<'_>) -> rquickjs::Result<()> {
        let ctor: Object = ctx.globals().get("InternalError")?;
        let proto: Object = ctor.get("prototype")?;
        self.inner.borrow_mut().internal_error = Some(Persistent::save(ctx, proto));
        Ok(())
    }

    pub(crate) fn set_main<'js>(&self, ctx: &Ctx<'js>, promise: Value<'js>) {
        self.inner.borrow_mut().main = Some(Persistent::save(ctx, promise));
    }

    /// The main promise once it settled (then forgotten here: the caller attaches its
    /// handlers); `None` while it is pending or after it was handed out.
    pub(crate) fn settled_main<'js>(&self, ctx: &Ctx<'js>) -> Option<rquickjs::Promise<'js>> {
        let main = self.inner.borrow().main.clone()?;
        let value = main.restore(ctx).ok()?;
        let promise = value.into_promise()?;
        if promise.state() == rquickjs::promise::PromiseState::Pending {
            return None;
        }
        self.inner.borrow_mut().main = None;
        Some(promise)
    }

    /// Whether an out-of-memory was seen in this run.
    pub(crate) fn seen(&self) -> bool {
        self.seen.get()
    }

    fn track<'js>(&self, ctx: &Ctx<'js>, promise: Value<'js>, reason: Value<'js>, handled: bool) {
        if handled {
            let Ok(mut inner) = self.inner.try_borrow_mut() else {
                return;
            };
            inner.candidates.retain(|c| {
                c.promise
                    .clone()
                    .restore(ctx)
                    .map_or(true, |p| p != promise)
            });
            return;
        }
        // Judged now, while whatever filled the heap is still reachable.
        if reason.is_null() && heap_full(ctx) {
            self.seen.set(true);
        }
        let Ok(mut inner) = self.inner.try_borrow_mut() else {
            return;
        };
        let is_main = inner
            .main
            .clone()
            .and_then(|m| m.restore(ctx).ok())
            .is_some_and(|m| m == promise);
        if is_main || inner.candidates.len() >= MAX_CANDIDATES {
            return;
        }
        let reason = if reason.is_null() {
            None
        } else {
            let internal = inner.internal_error.clone();
            if !is_internal_error(ctx, internal, &reason) {
                return;
            }
            Some(Persistent::save(ctx, reason))
        };
        inner.candidates.push(Candidate {
            promise: Persistent::save(ctx, promise),
            reason,
        });
    }

    /// At a checkpoint (no job left, or the run ending): whether an out-of-memory sits in a
    /// rejection nobody handled. The candidates are forgotten either way: a rejection still
    /// unhandled now that is not an out-of-memory is the guest's own business.
    pub(crate) fn unhandled_oom(&self, ctx: &Ctx<'_>) -> bool {
        let candidates = std::mem::take(&mut self.inner.borrow_mut().candidates);
        let mut oom = false;
        for c in candidates {
            oom |= match c.reason {
                None => self.seen.get(),
                Some(reason) => reason
                    .restore(ctx)
                    .is_ok_and(|r| self.is_oom_error(ctx, &r)),
            };
        }
        if oom {
            self.seen.set(true);
        }
        oom
    }

    /// An exception QuickJS left pending after a job or call that reported success: the error
    /// of a job it could not queue. True when that was an out-of-memory. Guest code cannot
    /// leave one (its throws fail the job or are caught, which takes them), so a pending `null`
    /// is the engine's, however much memory the dropped work freed since.
    pub(crate) fn dropped_oom(&self, ctx: &Ctx<'_>) -> bool {
        if !ctx.has_exception() {
            return false;
        }
        let v = ctx.catch();
        let oom = v.is_null() || self.is_oom_error(ctx, &v);
        if oom {
            self.seen.set(true);
        }
        oom
    }

    /// An `InternalError` whose message is an out-of-memory. The engine's errors hold `message`
    /// as plain data; a getter the guest put on an error of its own runs here, so call this
    /// only while the guest's time is metered.
    fn is_oom_error<'js>(&self, ctx: &Ctx<'js>, v: &Value<'js>) -> bool {
        let internal = self.inner.borrow().internal_error.clone();
        is_internal_error(ctx, internal, v)
            && v.as_object()
                .and_then(|o| o.get::<_, Option<String>>("message").ok().flatten())
                .is_some_and(|m| is_oom_message(&m))
    }

    /// Drops every handle into the runtime (before it is freed).
    pub(crate) fn clear(&self) {
        let mut inner = self.inner.borrow_mut();
        inner.main = None;
        inner.candidates.clear();
        inner.internal_error = None;
    }
}

/// `message` as an out-of-memory: QuickJS's own, or its string length cap (reached before the
/// heap limit when strings are built as ropes: the same bomb).
fn is_oom_message(message: &str) -> bool {
    message.starts_with("out of memory") || message == "string too long"
}

/// An error object made with `InternalError.prototype` (as the engine's out-of-memory errors
/// are). Reading an error object's prototype runs no guest code.
fn is_internal_error<'js>(
    ctx: &Ctx<'js>,
    internal: Option<Persistent<Object<'static>>>,
    v: &Value<'js>,
) -> bool {
    let Some(internal) = internal.and_then(|p| p.restore(ctx).ok()) else {
        return false;
    };
    v.is_error()
        && v.as_object()
            .and_then(Object::get_prototype)
            .is_some_and(|p| p == internal)
}

/// Whether the heap has less than [`PROBE_BYTES`] left. Allocates and frees that much.
pub(crate) fn heap_full(ctx: &Ctx<'_>) -> bool {
    // Made here, not with the watch: it is needed only when a run throws, and writing 64 KiB
    // at every run's start took tens of microseconds of a cold thread's time.
    let probe = "x".repeat(PROBE_BYTES);
    if rquickjs::String::from_str(ctx.clone(), &probe).is_ok() {
        false
    } else {
        // The probe's own out-of-memory error; nothing else was pending.
        let _ = ctx.catch();
        true
    }
}
