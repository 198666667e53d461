//! The supervisor on tokio's paused clock: restart with doubling backoff up to the cap, the reset
//! after a healthy connection, a failing `tools/list`, a refresh that fails, a change announced on
//! an initialize-era session, and stop. The servers are real: server-everything from
//! `node_modules`, `tests/fixtures/listing_server.py` (official Python SDK) and a command that
//! does not exist.
//!
//! Paused time and real children: a paused clock jumps to the next timer whenever the runtime
//! has nothing to run, and waiting for a child's pipe is "nothing to run", so a connect or list
//! timeout would fire at once while the child is still starting. Tests that talk to a child hold
//! the clock ([`ClockHold`]): while a `spawn_blocking` task runs, tokio's current-thread runtime
//! does not auto-advance, so time moves only by `tokio::time::advance`, exactly when the test
//! says. A test with no child (a command that cannot start) lets the clock auto-advance.

use std::path::Path;
use std::time::Duration;

use capa_upstream::{
    SupervisorTimings, Upstream, UpstreamEvent, UpstreamSpec, UpstreamState, UpstreamStatus,
    UpstreamTransport,
};
use tokio::sync::mpsc;
use tokio::time::{Instant, advance};

use crate::limits::{args, python, text};

const TIMINGS: SupervisorTimings = SupervisorTimings {
    min_backoff: Duration::from_secs(1),
    max_backoff: Duration::from_secs(4),
    healthy_after: Duration::from_mins(1),
    list_timeout: Duration::from_secs(30),
    give_up_after: 20,
    long_backoff: Duration::from_mins(5),
};

/// Stops tokio's paused clock from auto-advancing while it lives (see the module comment).
struct ClockHold(Option<std::sync::mpsc::Sender<()>>);

impl ClockHold {
    fn new() -> Self {
        let (release, held) = std::sync::mpsc::channel::<()>();
        // Returns when the sender is dropped.
        drop(tokio::task::spawn_blocking(move || held.recv()));
        Self(Some(release))
    }
}

impl Drop for ClockHold {
    fn drop(&mut self) {
        self.0.take();
    }
}

fn stdio(source_id: &str, command: &str, args: Vec<String>) -> UpstreamSpec {
    UpstreamSpec {
        source_id: source_id.into(),
        connection: None,
        transport: UpstreamTransport::Stdio {
            command: command.into(),
            args,
            env: std::collections::BTreeMap::default(),
            cwd: None,
        },
        call_timeout: Duration::from_hours(1),
    }
}

fn everything() -> UpstreamSpec {
    let script = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../node_modules/@modelcontextprotocol/server-everything/dist/index.js");
    assert!(
        script.exists(),
        "{} is missing: run `npm ci` (scripts/test does)",
        script.display()
    );
    stdio(
        "everything",
        "node",
        vec![script.display().to_string(), "stdio".into()],
    )
}

fn listing(extra: &[&str]) -> UpstreamSpec {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/listing_server.py");
    let mut all = vec![script.display().to_string()];
    all.extend(extra.iter().map(|a| (*a).to_owned()));
    stdio("listing", &python().display().to_string(), all)
}

/// Waits (on the upstream's own reports, no clock) until its status satisfies `wanted`.
async fn until(
    upstream: &Upstream,
    events: &mut mpsc::UnboundedReceiver<UpstreamEvent>,
    wanted: impl Fn(&UpstreamStatus) -> bool,
) -> UpstreamStatus {
    loop {
        let status = upstream.status();
        if wanted(&status) {
            return status;
        }
        events
            .recv()
            .await
            .expect("the supervisor reports until it stops");
    }
}

/// Lets every task that can run, run (the supervisor after a timer fired).
async fn settle() {
    for _ in 0..20 {
        tokio::task::yield_now().await;
    }
}

