//! One run on its own thread, in a sandbox of its own (a fresh QuickJS runtime and context,
//! `sandbox.rs`): the prelude, the model's code, and the event loop that feeds it tool results in
//! issue order and fires its timers.
//!
//! The guest runs only inside `Meter::segment`; the time between segments (waiting for the host)
//! is never guest time. The interrupt handler compares the guest time used so far against
//! `compute_ms` and the clock against the wall deadline.

use std::cell::{Cell, RefCell};
use std::rc::Rc;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

use rquickjs::context::EvalOptions;
use rquickjs::{Context, Ctx, Function, Object, Persistent, Runtime, Value};

use crate::awaiting::Awaiting;
use crate::events::{Event, Stop};
use crate::guest_code::{CODE_FILE, wrapped};
use crate::meter::{CANCELLED, Meter, Trip};
use crate::oom::Watch;
use crate::sandbox::Sandbox;
use crate::state::{Finish, Next, State};
use crate::thrown::{ThrownRecord, caught, classify, memory_error};
use crate::{RunError, RunInput};

/// How the guest's main function ended.
pub(crate) enum Outcome {
    Value(Option<serde_json::Value>),
    Error(RunError),
    /// A call waits for a person.
    Suspended,
}

fn internal(message: impl std::fmt::Display) -> Outcome {
    Outcome::Error(RunError {
        code: "internal".into(),
        message: format!("sandbox error: {message}"),
        hint: None,
    })
}

struct Driver<'a> {
    meter: Rc<Meter>,
    state: Rc<RefCell<State>>,
    watch: Rc<Watch>,
    events: &'a Receiver<Event>,
    /// How the thread waits for the host's answers.
    awaiting: Awaiting,
    limits: &'a crate::Limits,
}

/// The prelude's functions Rust calls during the event loop.
struct Api {
    settle: Persistent<Function<'static>>,
    deliver: Persistent<Function<'static>>,
    fire_timer: Persistent<Function<'static>>,
}

