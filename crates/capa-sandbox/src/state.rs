//! The Rust side of a run: host calls (numbering, `max_calls`, the concurrency queue, delivery
//! order), logs and the finish record. The bridge functions the prelude calls land here.
//!
//! Nothing here trusts the guest: addresses are checked against the run's namespaces, calls are
//! counted here, and logs are budgeted here, whatever the prelude was tricked into doing.

use std::collections::VecDeque;
use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use std::sync::mpsc::Sender;
use std::time::{Duration, Instant};

use futures::FutureExt;
use futures::future::BoxFuture;
use tokio::runtime::Handle;
use tokio::task::AbortHandle;

use capa_domain::json_size::json_len;

use crate::events::{Event, Stop, failure_json, refusal};
use crate::logs::Logs;
use crate::lookups::Lookup;
use crate::{CallStop, CallSummary, Host, HostCall, Limits, ToolFailure};

/// How the guest's main function ended, as the prelude reported it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Finish {
    /// A JSON text.
    Value(String),
    /// `undefined`.
    Undefined,
    /// The result could not be made JSON; the reason.
    NotJson(String),
    /// A thrown value, described by the prelude (`describeError`'s JSON record); `heap_full`:
    /// the heap had under 64 KiB left when it was reported (`oom.rs`).
    Error { record: String, heap_full: bool },
}

enum OpKind {
    Call {
        index: u32,
        address: String,
        arguments: Option<serde_json::Value>,
        connection: Option<String>,
        bytes: usize,
    },
    /// `hub.search`, `hub.describe`, `hub.read`: taken when started.
    Lookup(Option<Lookup>),
}

enum OpState {
    Queued,
    Running,
    Done { ok: bool, payload: String },
    Delivered,
}

struct Op {
    kind: OpKind,
    state: OpState,
}

struct CallRecord {
    address: String,
    started: Option<Instant>,
    outcome: Option<(bool, u64)>,
}

/// What the driver should do next about host operations.
pub(crate) enum Next {
    /// Hand this result to the guest.
    Deliver {
        seq: usize,
        ok: bool,
        payload: String,
    },
    /// The next result in issue order is not there yet: wait for an event.
    Wait,
    /// No operation is outstanding.
    Idle,
}

pub(crate) struct State {
    /// Set when the run is cancelled: nothing queued starts after it.
    cancel: Arc<std::sync::atomic::AtomicBool>,
    limits: Limits,
    allowed: Arc<crate::run_tools::RunTools>,
    host: Arc<dyn Host>,
    handle: Handle,
    events: Sender<Event>,
    calls_before: u32,
    lookups: u32,
    ops: Vec<Op>,
    next_deliver: usize,
    queue: VecDeque<usize>,
    in_flight: usize,
    /// `hub.read`s wait here while one is running: each may load a kept result of many MB, so a
    /// run reads one at a time however many it asks for at once.
    reads: VecDeque<usize>,
    /// The `hub.read` running now.
    read_running: Option<usize>,
    held_bytes: usize,
    /// Calls and lookups `start` made, not polled yet: `drive_started` polls each once on the
    /// sandbox's thread, outside the guest's time, and hands the ones that wait to the runtime.
    unstarted: Vec<BoxFuture<'static, ()>>,
    tasks: Vec<AbortHandle>,
    calls: Vec<CallRecord>,
    pub(crate) logs: Logs,
    pub(crate) notices: Vec<String>,
    pub(crate) finish: Option<Finish>,
    /// Set when a host call stopped the run; an abort replaces a suspension.
    pub(crate) stop: Option<Stop>,
}

/// How much longer than what is sent a guest's argument text may be before it is refused
/// without parsing (docs/limits.md).
const TEXT_PER_SENT_BYTE: usize = 4;

impl State {
    /// Holds console lines up to `cap` bytes instead of the inline budget (a run whose logs
    /// are kept whole for a handle). Before the first line.
    pub(crate) fn with_log_cap(mut self, cap: usize) -> Self {
        self.logs = Logs::with_cap(cap);
        self
    }