/// The supervisor waits exactly `wait` after a failure: not restarted 1 ms before, restarted at.
async fn restarts_after(upstream: &Upstream, wait: Duration) {
    let before = upstream.status().restarts;
    advance(
        wait.checked_sub(Duration::from_millis(1))
            .expect("waits are longer than 1 ms"),
    )
    .await;
    settle().await;
    assert_eq!(
        upstream.status().restarts,
        before,
        "restarted before {wait:?}"
    );
    advance(Duration::from_millis(1)).await;
    settle().await;
    assert_eq!(
        upstream.status().restarts,
        before + 1,
        "not restarted at {wait:?}"
    );
}

fn kill(pid: u32) {
    let pid = i32::try_from(pid).expect("a pid fits in i32");
    // SAFETY: kill(2) on the test's own grandchild, which is still running (status shows it).
    #[expect(unsafe_code, reason = "kill(2) has no safe wrapper in std or tokio")]
    let sent = unsafe { libc::kill(pid, libc::SIGKILL) };
    assert_eq!(sent, 0, "kill {pid}");
}

/// Whether a process runs under `pid`: `/proc/<pid>` exists and it is not a zombie.
fn alive(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| {
        !stat
            .rsplit(')')
            .next()
            .unwrap_or("")
            .trim_start()
            .starts_with('Z')
    })
}

fn ready(s: &UpstreamStatus) -> bool {
    s.state == UpstreamState::Ready
}

fn down(s: &UpstreamStatus) -> bool {
    s.state == UpstreamState::Down
}

#[tokio::test(start_paused = true)]
async fn a_command_that_cannot_start_is_retried_with_doubling_backoff_up_to_the_cap() {
    // No child ever runs, so the clock may auto-advance: each wait passes at once, and the
    // paused clock says how long it was.
    let (tx, mut events) = mpsc::unbounded_channel();
    let upstream = Upstream::start_with(
        stdio("absent", "/nonexistent/capa-no-such-server", Vec::new()),
        tx,
        TIMINGS,
    );
    let mut failures = Vec::new();
    while failures.len() < 6 {
        events.recv().await.expect("a report per failure");
        failures.push(Instant::now());
    }
    let waits: Vec<Duration> = failures.windows(2).map(|w| w[1] - w[0]).collect();
    let secs = Duration::from_secs;
    assert_eq!(waits, [secs(1), secs(2), secs(4), secs(4), secs(4)]);
    let status = upstream.status();
    assert_eq!(status.state, UpstreamState::Down, "{status:?}");
    assert!(status.restarts >= 5, "{status:?}");
    let error = status.last_error.unwrap_or_default();
    assert!(
        error.contains("cannot start `/nonexistent/capa-no-such-server`"),
        "{error}"
    );
    upstream.shutdown().await;
    assert_eq!(upstream.status().state, UpstreamState::Stopped);
}