impl Driver<'_> {
    /// The run error for the exception pending on `ctx`.
    fn thrown(&self, ctx: &Ctx<'_>, syntax: bool) -> RunError {
        let t = caught(ctx);
        // Judged before anything else allocates.
        let null_oom = t.is_null && (self.watch.seen() || crate::oom::heap_full(ctx));
        classify(t, syntax, null_oom)
    }

    /// The error for a failed engine call: a tripped limit first, else the exception.
    fn engine_error(&self, ctx: &Ctx<'_>, err: rquickjs::Error) -> Outcome {
        if let Some(e) = self.meter.error(self.limits) {
            let _ = ctx.catch();
            return Outcome::Error(e);
        }
        match err {
            rquickjs::Error::Exception => Outcome::Error(self.thrown(ctx, false)),
            rquickjs::Error::Allocation => Outcome::Error(memory_error()),
            other => internal(other),
        }
    }

    /// Run microtasks until none is left or the guest finished.
    fn run_jobs(&self, rt: &Runtime, ctx: &Context, api: &Api) -> Result<(), Outcome> {
        let mut n: u32 = 0;
        loop {
            if self.state.borrow().finish.is_some() {
                return Ok(());
            }
            match self.meter.segment(|| rt.execute_pending_job()) {
                Ok(true) => {
                    n = n.wrapping_add(1);
                    // Every 64 jobs, not every one: each check costs about as much as a small
                    // job. A storm still meets them many times a second.
                    if n.is_multiple_of(64) {
                        if self.meter.over() {
                            return Err(self.limit_error());
                        }
                        self.after_turn(ctx, api)?;
                    }
                }
                Ok(false) => {
                    // The main promise may have settled since the last check: its finish job
                    // comes next.
                    self.after_turn(ctx, api)?;
                    if rt.is_job_pending() {
                        continue;
                    }
                    return self.checkpoint(ctx);
                }
                Err(_) => {
                    if let Some(e) = self.meter.error(self.limits) {
                        return Err(Outcome::Error(e));
                    }
                    // Jobs fail only inside the engine: a handler's error rejects its promise,
                    // and the prelude's `queueMicrotask` ends the run with its callback's
                    // (clock.js). A `null` here is QuickJS's out-of-memory, even when the
                    // failed job freed what filled the heap.
                    let e = ctx.with(|ctx| {
                        let t = caught(&ctx);
                        let null_oom = t.is_null;
                        classify(t, false, null_oom)
                    });
                    return Err(Outcome::Error(e));
                }
            }
        }
    }

    /// After a job or a call into the guest: an out-of-memory QuickJS left pending (a job it
    /// could not queue), and the main promise once it settled.
    fn after_turn(&self, ctx: &Context, api: &Api) -> Result<(), Outcome> {
        self.meter.segment(|| {
            ctx.with(|ctx| {
                if self.watch.dropped_oom(&ctx) {
                    return Err(Outcome::Error(memory_error()));
                }
                if let Some(main) = self.watch.settled_main(&ctx) {
                    let settle = api.settle.clone().restore(&ctx).map_err(internal)?;
                    settle
                        .call::<_, ()>((main,))
                        .map_err(|e| self.engine_error(&ctx, e))?;
                }
                Ok(())
            })
        })
    }

    /// No job left: an out-of-memory that rejected a promise nobody handled ends the run.
    fn checkpoint(&self, ctx: &Context) -> Result<(), Outcome> {
        let oom = self
            .meter
            .segment(|| ctx.with(|ctx| self.watch.unhandled_oom(&ctx)));
        if oom {
            Err(Outcome::Error(memory_error()))
        } else {
            Ok(())
        }
    }

    /// The run ends: an out-of-memory left in an unhandled rejection is why, whatever else
    /// stopped it (a storm that spun on at a full heap until the compute limit, a run that
    /// never settled or completed without the lost work). A person's stop stays as it is.
    fn final_outcome(&self, ctx: &Context, outcome: Outcome) -> Outcome {
        let keep = match &outcome {
            Outcome::Suspended => true,
            Outcome::Error(e) => e.code == CANCELLED || e.code == "memory_limit",
            Outcome::Value(_) => false,
        };
        if keep || self.meter.tripped.get() == Some(Trip::Stopped) {
            return outcome;
        }
        match self.checkpoint(ctx) {
            Err(oom) => oom,
            Ok(()) => outcome,
        }
    }

    fn limit_error(&self) -> Outcome {
        if self.meter.tripped.get() == Some(Trip::Stopped) {
            return match self.state.borrow().stop.clone() {
                Some(Stop::Abort(error)) => Outcome::Error(error),
                Some(Stop::Suspend) => Outcome::Suspended,
                None => internal("a stop without a reason"),
            };
        }
        match self.meter.error(self.limits) {
            Some(e) => Outcome::Error(e),
            None => internal("limit check without a tripped limit"),
        }
    }

    /// Block until an operation finishes (or the wall deadline, or cancellation).
    fn wait(&self) -> Result<(), Outcome> {
        // Calls that answer without waiting are answered here, their events queued already.
        self.state.borrow_mut().drive_started();
        let deadline = self.meter.wall_deadline;
        if deadline <= Instant::now() {
            self.meter.trip(Trip::Wall);
            return Err(self.limit_error());
        }
        // Timers alone (no call out) are not worth a spin.
        let calls_out = self.state.borrow().in_flight() > 0;
        match self.awaiting.next_event(self.events, deadline, calls_out) {
            Ok(event) => {
                self.apply(event);
                // Take whatever else already arrived, so freed slots are refilled at once.
                while let Ok(event) = self.events.try_recv() {
                    self.apply(event);
                }
                if self.meter.tripped.get().is_some() {
                    return Err(self.limit_error());
                }
                Ok(())
            }
            Err(RecvTimeoutError::Timeout) => {
                self.meter.trip(Trip::Wall);
                Err(self.limit_error())
            }
            Err(RecvTimeoutError::Disconnected) => Err(internal("event channel closed")),
        }
    }

    fn apply(&self, event: Event) {
        match event {
            Event::Done {
                seq,
                ok,
                payload,
                ms,
            } => self.state.borrow_mut().complete(seq, ok, payload, ms),
            Event::Stop { seq, stop, ms } => {
                self.state.borrow_mut().stopped(seq, stop, ms);
                self.meter.trip(Trip::Stopped);
            }
            Event::Cancel => {
                self.meter.trip(Trip::Cancelled);
                // Queued calls never start once the run is cancelled.
                self.state.borrow_mut().cancel_queued();
            }
        }
    }

    /// After a suspension, lets the calls already in flight finish (so that their answers are
    /// journaled and other calls that need a person are recorded too), within the wall limit.
    /// An abort that arrives meanwhile still wins.
    fn settle_in_flight(&self) -> Outcome {
        while self.state.borrow().in_flight() > 0 {
            self.state.borrow_mut().drive_started();
            let Some(left) = self
                .meter
                .wall_deadline
                .checked_duration_since(Instant::now())
            else {
                break;
            };
            match self.events.recv_timeout(left) {
                Ok(Event::Cancel) | Err(_) => break,
                Ok(event) => self.apply(event),
            }
        }
        match self.state.borrow().stop.clone() {
            Some(Stop::Abort(error)) => Outcome::Error(error),
            _ => Outcome::Suspended,
        }
    }

    fn finish_outcome(&self, finish: Finish) -> Outcome {
        match finish {
            Finish::Undefined => Outcome::Value(None),
            Finish::Value(json) => match serde_json::from_str(&json) {
                Ok(v) => Outcome::Value(Some(v)),
                Err(e) => Outcome::Error(RunError {
                    code: "result_not_json".into(),
                    message: format!("the result could not be read as JSON: {e}"),
                    hint: Some("Return plain data nested at most 128 levels deep.".into()),
                }),
            },
            Finish::NotJson(reason) => Outcome::Error(RunError {
                code: "result_not_json".into(),
                message: format!("the result is not JSON: {reason}"),
                hint: Some(
                    "Return plain data: objects, arrays, strings, numbers, booleans, null.".into(),
                ),
            }),
            Finish::Error { record, heap_full } => {
                let t: ThrownRecord =
                    serde_json::from_str(&record).unwrap_or_else(|_| ThrownRecord {
                        message: "the code threw a value that could not be described".into(),
                        ..ThrownRecord::default()
                    });
                let null_oom = t.is_null && (heap_full || self.watch.seen());
                Outcome::Error(classify(t, false, null_oom))
            }
        }
    }

    fn drive(&self, sandbox: &Sandbox, input: &RunInput) -> Outcome {
        sandbox.limit(self.limits, &self.meter, &self.watch);
        let (rt, ctx) = (sandbox.rt(), sandbox.ctx());
        let outcome = self.run_in(rt, ctx, sandbox, input);
        let outcome = self.final_outcome(ctx, outcome);
        // Persistent handles are gone (run_in's locals) or go now (the watch's); the GC collects
        // cycles before the runtime is freed (`Sandbox::free`, after the output went out).
        self.watch.clear();
        outcome
    }

    fn run_in(&self, rt: &Runtime, ctx: &Context, sandbox: &Sandbox, input: &RunInput) -> Outcome {
        match self.start(ctx, sandbox, input) {
            Ok(api) => self.event_loop(rt, ctx, &api),
            Err(o) => o,
        }
    }

    /// Setup: prelude, then the code compiled as an async function, then started, and the jobs
    /// of that first turn run.
    fn start(&self, ctx: &Context, sandbox: &Sandbox, input: &RunInput) -> Result<Api, Outcome> {
        let api = self.meter.segment(|| {
            ctx.with(|ctx| -> Result<Persistent<Object<'static>>, Outcome> {
                let Some(prepared) = sandbox.take_prepared() else {
                    return Err(internal("the sandbox served a run already"));
                };
                let primed = sandbox.primed_with().is_some();
                crate::prelude::install(&ctx, prepared, input, primed, &self.state, &self.watch)
                    .map_err(|e| self.engine_error(&ctx, e))
            })
        })?;
        self.meter.segment(|| {
            ctx.with(|ctx| -> Result<(), Outcome> {
                let api = api.clone().restore(&ctx).map_err(internal)?;
                let source = wrapped(&input.code);
                let mut options = EvalOptions::default();
                options.global = true;
                options.strict = false;
                options.filename = Some(CODE_FILE.into());
                let main: Value = match ctx.eval_with_options(source, options) {
                    Ok(v) => v,
                    Err(rquickjs::Error::Exception) if self.meter.tripped.get().is_none() => {
                        return Err(Outcome::Error(self.thrown(&ctx, true)));
                    }
                    Err(e) => return Err(self.engine_error(&ctx, e)),
                };
                let start: Function = api.get("start").map_err(internal)?;
                let main = start
                    .call::<_, Value>((main,))
                    .map_err(|e| self.engine_error(&ctx, e))?;
                if main.is_promise() {
                    self.watch.set_main(&ctx, main);
                }
                Ok(())
            })
        })?;
        let api = ctx
            .with(|ctx| -> rquickjs::Result<_> {
                let api = api.clone().restore(&ctx)?;
                let function = |name: &str| -> rquickjs::Result<Persistent<Function<'static>>> {
                    Ok(Persistent::save(&ctx, api.get::<_, Function>(name)?))
                };
                Ok(Api {
                    settle: function("settle")?,
                    deliver: function("deliver")?,
                    fire_timer: function("fireTimer")?,
                })
            })
            .map_err(internal)?;
        self.after_turn(ctx, &api)?;
        Ok(api)
    }

    /// The event loop: jobs, then the next delivery, wait or timer, until the run finishes.
    fn event_loop(&self, rt: &Runtime, ctx: &Context, api: &Api) -> Outcome {
        loop {
            if let Err(o) = self.run_jobs(rt, ctx, api) {
                return o;
            }
            // A tripped limit wins over whatever the guest reported after it: some engine paths
            // (a thenable's job) turn the uncatchable interrupt into an ordinary rejection.
            if self.meter.tripped.get().is_some() {
                return self.limit_error();
            }
            if let Some(finish) = self.state.borrow_mut().finish.take() {
                return self.finish_outcome(finish);
            }
            if self.meter.over() {
                return self.limit_error();
            }
            let next = self.state.borrow_mut().next();
            match next {
                Next::Deliver { seq, ok, payload } => {
                    let r = self.meter.segment(|| {
                        ctx.with(|ctx| -> Result<(), Outcome> {
                            let f = api.deliver.clone().restore(&ctx).map_err(internal)?;
                            f.call::<_, ()>((seq as f64, ok, payload))
                                .map_err(|e| self.engine_error(&ctx, e))
                        })
                    });
                    if let Err(o) = r.and_then(|()| self.after_turn(ctx, api)) {
                        return o;
                    }
                }
                Next::Wait => {
                    if let Err(o) = self.wait() {
                        return o;
                    }
                }
                Next::Idle => {
                    let fired = self.meter.segment(|| {
                        ctx.with(|ctx| -> Result<bool, Outcome> {
                            let f = api.fire_timer.clone().restore(&ctx).map_err(internal)?;
                            f.call::<_, bool>(())
                                .map_err(|e| self.engine_error(&ctx, e))
                        })
                    });
                    let fired = fired.and_then(|f| self.after_turn(ctx, api).map(|()| f));
                    match fired {
                        Ok(true) => {}
                        Ok(false) => {
                            if self.state.borrow().finish.is_some() {
                                continue;
                            }
                            return Outcome::Error(RunError {
                                code: "never_settled".into(),
                                message: "the code is waiting for a promise that can never \
                                          settle: no tool call or timer is pending"
                                    .into(),
                                hint: Some(
                                    "Make sure every promise you await is resolved or rejected."
                                        .into(),
                                ),
                            });
                        }
                        Err(o) => return o,
                    }
                }
            }
        }
    }
}

