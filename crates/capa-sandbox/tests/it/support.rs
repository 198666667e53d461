//! A fake host for the sandbox's tests. The real host (catalog, connections, policy, journal)
//! lives in the hub core and comes later; this one answers from a closure after a delay and
//! counts how many calls are in flight at once.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use capa_sandbox::{
    CallStop, Host, HostCall, Limits, Namespace, RunError, RunInput, RunOutput, ToolBinding,
    ToolFailure,
};
use futures::FutureExt;
use futures::future::BoxFuture;
use serde_json::{Value, json};

type Behaviour = dyn Fn(&HostCall) -> (Duration, Result<Value, ToolFailure>) + Send + Sync;

pub struct FakeHost {
    behaviour: Box<Behaviour>,
    pub calls: Mutex<Vec<HostCall>>,
    /// When each call reached the host, relative to the host's creation.
    pub arrivals: Mutex<Vec<(u32, Duration)>>,
    pub in_flight: Arc<AtomicUsize>,
    pub max_in_flight: AtomicUsize,
    created: Instant,
}

impl FakeHost {
    pub fn new(
        f: impl Fn(&HostCall) -> (Duration, Result<Value, ToolFailure>) + Send + Sync + 'static,
    ) -> Arc<Self> {
        Arc::new(FakeHost {
            behaviour: Box::new(f),
            calls: Mutex::new(Vec::new()),
            arrivals: Mutex::new(Vec::new()),
            in_flight: Arc::new(AtomicUsize::new(0)),
            max_in_flight: AtomicUsize::new(0),
            created: Instant::now(),
        })
    }

    /// Echoes `{ address, arguments, connection }` at once.
    pub fn echo() -> Arc<Self> {
        Self::new(|c| {
            (
                Duration::ZERO,
                Ok(
                    json!({"address": c.address, "arguments": c.arguments, "connection": c.connection}),
                ),
            )
        })
    }

    /// Echoes after `ms`.
    pub fn slow(ms: u64) -> Arc<Self> {
        Self::new(move |c| {
            (
                Duration::from_millis(ms),
                Ok(json!({"index": c.index, "arguments": c.arguments})),
            )
        })
    }

    pub fn max_in_flight(&self) -> usize {
        self.max_in_flight.load(Ordering::SeqCst)
    }

    pub fn call_count(&self) -> usize {
        self.calls.lock().map(|c| c.len()).unwrap_or(0)
    }
}

struct InFlight(Arc<AtomicUsize>);

impl Drop for InFlight {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

/// Namespaces `github` (create_issue, search_issues, get_repo) and `slack` (post_message).
pub fn namespaces() -> Vec<Namespace> {
    let ns = |global: &str, tools: &[&str]| Namespace {
        global: global.into(),
        tools: tools
            .iter()
            .map(|t| ToolBinding {
                member: (*t).into(),
                address: format!("{global}.{t}"),
            })
            .collect(),
    };
    vec![
        ns("github", &["create_issue", "search_issues", "get_repo"]),
        ns("slack", &["post_message"]),
    ]
}

pub fn input(code: &str) -> RunInput {
    RunInput {
        code: code.into(),
        namespaces: namespaces(),
        seed: 42,
        clock_start_ms: 1_767_225_600_000,
        limits: Limits::default(),
        calls_before: 0,
    }
}

pub fn with_limits(code: &str, f: impl FnOnce(&mut Limits)) -> RunInput {
    let mut i = input(code);
    f(&mut i.limits);
    i
}

pub async fn run(code: &str) -> RunOutput {
    capa_sandbox::run(input(code), FakeHost::echo()).await
}

pub async fn run_with(input: RunInput, host: &Arc<FakeHost>) -> RunOutput {
    let host: Arc<dyn Host> = host.clone();
    capa_sandbox::run(input, host).await
}

/// The value of a completed run; panics with the output otherwise.
#[track_caller]
pub fn value(out: &RunOutput) -> Value {
    assert_eq!(out.status, capa_sandbox::RunStatus::Completed, "{out:#?}");
    out.result.clone().unwrap_or(Value::Null)
}

/// The error code of a failed run; panics with the output otherwise.
#[track_caller]
pub fn error_code(out: &RunOutput) -> String {
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
        if let Ok(mut a) = self.arrivals.lock() {
            a.push((call.index, self.created.elapsed()));
        }
        if let Ok(mut c) = self.calls.lock() {
            c.push(call);
        }
        let now = self.in_flight.fetch_add(1, Ordering::SeqCst) + 1;
        self.max_in_flight.fetch_max(now, Ordering::SeqCst);
        // A guard counts the call out, also when the sandbox cancels it.
        let guard = InFlight(Arc::clone(&self.in_flight));
        async move {
            tokio::time::sleep(delay).await;
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
