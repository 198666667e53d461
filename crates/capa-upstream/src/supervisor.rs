//! Keeping one upstream connected: connect, list tools, watch for changes and for the connection
//! ending, reconnect with backoff, and answer calls in between.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use rmcp::model::{PaginatedRequestParams, ProtocolVersion, Tool};
use rmcp::{Peer, service::RoleClient};
use tokio::sync::{mpsc, watch};
use tokio_util::sync::CancellationToken;

use crate::asker::Askers;
use crate::auth_signal::AuthSignal;
use crate::connect::{Client, Connected, connect, sign_in_hint, sign_in_would_help};
use crate::error::UpstreamError;
use crate::handler::UpstreamClient;

mod asking;
mod direct;
mod event;
mod listen;
mod retry;
use self::listen::{AbortOnDrop, listen_for_tool_changes};
use self::retry::{Next, Retry};
pub(crate) mod relay;
pub use self::event::UpstreamEvent;
mod sign_in;
use self::sign_in::{SIGNED_OUT, refused_after_handshake, wait_for_sign_in};
use crate::limits::MAX_TOOL_PAGES;
use crate::progress::ProgressRouter;
use crate::source_log::{LogLevel, SourceLog};
use crate::spec::UpstreamSpec;
use crate::timings::SupervisorTimings;
use crate::tool_list::{Cuts, ToolListBounds};

/// Where an upstream is in its life.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum UpstreamState {
    /// Starting or reconnecting.
    Starting,
    /// Connected; tools listed.
    Ready,
    /// Not connected; waiting to reconnect.
    Down,
    /// Shut down by the hub.
    Stopped,
    /// The server wants a signed-in user and the connection has no usable sign-in; no retry
    /// until the hub starts the source again after a sign-in.
    NeedsSignIn,
}

/// A snapshot of an upstream for listings.
#[derive(Debug, Clone, serde::Serialize)]
pub struct UpstreamStatus {
    pub state: UpstreamState,
    /// The last error, already phrased for a person.
    pub last_error: Option<String>,
    pub tool_count: usize,
    /// How many times the connection was re-established after a failure.
    pub restarts: u32,
    /// Protocol version negotiated with the server.
    pub protocol_version: Option<String>,
    /// Process id of the server when it is a local command and connected.
    pub pid: Option<u32>,
    /// What the last tool listing cut to stay within the hub's limits (tools skipped,
    /// descriptions cut), one line each; empty when nothing was.
    pub limited: Vec<String>,
}

#[derive(Clone)]
struct Snapshot {
    state: UpstreamState,
    peer: Option<Peer<RoleClient>>,
    tools: Arc<Vec<Tool>>,
    last_error: Option<String>,
    restarts: u32,
    protocol_version: Option<String>,
    pid: Option<u32>,
    limited: Vec<String>,
    /// What the server last said of the credentials, for an HTTP upstream.
    auth: Option<Arc<AuthSignal>>,
    /// The calls of a server inside the hub that takes them without the session
    /// (`supervisor/direct.rs`), from the connection that made the upstream ready.
    direct: Option<Arc<dyn crate::DirectCalls>>,
}

/// One upstream MCP server kept connected by a background task.
pub struct Upstream {
    spec: UpstreamSpec,
    timings: SupervisorTimings,
    snapshot: watch::Sender<Snapshot>,
    shutdown: CancellationToken,
    task: Mutex<Option<tokio::task::JoinHandle<()>>>,
    progress: ProgressRouter,
    /// The clients of the calls running now, for the server's own requests.
    askers: Askers,
    /// The source's log: the child's stderr and the supervisor's lines.
    log: Arc<SourceLog>,
}

impl std::fmt::Debug for Upstream {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Upstream")
            .field("spec", &self.spec)
            .finish_non_exhaustive()
    }
}

impl Upstream {
    /// Starts connecting in the background with the hub's timings. Changes are reported on
    /// `events`.
    pub fn start(spec: UpstreamSpec, events: mpsc::UnboundedSender<UpstreamEvent>) -> Arc<Self> {
        Self::start_with(spec, events, SupervisorTimings::default())
    }

