//! A small host for the sandbox's own tests. The real host is capa-core's runner (catalog,
//! connections, policy, journal, replay), but this crate cannot depend on the hub: the hub
//! depends on it. So these tests drive the sandbox through the `Host` trait with a host that
//! answers from a closure after a delay, and that shows what a real upstream cannot be made to
//! show on demand: how many calls are in flight at once, and in what order calls reached it and
//! were answered (so a test checks an order of events, not a time).
//!
//! The same behaviours through the real runner, against the built-in demo and server-everything,
//! are in `crates/capa-core/tests/it/concurrency.rs` (calls overlapping, the ninth call waiting
//! for a slot, the upstream timeout starting when a call leaves the queue, `maxCalls`) and
//! `limits.rs` (the hub's run slots and `busy`).

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use capa_sandbox::{
    CallStop, Host, HostCall, Limits, Namespace, RunError, RunInput, RunOutput, ToolBinding,
    ToolFailure,
};
use futures::FutureExt;
use futures::future::BoxFuture;
use serde_json::{Value, json};

type Behaviour = dyn Fn(&HostCall) -> (Duration, Result<Value, ToolFailure>) + Send + Sync;

pub(crate) struct FakeHost {
    behaviour: Box<Behaviour>,
    pub calls: Mutex<Vec<HostCall>>,
    pub in_flight: Arc<AtomicUsize>,
    pub max_in_flight: AtomicUsize,
    /// What happened at the host, in order: each call's arrival and its answer.
    events: Arc<Mutex<Vec<Event>>>,
    /// When set, every call waits at this barrier before it answers.
    meeting: Option<Arc<tokio::sync::Barrier>>,
}

/// One thing that happened at the host, with the call's index.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Event {
    Arrived(u32),
    Answered(u32),
}

impl FakeHost {
    pub(crate) fn new(
        f: impl Fn(&HostCall) -> (Duration, Result<Value, ToolFailure>) + Send + Sync + 'static,
    ) -> Arc<Self> {
        Arc::new(FakeHost {
            behaviour: Box::new(f),
            calls: Mutex::new(Vec::new()),
            in_flight: Arc::new(AtomicUsize::new(0)),
            max_in_flight: AtomicUsize::new(0),
            events: Arc::new(Mutex::new(Vec::new())),
            meeting: None,
        })
    }

    /// Echoes `{ address, arguments, connection }` at once.
    pub(crate) fn echo() -> Arc<Self> {
        Self::new(|c| {
            (
                Duration::ZERO,
                Ok(
                    json!({"address": c.address, "arguments": c.arguments, "connection": c.connection}),
                ),
            )
        })
    }

    /// Echoes `{ index }` once `n` calls are waiting at the host together (in groups of `n`):
    /// the calls are answered only if that many were in flight at once, so a test of
    /// concurrency checks it without reading a clock (otherwise the runs end at their wall limit).
    pub(crate) fn meeting(n: usize) -> Arc<Self> {
        Arc::new(FakeHost {
            behaviour: Box::new(|c| (Duration::ZERO, Ok(json!({"index": c.index})))),
            calls: Mutex::new(Vec::new()),
            in_flight: Arc::new(AtomicUsize::new(0)),
            max_in_flight: AtomicUsize::new(0),
            events: Arc::new(Mutex::new(Vec::new())),
            meeting: Some(Arc::new(tokio::sync::Barrier::new(n))),
        })
    }

    /// Echoes after `ms`.
    pub(crate) fn slow(ms: u64) -> Arc<Self> {
        Self::new(move |c| {
            (
                Duration::from_millis(ms),
                Ok(json!({"index": c.index, "arguments": c.arguments})),
            )
        })
    }

    pub(crate) fn max_in_flight(&self) -> usize {
        self.max_in_flight.load(Ordering::SeqCst)
    }

    /// The host's events so far, in order.
    pub(crate) fn events(&self) -> Vec<Event> {
        self.events.lock().map(|e| e.clone()).unwrap_or_default()
    }

    /// Where `event` happened among the host's events; panics when it never did.
    #[track_caller]
    pub(crate) fn position(&self, event: Event) -> usize {
        let events = self.events();
        events
            .iter()
            .position(|e| *e == event)
            .unwrap_or_else(|| panic!("{event:?} never happened: {events:?}"))
    }

