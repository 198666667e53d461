//! Progress of long upstream calls, relayed to whoever asked for it.
//!
//! rmcp gives every request a progress token of its own (in the request's `_meta`). A call that
//! wants progress registers a sink under that token; the connection's handler routes each
//! `notifications/progress` with it to the sink. The registration ends with the call, so late
//! notifications are dropped.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rmcp::Peer;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, CancelledNotificationParam,
    ClientRequest, ProgressNotificationParam, ProgressToken, Request, RequestId, RequestMetaObject,
    ServerResult,
};
use rmcp::service::{PeerRequestOptions, RoleClient};
use tokio::sync::mpsc;

/// One progress report of an upstream call.
#[derive(Debug, Clone, PartialEq)]
pub struct Progress {
    pub progress: f64,
    pub total: Option<f64>,
    pub message: Option<String>,
}

/// Where a call's progress goes.
pub type ProgressSink = mpsc::UnboundedSender<Progress>;

/// Sinks by progress token, shared by the code that sends requests and the client handler that
/// receives `notifications/progress`.
#[derive(Clone, Default)]
pub struct ProgressRouter {
    sinks: Arc<Mutex<HashMap<ProgressToken, Route>>>,
}

/// A call's sink, and whether any report has reached it.
#[derive(Clone)]
struct Route {
    sink: ProgressSink,
    reported: Arc<AtomicBool>,
}

/// A registered sink; dropping it ends the route.
struct Registration {
    routes: ProgressRouter,
    token: ProgressToken,
    reported: Arc<AtomicBool>,
}

impl Registration {
    /// Whether the upstream has reported progress on this call so far.
    fn reported(&self) -> bool {
        self.reported.load(Ordering::Relaxed)
    }
}

impl Drop for Registration {
    fn drop(&mut self) {
        if let Ok(mut sinks) = self.routes.sinks.lock() {
            sinks.remove(&self.token);
        }
    }
}

impl ProgressRouter {
    fn register(&self, token: ProgressToken, sink: ProgressSink) -> Registration {
        let reported = Arc::new(AtomicBool::new(false));
        if let Ok(mut sinks) = self.sinks.lock() {
            let route = Route {
                sink,
                reported: reported.clone(),
            };
            sinks.insert(token.clone(), route);
        }
        Registration {
            routes: self.clone(),
            token,
            reported,
        }
    }

    /// Hands a progress notification to the call it belongs to, if that call still runs.
    pub fn deliver(&self, params: ProgressNotificationParam) {
        let route = self
            .sinks
            .lock()
            .ok()
            .and_then(|s| s.get(&params.progress_token).cloned());
        if let Some(route) = route {
            route.reported.store(true, Ordering::Relaxed);
            let _ = route.sink.send(Progress {
                progress: params.progress,
                total: params.total,
                message: params.message,
            });
        }
    }
}

/// Calls a tool and routes its progress to `sink` until the answer arrives. rmcp gives every
/// request its own progress token, so the request is sent here to learn it; rmcp enforces
/// `timeout` and sends `notifications/cancelled` when it passes.
pub async fn call_tool_with_progress(
    peer: &Peer<RoleClient>,
    params: CallToolRequestParams,
    timeout: Option<Duration>,
    router: &ProgressRouter,
    sink: ProgressSink,
) -> Result<CallToolResult, rmcp::ServiceError> {
    let sent = SentCall {
        timeout,
        meta: None,
        progress: Some(sink),
    };
    match send_call(peer, params, sent, router).await? {
        CallToolResponse::Complete(result) => Ok(result),
        _ => Err(rmcp::ServiceError::UnexpectedResponse),
    }
}

/// How one `tools/call` request goes out.
pub(crate) struct SentCall {
    /// rmcp cancels the request upstream when it passes.
    pub(crate) timeout: Option<Duration>,
    /// `_meta` entries that replace rmcp's own (a 2026-07-28 call's client capabilities).
    pub(crate) meta: Option<RequestMetaObject>,
    pub(crate) progress: Option<ProgressSink>,
}

/// One `tools/call` request: its result, or a 2026-07-28 server's `input_required` round. A
/// caller that stops waiting (its own client cancelled) cancels the request upstream.
pub(crate) async fn send_call(
    peer: &Peer<RoleClient>,
    params: CallToolRequestParams,
    sent: SentCall,
    router: &ProgressRouter,
) -> Result<CallToolResponse, rmcp::ServiceError> {
    let mut options = PeerRequestOptions::no_options();
    options.timeout = sent.timeout;
    options.meta = sent.meta;
    let handle = peer
        .send_request_with_option(
            ClientRequest::CallToolRequest(Request::new(params)),
            options,
        )
        .await?;
    let mut abandoned = Abandoned::new(peer, handle.id.clone());
    let route = sent
        .progress
        .map(|sink| router.register(handle.progress_token.clone(), sink));
    let response = handle.await_response().await;
    abandoned.disarm();
    // rmcp runs notification handlers as tasks of their own, so a report sent just before the
    // answer may still be on its way to `deliver`. An upstream that reports progress usually
    // sends a last report right before its answer: wait a moment for it. Calls that never
    // reported (nearly all) only let already-queued tasks run, so they cost no time.
    if route.as_ref().is_some_and(Registration::reported) {
        tokio::time::sleep(PROGRESS_GRACE).await;
    } else if route.is_some() {
        for _ in 0..4 {
            tokio::task::yield_now().await;
        }
    }
    match response? {
        ServerResult::CallToolResult(result) => Ok(CallToolResponse::Complete(result)),
        ServerResult::InputRequiredResult(result) => Ok(CallToolResponse::InputRequired(result)),
        ServerResult::CreateTaskResult(result) => Ok(CallToolResponse::Task(result)),
        // A result of nothing but `_meta` (or nothing at all) is an empty tool result.
        ServerResult::EmptyResult(_) => Ok(CallToolResponse::Complete(CallToolResult::default())),
        _ => Err(rmcp::ServiceError::UnexpectedResponse),
    }
}

/// Sends `notifications/cancelled` for a request whose caller stopped waiting for it (dropped
/// before [`Abandoned::disarm`]).
pub(crate) struct Abandoned<'a> {
    peer: &'a Peer<RoleClient>,
    id: Option<RequestId>,
}

impl<'a> Abandoned<'a> {
    pub(crate) fn new(peer: &'a Peer<RoleClient>, id: RequestId) -> Self {
        Self { peer, id: Some(id) }
    }

    /// The answer came: nothing to cancel.
    pub(crate) fn disarm(&mut self) {
        self.id = None;
    }
}

impl Drop for Abandoned<'_> {
    fn drop(&mut self) {
        let Some(id) = self.id.take() else {
            return;
        };
        let peer = self.peer.clone();
        let cancelled = CancelledNotificationParam::new(
            Some(id),
            Some("the hub's caller stopped waiting".to_owned()),
        );
        // Dropped outside a runtime only when the hub is shutting down: nothing to tell then.
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            runtime.spawn(async move {
                let _ = peer.notify_cancelled(cancelled).await;
            });
        }
    }
}

/// How long a route stays open after the answer, for reports still being handled. Progress is
/// best effort in MCP; this only keeps the usual last report from being lost.
const PROGRESS_GRACE: Duration = Duration::from_millis(20);