    /// [`Upstream::start`] with other waits (tests use short ones on a paused clock).
    pub fn start_with(
        spec: UpstreamSpec,
        events: mpsc::UnboundedSender<UpstreamEvent>,
        timings: SupervisorTimings,
    ) -> Arc<Self> {
        let log = SourceLog::new(capa_domain::Redactor::new());
        Self::start_logged(spec, events, timings, log)
    }

    /// [`Upstream::start_with`], writing the child's stderr and the supervisor's lines to `log`
    /// (the hub keeps one per source, across restarts).
    pub fn start_logged(
        spec: UpstreamSpec,
        events: mpsc::UnboundedSender<UpstreamEvent>,
        timings: SupervisorTimings,
        log: Arc<SourceLog>,
    ) -> Arc<Self> {
        let (snapshot, _) = watch::channel(Snapshot {
            state: UpstreamState::Starting,
            peer: None,
            tools: Arc::new(Vec::new()),
            last_error: None,
            restarts: 0,
            protocol_version: None,
            pid: None,
            limited: Vec::new(),
            auth: None,
            direct: None,
        });
        let upstream = Arc::new(Self {
            spec,
            timings,
            snapshot,
            shutdown: CancellationToken::new(),
            task: Mutex::new(None),
            progress: ProgressRouter::default(),
            askers: Askers::default(),
            log,
        });
        let task = tokio::spawn(supervise(upstream.clone(), events));
        if let Ok(mut slot) = upstream.task.lock() {
            *slot = Some(task);
        }
        upstream
    }

    pub fn spec(&self) -> &UpstreamSpec {
        &self.spec
    }

    /// The log this upstream writes to.
    pub fn log(&self) -> &Arc<SourceLog> {
        &self.log
    }

    /// The tools the server listed last (empty before the first successful listing).
    pub fn tools(&self) -> Arc<Vec<Tool>> {
        self.snapshot.borrow().tools.clone()
    }

    pub fn status(&self) -> UpstreamStatus {
        let s = self.snapshot.borrow();
        // Connected, but the server refuses the sign-in now (a refused refresh): to a person it
        // needs a sign-in, as after a reconnect it would.
        let refused = s.state == UpstreamState::Ready
            && s.auth
                .as_ref()
                .is_some_and(|a| sign_in_would_help(&self.spec, a));
        UpstreamStatus {
            state: if refused {
                UpstreamState::NeedsSignIn
            } else {
                s.state
            },
            last_error: if refused {
                Some(SIGNED_OUT.to_owned())
            } else {
                s.last_error.clone()
            },
            tool_count: s.tools.len(),
            restarts: s.restarts,
            protocol_version: s.protocol_version.clone(),
            pid: s.pid,
            limited: s.limited.clone(),
        }
    }

    /// Waits until the upstream is ready or has failed (not starting), at most `limit`.
    pub async fn settled(&self, limit: Duration) {
        let mut rx = self.snapshot.subscribe();
        let _ =
            tokio::time::timeout(limit, rx.wait_for(|s| s.state != UpstreamState::Starting)).await;
    }

    /// Records what came with a new connection; its client, to serve.
    fn take_connection(&self, connected: Connected) -> Client {
        self.update(|s| {
            s.pid = connected.pid;
            s.auth = connected.auth;
            s.direct = connected.direct;
        });
        connected.client
    }

    pub(crate) async fn ready_peer(
        &self,
    ) -> Result<(Peer<RoleClient>, Option<Arc<AuthSignal>>), UpstreamError> {
        let mut rx = self.snapshot.subscribe();
        let snapshot = rx
            .wait_for(|s| s.state != UpstreamState::Starting)
            .await
            .map_err(|_| self.unavailable("the hub is shutting down".into()))?
            .clone();
        match (snapshot.state, snapshot.peer) {
            (UpstreamState::Ready, Some(peer)) => Ok((peer, snapshot.auth)),
            (UpstreamState::Stopped, _) => Err(self.unavailable("the source was stopped".into())),
            (UpstreamState::NeedsSignIn, _) => Err(UpstreamError::NeedsSignIn {
                source_id: self.spec.source_id.clone(),
                reason: snapshot
                    .last_error
                    .unwrap_or_else(|| "nobody is signed in".into()),
            }),
            _ => Err(self.unavailable(
                snapshot
                    .last_error
                    .unwrap_or_else(|| "not connected".into()),
            )),
        }
    }