    pub(crate) fn new(
        limits: Limits,
        allowed: Arc<crate::run_tools::RunTools>,
        host: Arc<dyn Host>,
        handle: Handle,
        events: Sender<Event>,
        calls_before: u32,
        cancel: Arc<std::sync::atomic::AtomicBool>,
    ) -> Self {
        let cap = limits.inline_result_bytes;
        State {
            cancel,
            limits,
            allowed,
            host,
            handle,
            events,
            calls_before,
            lookups: 0,
            ops: Vec::new(),
            next_deliver: 0,
            queue: VecDeque::new(),
            in_flight: 0,
            reads: VecDeque::new(),
            read_running: None,
            held_bytes: 0,
            unstarted: Vec::new(),
            tasks: Vec::new(),
            calls: Vec::new(),
            logs: Logs::with_cap(cap),
            notices: Vec::new(),
            finish: None,
            stop: None,
        }
    }

    /// `host.call(address, argsJson, connection)`: a sequence number, or a failure record.
    pub(crate) fn call(&mut self, address: String, args: &str, connection: String) -> String {
        if !self.allowed.contains(&address) {
            return refusal(
                "unknown_tool",
                format!("{address} is not a tool of this run"),
                Some("Use hub.search() to find tools."),
                &address,
            );
        }
        let made = self
            .calls_before
            .saturating_add(u32::try_from(self.calls.len()).unwrap_or(u32::MAX));
        if made >= self.limits.max_calls {
            return refusal(
                "max_calls",
                format!(
                    "{address}: this run already made {made} tool calls, the limit is {}",
                    self.limits.max_calls
                ),
                Some("Make fewer calls: batch, filter or paginate less."),
                &address,
            );
        }
        if self.held_bytes.saturating_add(args.len()) > self.limits.memory_bytes {
            return refusal(
                "memory_limit",
                format!(
                    "{address}: the arguments of the queued tool calls exceed the memory limit \
                     of {} bytes",
                    self.limits.memory_bytes
                ),
                None,
                &address,
            );
        }
        // Text far over the limit is refused before it is parsed: a parsed `Value` can take 16
        // times the bytes of its text (`[0,0,…]`: 2 bytes each in, 32 out). Sent JSON can be
        // shorter than the guest's text (`JSON.stringify` writes 1e20 in 21 digits, serde in 5;
        // at most about 3.7 times shorter), so the exact count below decides, and only text over
        // [`TEXT_PER_SENT_BYTE`] times the limit — which could never fit — is refused unread.
        if args.len() / TEXT_PER_SENT_BYTE > self.limits.argument_bytes {
            return refusal(
                "arguments_too_large",
                format!(
                    "{address}: the arguments are {} bytes as JSON; one call may send at most {} \
                     bytes",
                    args.len(),
                    self.limits.argument_bytes
                ),
                Some("Send less per call: split the input over several calls."),
                &address,
            );
        }
        let arguments: serde_json::Value = match serde_json::from_str(args) {
            Ok(v) => v,
            Err(e) => {
                return refusal(
                    "invalid_arguments",
                    format!("{address}: the input could not be read as JSON: {e}"),
                    None,
                    &address,
                );
            }
        };
        // Counted on the compact JSON the hub sends upstream (serde_json, as rmcp writes it),
        // not on the guest's `JSON.stringify` text, which can differ (`1e+21` against `1e21`).
        let sent = json_len(&arguments);
        if sent > self.limits.argument_bytes {
            return refusal(
                "arguments_too_large",
                format!(
                    "{address}: the arguments are {sent} bytes as JSON; one call may send at \
                     most {} bytes",
                    self.limits.argument_bytes
                ),
                Some("Send less per call: split the input over several calls."),
                &address,
            );
        }
        #[expect(
            clippy::cast_possible_truncation,
            reason = "fewer than `max_calls` (a u32) calls are recorded: checked above"
        )]
        let index = self.calls.len() as u32;
        self.calls.push(CallRecord {
            address: address.clone(),
            started: None,
            outcome: None,
        });
        let seq = self.ops.len();
        self.held_bytes += args.len();
        self.ops.push(Op {
            kind: OpKind::Call {
                index,
                address,
                arguments: Some(arguments),
                connection: (!connection.is_empty()).then_some(connection),
                bytes: args.len(),
            },
            state: OpState::Queued,
        });
        self.queue.push_back(seq);
        self.pump();
        seq.to_string()
    }

    /// `host.search(query)`, `host.describe(targetsJson)`, `host.read(handle, optionsJson)`:
    /// lookups are not tool calls (no slot, not in `calls`), but they are delivered in the same
    /// order and bounded by `max_calls` too. `asked` is the lookup, or why its arguments are
    /// refused.
    pub(crate) fn lookup(&mut self, address: &str, asked: Result<Lookup, String>) -> String {
        if self.lookups >= self.limits.max_calls {
            return refusal(
                "max_calls",
                format!(
                    "{address}: more than {} hub lookups in one run",
                    self.limits.max_calls
                ),
                None,
                address,
            );
        }
        let lookup = match asked {
            Ok(lookup) => lookup,
            Err(why) => return refusal("invalid_arguments", why, None, address),
        };
        self.lookups += 1;
        let seq = self.ops.len();
        let is_read = matches!(lookup, Lookup::Read { .. });
        self.ops.push(Op {
            kind: OpKind::Lookup(Some(lookup)),
            state: OpState::Queued,
        });
        if !is_read {
            self.start(seq);
        } else if self.read_running.is_some() {
            self.reads.push_back(seq);
        } else {
            self.read_running = Some(seq);
            self.start(seq);
        }
        seq.to_string()
    }

    /// `host.log(line)`: whether another line would still be kept.
    pub(crate) fn log(&mut self, line: String) -> bool {
        self.logs.push(line)
    }

    pub(crate) fn set_finish(&mut self, finish: Finish) {
        if self.finish.is_none() {
            self.finish = Some(finish);
        }
    }

    /// Forgets the calls not started yet: a cancelled run begins nothing new.
    pub(crate) fn cancel_queued(&mut self) {
        self.queue.clear();
        self.reads.clear();
    }

    /// Start queued tool calls while slots are free (none once the run is cancelled).
    fn pump(&mut self) {
        if self.cancel.load(std::sync::atomic::Ordering::Relaxed) {
            self.queue.clear();
            return;
        }
        while self.in_flight < self.limits.max_concurrent {
            let Some(seq) = self.queue.pop_front() else {
                break;
            };
            self.in_flight += 1;
            self.start(seq);
        }
    }

    /// Starts the next waiting `hub.read` (none once the run is cancelled).
    fn next_read(&mut self) {
        if self.cancel.load(std::sync::atomic::Ordering::Relaxed) {
            self.reads.clear();
            return;
        }
        if let Some(seq) = self.reads.pop_front() {
            self.read_running = Some(seq);
            self.start(seq);
        }
    }

    fn start(&mut self, seq: usize) {
        let Some(op) = self.ops.get_mut(seq) else {
            return;
        };
        op.state = OpState::Running;
        let host = Arc::clone(&self.host);
        let events = self.events.clone();
        let timeout = Duration::from_millis(self.limits.upstream_timeout_ms);
        let task: BoxFuture<'static, ()> = match &mut op.kind {
            OpKind::Call {
                index,
                address,
                arguments,
                connection,
                ..
            } => {
                if let Some(record) = self.calls.get_mut(*index as usize) {
                    record.started = Some(Instant::now());
                }
                let call = HostCall {
                    index: *index,
                    address: address.clone(),
                    arguments: arguments.take().unwrap_or(serde_json::Value::Null),
                    connection: connection.clone(),
                };
                let address = address.clone();
                let timeout_ms = self.limits.upstream_timeout_ms;
                Box::pin(async move {
                    let started = Instant::now();
                    // The host is called only now, with a slot free: queue time never counts
                    // against the upstream timeout. A panicking host is a failed call, not a
                    // run that waits for its wall limit.
                    let call = AssertUnwindSafe(host.call(call)).catch_unwind();
                    let outcome = match tokio::time::timeout(timeout, call).await {
                        Ok(Ok(r)) => Ok(r),
                        Ok(Err(_)) => Ok(Err(CallStop::Failed(ToolFailure::new(
                            "internal",
                            format!("{address} failed inside the hub"),
                        )))),
                        Err(e) => Err(e),
                    };
                    let ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
                    let (ok, payload) = match outcome {
                        Ok(Ok(value)) => (
                            true,
                            serde_json::to_string(&value).unwrap_or_else(|_| "null".into()),
                        ),
                        Ok(Err(CallStop::Failed(f))) => (false, failure_json(&f, &address)),
                        Ok(Err(CallStop::Suspend)) => {
                            let _ = events.send(Event::Stop {
                                seq,
                                stop: Stop::Suspend,
                                ms,
                            });
                            return;
                        }
                        Ok(Err(CallStop::Abort(error))) => {
                            let _ = events.send(Event::Stop {
                                seq,
                                stop: Stop::Abort(error),
                                ms,
                            });
                            return;
                        }
                        Err(_) => (
                            false,
                            refusal(
                                "upstream_timeout",
                                format!("{address} did not answer within {timeout_ms} ms"),
                                Some("Try again later, or ask for less at once."),
                                &address,
                            ),
                        ),
                    };
                    let _ = events.send(Event::Done {
                        seq,
                        ok,
                        payload,
                        ms,
                    });
                })
            }
            OpKind::Lookup(lookup) => match lookup.take() {
                Some(lookup) => lookup.work(host.as_ref(), seq, events, timeout),
                None => return,
            },
        };
        self.unstarted.push(task);
    }

    /// Polls the work `start` made, once each, here on the sandbox's thread (called between
    /// the guest's turns, so the host's work is not the guest's time): an answer ready without
    /// waiting — a built-in source's call, a replayed one, a lookup the hub answers from memory
    /// — is in the event channel before the sandbox waits, with no thread woken for it. Work
    /// that waits (I/O, a person) goes to the hub's runtime, which polls it from then on; the
    /// waker of this first poll is a no-op, and the runtime's poll, right after the spawn, sets
    /// its own.
    pub(crate) fn drive_started(&mut self) {
        if self.unstarted.is_empty() {
            return;
        }
        // The host's futures use the runtime's timers and tasks.
        let _runtime = self.handle.enter();
        let mut cx = std::task::Context::from_waker(futures::task::noop_waker_ref());
        for mut work in std::mem::take(&mut self.unstarted) {
            if work.poll_unpin(&mut cx).is_pending() {
                self.tasks.push(self.handle.spawn(work).abort_handle());
            }
        }
    }

    /// Record a finished operation and start queued calls in the freed slot.
    pub(crate) fn complete(&mut self, seq: usize, ok: bool, payload: String, ms: u64) {
        let Some(op) = self.ops.get_mut(seq) else {
            return;
        };
        if !matches!(op.state, OpState::Running) {
            return;
        }
        op.state = OpState::Done { ok, payload };
        if let OpKind::Call { index, bytes, .. } = op.kind {
            self.in_flight = self.in_flight.saturating_sub(1);
            self.held_bytes = self.held_bytes.saturating_sub(bytes);
            if let Some(record) = self.calls.get_mut(index as usize) {
                record.outcome = Some((ok, ms));
            }
            self.pump();
        } else if self.read_running == Some(seq) {
            self.read_running = None;
            self.next_read();
        }
    }

    /// Tool calls the host is still working on.
    pub(crate) fn in_flight(&self) -> usize {
        self.in_flight
    }

    /// Records a call that stopped the run. Calls not yet started never start: a stopping run
    /// begins nothing new (a replay issues them again).
    pub(crate) fn stopped(&mut self, seq: usize, stop: Stop, ms: u64) {
        self.queue.clear();
        self.reads.clear();
        self.complete(seq, false, "null".to_owned(), ms);
        if self.stop.is_none() || matches!(stop, Stop::Abort(_)) {
            self.stop = Some(stop);
        }
    }

    /// The next step in issue order: results are handed over strictly in the order the guest
    /// asked for them, whatever order they arrived in.
    pub(crate) fn next(&mut self) -> Next {
        let Some(op) = self.ops.get_mut(self.next_deliver) else {
            return Next::Idle;
        };
        match std::mem::replace(&mut op.state, OpState::Delivered) {
            OpState::Done { ok, payload } => {
                let seq = self.next_deliver;
                self.next_deliver += 1;
                Next::Deliver { seq, ok, payload }
            }
            other => {
                op.state = other;
                Next::Wait
            }
        }
    }

    /// Cancel what is still running; the summaries of the calls the host was asked to make.
    pub(crate) fn close(&mut self) -> (Vec<CallSummary>, usize) {
        for task in self.tasks.drain(..) {
            task.abort();
        }
        let mut cancelled = 0;
        let summaries = self
            .calls
            .iter()
            .filter_map(|c| {
                let started = c.started?;
                let (ok, ms) = c.outcome.unwrap_or_else(|| {
                    cancelled += 1;
                    (
                        false,
                        u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX),
                    )
                });
                Some(CallSummary {
                    address: c.address.clone(),
                    ok,
                    ms,
                })
            })
            .collect();
        (summaries, cancelled)
    }
}