/// Everything the sandbox thread needs.
pub(crate) struct Job {
    pub input: RunInput,
    pub limits: crate::Limits,
    pub host: Arc<dyn crate::Host>,
    pub handle: tokio::runtime::Handle,
    pub events: (std::sync::mpsc::Sender<Event>, Receiver<Event>),
    pub cancel: Arc<AtomicBool>,
    pub started: Instant,
}

/// Run one attempt to the end on the current thread, in `sandbox` (which it leaves to the caller
/// to free, after the output went out).
pub(crate) fn execute(job: Job, sandbox: &Sandbox) -> crate::RunOutput {
    let Job {
        input,
        limits,
        host,
        handle,
        events: (tx, rx),
        cancel,
        started,
    } = job;
    // A primed sandbox was handed only to a run with its namespaces (pool.rs).
    let allowed = match sandbox.primed_with() {
        Some(primed) => {
            debug_assert!(primed.serves(&input.namespaces));
            Arc::clone(&primed.tools)
        }
        None => Arc::new(crate::run_tools::RunTools::of(&input.namespaces)),
    };
    let state = State::new(
        limits.clone(),
        allowed,
        host,
        handle,
        tx,
        input.calls_before,
        Arc::clone(&cancel),
    );
    let state = if input.keep_whole {
        state.with_log_cap(crate::KEPT_LOG_BYTES.max(limits.inline_result_bytes))
    } else {
        state
    };
    let state = Rc::new(RefCell::new(state));
    let meter = Rc::new(Meter {
        compute: Duration::from_millis(limits.compute_ms),
        wall_deadline: started + Duration::from_millis(limits.wall_ms),
        cancel,
        used: Cell::new(Duration::ZERO),
        segment_start: Cell::new(None),
        tripped: Cell::new(None),
    });
    let driver = Driver {
        meter,
        state: Rc::clone(&state),
        watch: Watch::new(),
        events: &rx,
        awaiting: Awaiting::default(),
        limits: &limits,
    };
    let mut outcome = driver.drive(sandbox, &input);
    if matches!(outcome, Outcome::Suspended) {
        outcome = driver.settle_in_flight();
    }
    drop(driver);

    let mut st = state.borrow_mut();
    let (calls, cancelled) = st.close();
    let logs = std::mem::take(&mut st.logs);
    let mut notices = std::mem::take(&mut st.notices);
    drop(st);
    if cancelled > 0 {
        notices.push(format!(
            "{cancelled} tool call(s) were still running when the run ended and were cancelled; \
             await every call before returning."
        ));
    }
    let (status, mut result, error) = match outcome {
        Outcome::Value(v) => (crate::RunStatus::Completed, v, None),
        Outcome::Error(e) if e.code == CANCELLED => (crate::RunStatus::Cancelled, None, Some(e)),
        Outcome::Error(e) => (crate::RunStatus::Failed, None, Some(e)),
        Outcome::Suspended => (crate::RunStatus::Suspended, None, None),
    };
    let fitted = crate::output::fit(&mut result, logs, &limits, input.keep_whole);
    notices.extend(fitted.notices);
    crate::RunOutput {
        status,
        result,
        error,
        logs: fitted.lines,
        calls,
        truncated: fitted.truncated,
        notices,
        whole: fitted.whole,
    }
}