    fn unavailable(&self, reason: String) -> UpstreamError {
        UpstreamError::Unavailable {
            source_id: self.spec.source_id.clone(),
            reason,
        }
    }

    /// Stops the connection (and the child process) and waits for the background task.
    pub async fn shutdown(&self) {
        self.shutdown.cancel();
        let task = self.task.lock().ok().and_then(|mut t| t.take());
        if let Some(task) = task {
            let _ = task.await;
        }
    }

    fn update(&self, f: impl FnOnce(&mut Snapshot)) {
        self.snapshot.send_modify(f);
    }
}

impl Upstream {
    /// The client side of one connection of this upstream.
    fn client_handler(
        &self,
        tools_changed: mpsc::UnboundedSender<()>,
        events: &mpsc::UnboundedSender<UpstreamEvent>,
    ) -> UpstreamClient {
        UpstreamClient {
            source_id: self.spec.source_id.clone(),
            tools_changed,
            progress: self.progress.clone(),
            askers: self.askers.clone(),
            events: events.clone(),
            connection: self.spec.connection.clone(),
        }
    }
}

/// Stops starting a local command that failed `failures` times in a row: it stays down, saying
/// so, until the hub starts the source again (Restart, or an edit of the source).
fn give_up(upstream: &Upstream, log: &SourceLog, failures: u32, changed: &impl Fn()) {
    let why = format!(
        "stopped trying after {failures} failures in a row; fix the source, then press Restart on the Sources page (saving a change to it starts it again too)"
    );
    tracing::warn!(source = %upstream.spec.source_id, failures, "gave up restarting the source");
    log.hub(LogLevel::Error, &why);
    upstream.update(|s| {
        s.state = UpstreamState::Down;
        s.peer = None;
        s.last_error = Some(match s.last_error.take() {
            Some(last) => format!("{last} ({why})"),
            None => why.clone(),
        });
    });
    changed();
}