    pub(crate) fn call_count(&self) -> usize {
        self.calls.lock().map_or(0, |c| c.len())
    }
}

struct InFlight(Arc<AtomicUsize>);

impl Drop for InFlight {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

/// Namespaces `github` (`create_issue`, `search_issues`, `get_repo`) and `slack` (`post_message`).
pub(crate) fn namespaces() -> Vec<Namespace> {
    let ns = |global: &str, tools: &[&str]| Namespace {
        global: global.into(),
        tools: tools
            .iter()
            .map(|t| ToolBinding {
                member: (*t).into(),
                address: format!("{global}.{t}"),
            })
            .collect(),
        unlisted_source: None,
    };
    vec![
        ns("github", &["create_issue", "search_issues", "get_repo"]),
        ns("slack", &["post_message"]),
    ]
}

pub(crate) fn input(code: &str) -> RunInput {
    RunInput {
        code: code.into(),
        namespaces: namespaces().into(),
        seed: 42,
        clock_start_ms: 1_767_225_600_000,
        limits: Limits::default(),
        calls_before: 0,
        keep_whole: false,
    }
}

pub(crate) fn with_limits(code: &str, f: impl FnOnce(&mut Limits)) -> RunInput {
    let mut i = input(code);
    f(&mut i.limits);
    i
}

pub(crate) async fn run(code: &str) -> RunOutput {
    capa_sandbox::run(input(code), FakeHost::echo()).await
}

pub(crate) async fn run_with(input: RunInput, host: &Arc<FakeHost>) -> RunOutput {
    let host: Arc<dyn Host> = host.clone();
    capa_sandbox::run(input, host).await
}

/// The value of a completed run; panics with the output otherwise.
#[track_caller]
pub(crate) fn value(out: &RunOutput) -> Value {
    assert_eq!(out.status, capa_sandbox::RunStatus::Completed, "{out:#?}");
    out.result.clone().unwrap_or(Value::Null)
}

/// The error code of a failed run; panics with the output otherwise.
#[track_caller]
pub(crate) fn error_code(out: &RunOutput) -> String {
    assert_eq!(out.status, capa_sandbox::RunStatus::Failed, "{out:#?}");
    out.error
        .as_ref()
        .map(|e| e.code.clone())
        .unwrap_or_default()
}

impl Host for FakeHost {
    fn call(&self, call: HostCall) -> BoxFuture<'static, Result<Value, CallStop>> {
        let (delay, result) = (self.behaviour)(&call);
        // Test convention: failures coded `suspend` / `abort` stand for the hub's stops.
        let result = result.map_err(|f| match f.code.as_str() {
            "suspend" => CallStop::Suspend,
            "abort" => CallStop::Abort(RunError {
                code: "replay_diverged".into(),
                message: f.message,
                hint: None,
            }),
            _ => CallStop::Failed(f),
        });
        let index = call.index;
        if let Ok(mut e) = self.events.lock() {
            e.push(Event::Arrived(index));
        }
        if let Ok(mut c) = self.calls.lock() {
            c.push(call);
        }
        let events = Arc::clone(&self.events);
        let meeting = self.meeting.clone();
        let now = self.in_flight.fetch_add(1, Ordering::SeqCst) + 1;
        self.max_in_flight.fetch_max(now, Ordering::SeqCst);
        // A guard counts the call out, also when the sandbox cancels it.
        let guard = InFlight(Arc::clone(&self.in_flight));
        async move {
            if let Some(meeting) = meeting {
                meeting.wait().await;
            }
            tokio::time::sleep(delay).await;
            if let Ok(mut e) = events.lock() {
                e.push(Event::Answered(index));
            }
            drop(guard);
            result
        }
        .boxed()
    }

    fn search(&self, query: String) -> BoxFuture<'static, Result<String, ToolFailure>> {
        async move { Ok(format!("results for {query}")) }.boxed()
    }

    fn describe(&self, targets: Vec<String>) -> BoxFuture<'static, Result<String, ToolFailure>> {
        async move {
            if targets.iter().any(|t| t == "missing") {
                return Err(ToolFailure::new("not_found", "no such target: missing"));
            }
            Ok(format!("declare const {};", targets.join(", ")))
        }
        .boxed()
    }
}