/// A local command that failed `give_up_after` times in a row is not started again: it stays
/// down, saying why and what to do, until the hub starts it again (issue 41: it was retried
/// forever). A remote source is still tried, at the long interval.
#[tokio::test(start_paused = true)]
async fn a_command_that_keeps_failing_is_given_up_and_a_remote_source_slows_down() {
    let timings = SupervisorTimings {
        give_up_after: 3,
        ..TIMINGS
    };
    let (tx, mut events) = mpsc::unbounded_channel();
    let local = Upstream::start_with(
        stdio("absent", "/nonexistent/capa-no-such-server", Vec::new()),
        tx,
        timings,
    );
    let mut reports = 0;
    while local
        .status()
        .last_error
        .as_deref()
        .is_none_or(|e| !e.contains("stopped trying"))
    {
        events.recv().await.expect("a report per failure");
        reports += 1;
        assert!(reports <= 10, "still trying: {:?}", local.status());
    }
    let status = local.status();
    assert_eq!(status.state, UpstreamState::Down, "{status:?}");
    assert_eq!(status.restarts, 2, "three starts in all: {status:?}");
    let error = status.last_error.unwrap_or_default();
    assert!(
        error.contains("cannot start `/nonexistent/capa-no-such-server`"),
        "{error}"
    );
    assert!(
        error.contains("stopped trying after 3 failures in a row"),
        "{error}"
    );
    assert!(error.contains("press Restart"), "{error}");
    // An hour later it has not been started again.
    tokio::time::sleep(Duration::from_hours(1)).await;
    let later = local.status();
    assert_eq!(
        (later.state, later.restarts),
        (UpstreamState::Down, 2),
        "{later:?}"
    );
    local.shutdown().await;
    assert_eq!(local.status().state, UpstreamState::Stopped);

    // A remote source past the same count waits the long interval between tries instead.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free port")
        .port();
    let (tx, mut events) = mpsc::unbounded_channel();
    let remote = Upstream::start_with(
        UpstreamSpec {
            source_id: "remote".into(),
            connection: None,
            transport: UpstreamTransport::Http {
                url: format!("http://127.0.0.1:{port}/mcp"),
                headers: std::collections::BTreeMap::default(),
                oauth: None,
            },
            call_timeout: Duration::from_hours(1),
        },
        tx,
        timings,
    );
    let mut failures = Vec::new();
    while failures.len() < 5 {
        events.recv().await.expect("a report per failure");
        failures.push(Instant::now());
    }
    let waits: Vec<Duration> = failures.windows(2).map(|w| w[1] - w[0]).collect();
    let secs = Duration::from_secs;
    assert_eq!(waits, [secs(1), secs(2), secs(300), secs(300)]);
    assert!(
        !remote
            .status()
            .last_error
            .unwrap_or_default()
            .contains("stopped trying")
    );
    remote.shutdown().await;
}

#[tokio::test(start_paused = true)]
async fn a_crashed_server_is_restarted_with_doubling_backoff_and_a_healthy_run_resets_it() {
    let _hold = ClockHold::new();
    let (tx, mut events) = mpsc::unbounded_channel();
    let upstream = Upstream::start_with(everything(), tx, TIMINGS);
    let first = until(&upstream, &mut events, ready).await;
    let first_pid = first.pid.expect("a local server has a pid");

    // Crash 1: the first wait.
    kill(first_pid);
    let lost = until(&upstream, &mut events, down).await;
    assert!(
        lost.last_error
            .as_deref()
            .unwrap_or("")
            .contains("connection closed"),
        "{lost:?}"
    );
    restarts_after(&upstream, TIMINGS.min_backoff).await;
    let second = until(&upstream, &mut events, ready).await;
    let second_pid = second.pid.expect("pid");
    assert_ne!(second_pid, first_pid);
    assert!(!alive(first_pid), "the crashed server is gone");

    // Crash 2 right away: the connection was not healthy for long, so the wait doubles.
    kill(second_pid);
    until(&upstream, &mut events, down).await;
    restarts_after(&upstream, TIMINGS.min_backoff * 2).await;
    let third = until(&upstream, &mut events, ready).await;
    assert_eq!(third.restarts, 2);

    // Healthy for longer than `healthy_after`, then crash 3: back to the first wait.
    advance(TIMINGS.healthy_after + Duration::from_secs(1)).await;
    kill(third.pid.expect("pid"));
    until(&upstream, &mut events, down).await;
    restarts_after(&upstream, TIMINGS.min_backoff).await;
    let fourth = until(&upstream, &mut events, ready).await;
    assert!(fourth.tool_count > 0, "{fourth:?}");
    upstream.shutdown().await;
}