async fn supervise(upstream: Arc<Upstream>, events: mpsc::UnboundedSender<UpstreamEvent>) {
    let source_id = upstream.spec.source_id.clone();
    let changed = || {
        let _ = events.send(UpstreamEvent::Changed {
            source_id: source_id.clone(),
        });
    };
    let mut retry = Retry::new(upstream.timings);
    let mut attempts: u32 = 0;
    let log = upstream.log.clone();
    let under = upstream
        .spec
        .connection
        .as_deref()
        .map(|c| format!(" (connection `{c}`)"))
        .unwrap_or_default();
    loop {
        if attempts == 0 {
            log.hub(
                LogLevel::Info,
                &format!("starting {}{under}", upstream.spec.transport.describe()),
            );
        } else {
            log.hub(
                LogLevel::Info,
                &format!("restarting (attempt {})", attempts + 1),
            );
        }
        upstream.update(|s| {
            s.state = UpstreamState::Starting;
            s.restarts = attempts;
        });
        attempts = attempts.saturating_add(1);
        let (tools_tx, tools_rx) = mpsc::unbounded_channel();
        let tools_tx_for_listen = tools_tx.clone();
        let handler = upstream.client_handler(tools_tx, &events);
        let connected = tokio::select! {
            () = upstream.shutdown.cancelled() => break,
            c = connect(&upstream.spec, handler, &log) => c,
        };
        // tokio's clock (the wall clock in the hub) so that tests can move it.
        let started = tokio::time::Instant::now();
        match connected {
            Ok(connected) => {
                let client = upstream.take_connection(connected);
                let outcome =
                    serve_connection(&upstream, client, tools_tx_for_listen, tools_rx, &changed)
                        .await;
                if outcome == Outcome::Shutdown {
                    break;
                }
                if refused_after_handshake(&upstream) {
                    let reason = sign_in_hint(&upstream.spec);
                    wait_for_sign_in(&upstream, &log, reason, &changed).await;
                    break;
                }
            }
            Err(e @ UpstreamError::NeedsSignIn { .. }) => {
                tracing::warn!(source = %source_id, error = %e, "upstream needs a sign-in");
                wait_for_sign_in(&upstream, &log, e.status_text(), &changed).await;
                break;
            }
            Err(e) => {
                tracing::warn!(source = %source_id, error = %e, "upstream unavailable");
                log.hub(LogLevel::Error, &format!("could not connect: {e}"));
                upstream.update(|s| {
                    s.state = UpstreamState::Down;
                    s.peer = None;
                    s.last_error = Some(e.status_text());
                });
                changed();
            }
        }
        let wait = match retry.after_attempt(started.elapsed(), upstream.spec.transport.is_local())
        {
            Next::Wait(wait) => wait,
            Next::GiveUp(failures) => {
                give_up(&upstream, &log, failures, &changed);
                upstream.shutdown.cancelled().await;
                break;
            }
        };
        let wait_ms = u64::try_from(wait.as_millis()).unwrap_or(u64::MAX);
        tracing::info!(source = %source_id, wait_ms, "reconnecting after backoff");
        log.hub(LogLevel::Info, &format!("reconnecting in {wait_ms} ms"));
        tokio::select! {
            () = upstream.shutdown.cancelled() => break,
            () = tokio::time::sleep(wait) => {}
        }
    }
    upstream.update(|s| {
        s.state = UpstreamState::Stopped;
        s.peer = None;
    });
    log.hub(LogLevel::Info, "stopped");
}

#[derive(Debug, PartialEq, Eq)]
enum Outcome {
    Shutdown,
    Lost,
}

async fn serve_connection(
    upstream: &Upstream,
    client: Client,
    tools_changed_tx: mpsc::UnboundedSender<()>,
    mut tools_changed: mpsc::UnboundedReceiver<()>,
    changed: &impl Fn(),
) -> Outcome {
    let source_id = &upstream.spec.source_id;
    let peer = client.peer().clone();
    let info = client.peer_info();
    let protocol_version = info.as_ref().map(|i| i.protocol_version.to_string());
    let announces_changes = info
        .as_ref()
        .and_then(|i| i.capabilities.tools.as_ref())
        .and_then(|t| t.list_changed)
        == Some(true);
    let modern = protocol_version.as_deref() >= Some(ProtocolVersion::V_2026_07_28.as_str());
    // 2026-07-28 servers send list changes only on a `subscriptions/listen` stream; older ones
    // send them on the session, where `UpstreamClient` receives them.
    let _listener = (announces_changes && modern)
        .then(|| {
            tokio::spawn(listen_for_tool_changes(
                peer.clone(),
                source_id.clone(),
                tools_changed_tx,
            ))
        })
        .map(AbortOnDrop);
    match list_tools(&peer, source_id, upstream.timings.list_timeout).await {
        Ok((tools, limited)) => {
            tracing::info!(source = %source_id, tools = tools.len(), protocol = ?protocol_version, "upstream ready");
            log_ready(upstream, tools.len(), protocol_version.as_deref(), &limited);
            upstream.update(|s| {
                s.state = UpstreamState::Ready;
                s.peer = Some(peer.clone());
                s.tools = Arc::new(tools);
                s.limited = limited;
                s.last_error = None;
                s.protocol_version = protocol_version;
            });
            changed();
        }
        Err(e) => {
            upstream
                .log
                .hub(LogLevel::Error, &format!("listing tools failed: {e}"));
            // Refused credentials are not a fault to show as `down` in between: the caller
            // marks the upstream as needing a sign-in next.
            if !refused_after_handshake(upstream) {
                upstream.update(|s| {
                    s.state = UpstreamState::Down;
                    s.last_error = Some(e.status_text());
                });
                changed();
            }
            let _ = client.cancel().await;
            return Outcome::Lost;
        }
    }
    let cancel = client.cancellation_token();
    let waiting = client.waiting();
    tokio::pin!(waiting);
    loop {
        tokio::select! {
            () = upstream.shutdown.cancelled() => {
                cancel.cancel();
                let _ = waiting.await;
                return Outcome::Shutdown;
            }
            Some(()) = tools_changed.recv() => {
                match list_tools(&peer, source_id, upstream.timings.list_timeout).await {
                    Ok((tools, limited)) => {
                        upstream.log.hub(LogLevel::Info, &format!("tool list changed: {} tools", tools.len()));
                        upstream.update(|s| {
                            s.tools = Arc::new(tools);
                            s.limited = limited;
                        });
                        changed();
                    }
                    Err(e) => {
                        tracing::warn!(source = %source_id, error = %e, "refreshing tools failed; keeping the previous list");
                        upstream.log.hub(LogLevel::Warn, &format!("refreshing tools failed, keeping the previous list: {e}"));
                    }
                }
            }
            reason = &mut waiting => {
                let reason = match reason {
                    Ok(reason) => format!("connection closed ({reason:?})"),
                    Err(e) => format!("connection task failed ({e})"),
                };
                tracing::warn!(source = %source_id, %reason, "upstream lost");
                upstream.log.hub(LogLevel::Warn, &format!("connection lost: {reason}"));
                upstream.update(|s| {
                    s.state = UpstreamState::Down;
                    s.peer = None;
                    s.pid = None;
                    s.last_error = Some(reason);
                });
                changed();
                return Outcome::Lost;
            }
        }
    }
}

/// The source log's lines for a connection that is ready: tools, protocol, process, and what
/// the listing cut.
fn log_ready(upstream: &Upstream, tools: usize, protocol: Option<&str>, limited: &[String]) {
    let pid = upstream.snapshot.borrow().pid;
    upstream.log.hub(
        LogLevel::Info,
        &format!(
            "ready: {tools} tools, protocol {}{}",
            protocol.unwrap_or("unknown"),
            pid.map(|p| format!(", pid {p}")).unwrap_or_default()
        ),
    );
    for note in limited {
        upstream
            .log
            .hub(LogLevel::Warn, &format!("tool list over a limit: {note}"));
    }
}

/// The pages of `tools/list`, bounded as they arrive (`limits.rs`): tools past the bounds are
/// skipped or cut, and what was cut is logged and returned for the status.
async fn list_tools(
    peer: &Peer<RoleClient>,
    source_id: &str,
    limit: Duration,
) -> Result<(Vec<Tool>, Vec<String>), UpstreamError> {
    match tokio::time::timeout(limit, list_pages(peer)).await {
        Ok(Ok((tools, cuts))) => {
            for note in &cuts.notes {
                tracing::warn!(source = %source_id, "tool list over a limit: {note}");
            }
            Ok((tools, cuts.notes))
        }
        Ok(Err(e)) => Err(UpstreamError::from_service(source_id, e)),
        Err(_) => Err(UpstreamError::Timeout {
            source_id: source_id.to_owned(),
            timeout: limit,
        }),
    }
}

async fn list_pages(peer: &Peer<RoleClient>) -> Result<(Vec<Tool>, Cuts), rmcp::ServiceError> {
    let mut bounds = ToolListBounds::default();
    let mut cursor = None;
    for _ in 0..MAX_TOOL_PAGES {
        let params = cursor.map(|c| PaginatedRequestParams::default().with_cursor(Some(c)));
        let page = peer.list_tools(params).await?;
        bounds.add_page(page.tools);
        cursor = page.next_cursor;
        if cursor.is_none() || bounds.full() {
            break;
        }
    }
    Ok(bounds.finish(cursor.is_some()))
}