#[tokio::test(start_paused = true)]
async fn stop_ends_the_server_process() {
    let _hold = ClockHold::new();
    let (tx, mut events) = mpsc::unbounded_channel();
    let upstream = Upstream::start_with(everything(), tx, TIMINGS);
    let pid = until(&upstream, &mut events, ready).await.pid.expect("pid");
    assert!(alive(pid), "server-everything runs as {pid}");
    upstream.shutdown().await;
    let status = upstream.status();
    assert_eq!(status.state, UpstreamState::Stopped, "{status:?}");
    // The child is reaped when its transport closes (stdin closed, it exits): no process left.
    assert!(!alive(pid), "process {pid} still runs after stop");
    let err = upstream
        .call("echo", args(serde_json::json!({"message": "hi"})), None)
        .await
        .expect_err("a stopped source answers no calls");
    assert!(err.to_string().contains("stopped"), "{err}");
}

#[tokio::test(start_paused = true)]
async fn a_failing_tools_list_is_reported_and_retried() {
    let _hold = ClockHold::new();
    let (tx, mut events) = mpsc::unbounded_channel();
    let upstream = Upstream::start_with(listing(&["--fail-listing"]), tx, TIMINGS);
    let status = until(&upstream, &mut events, down).await;
    let error = status.last_error.clone().unwrap_or_default();
    assert!(
        error.contains("the tool list is broken on purpose"),
        "{status:?}"
    );
    assert_eq!(status.tool_count, 0);
    // Down is reported before the connection is closed (stdin closed, the child exits: real
    // time), and the backoff starts after it; wait for the child to be gone, letting the
    // supervisor run, so that the clock is moved only once the supervisor waits on it.
    let pid = status.pid.expect("a local server has a pid");
    while alive(pid) {
        tokio::task::yield_now().await;
    }
    settle().await;
    // A listing that fails counts as a failed connection: it is tried again after the backoff.
    restarts_after(&upstream, TIMINGS.min_backoff).await;
    upstream.shutdown().await;
}

#[tokio::test(start_paused = true)]
async fn a_change_announced_on_an_initialize_era_session_is_listed_again() {
    let _hold = ClockHold::new();
    let (tx, mut events) = mpsc::unbounded_channel();
    let upstream = Upstream::start_with(listing(&[]), tx, TIMINGS);
    let status = until(&upstream, &mut events, ready).await;
    // The fixture refuses `server/discover`: this is the older protocols' path, where the change
    // arrives as `notifications/tools/list_changed` on the session.
    let version = status.protocol_version.clone().unwrap_or_default();
    assert!(version.as_str() < "2026-07-28", "negotiated {version}");
    let grown = upstream
        .call("grow", args(serde_json::json!({"name": "fresh"})), None)
        .await
        .expect("grow");
    assert_eq!(text(&grown), "added fresh");
    until(&upstream, &mut events, |s| s.tool_count == 4).await;
    assert!(upstream.tools().iter().any(|t| t.name == "fresh"));
    upstream.shutdown().await;
}

#[tokio::test(start_paused = true)]
async fn a_refresh_that_fails_keeps_the_previous_tool_list() {
    let _hold = ClockHold::new();
    let (tx, mut events) = mpsc::unbounded_channel();
    let upstream = Upstream::start_with(listing(&[]), tx, TIMINGS);
    until(&upstream, &mut events, ready).await;
    upstream
        .call("grow", args(serde_json::json!({"name": "fresh"})), None)
        .await
        .expect("grow");
    until(&upstream, &mut events, |s| s.tool_count == 4).await;
    upstream
        .call("break_listing", None, None)
        .await
        .expect("break the listing");
    // The failed refresh sends no report of its own: ask the server until it refused a listing,
    // then let the supervisor take in the refusal.
    loop {
        let failed = upstream
            .call("failed_listings", None, None)
            .await
            .expect("the session is still served");
        if text(&failed) != "0" {
            break;
        }
        settle().await;
    }
    settle().await;
    let status = upstream.status();
    assert_eq!(status.state, UpstreamState::Ready, "{status:?}");
    let names: Vec<String> = upstream
        .tools()
        .iter()
        .map(|t| t.name.to_string())
        .collect();
    assert_eq!(
        names,
        ["grow", "break_listing", "failed_listings", "fresh"],
        "{status:?}"
    );
    upstream.shutdown().await;
}
