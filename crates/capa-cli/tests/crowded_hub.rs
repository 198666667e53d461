//! A hub crowded by connections that need no token (issue 39, case 6), with the real `capa hub
//! serve` under a file limit of 1,024: unfinished request heads from a local process must not
//! stop it answering its clients, must be closed, and must give their memory back; and `capa hub
//! status` must tell a hub that does not answer from one that is gone.
#![cfg(unix)]

mod support;

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::Path;
use std::process::{Command, Output};
use std::time::{Duration, Instant};

use support::ServedHub;

/// Issue 39's numbers: more unfinished heads than the hub may open files.
const HEADS: usize = 1_100;
const FILE_LIMIT: u32 = 1_024;

fn capa(dir: &Path, args: &[&str]) -> Output {
    support::in_dir(env!("CARGO_BIN_EXE_capa"), dir)
        .args(args)
        .output()
        .expect("capa runs")
}

fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// This test opens over a thousand sockets itself: raises its own soft file limit to `wanted`
/// when the hard limit allows it (many systems start programs at a soft limit of 1,024).
fn raise_own_file_limit(wanted: u64) {
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit and setrlimit read and write one `rlimit` we own.
    #[expect(
        unsafe_code,
        reason = "getrlimit(2)/setrlimit(2) have no safe wrapper in std"
    )]
    let read = unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &raw mut limit) };
    assert_eq!(read, 0, "getrlimit");
    if limit.rlim_cur >= wanted {
        return;
    }
    assert!(
        limit.rlim_max >= wanted,
        "this test opens {wanted} files but the hard limit is {}; raise it (`ulimit -Hn`)",
        limit.rlim_max
    );
    limit.rlim_cur = wanted;
    #[expect(
        unsafe_code,
        reason = "getrlimit(2)/setrlimit(2) have no safe wrapper in std"
    )]
    let set = unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &raw const limit) };
    assert_eq!(set, 0, "setrlimit");
}

/// `GET /api/health` with the token on a new connection: the status (0 when no answer came
/// within five seconds) and the body.
fn health(addr: SocketAddr, token: &str) -> (u16, String) {
    let Ok(mut stream) = TcpStream::connect_timeout(&addr, Duration::from_secs(5)) else {
        return (0, "no connection".to_owned());
    };
    stream
        .set_read_timeout(Some(Duration::from_secs(5)))
        .expect("timeout");
    let request = format!(
        "GET /api/health HTTP/1.1\r\nHost: {addr}\r\nAuthorization: Bearer {token}\r\nConnection: close\r\n\r\n"
    );
    if stream.write_all(request.as_bytes()).is_err() {
        return (0, "the request could not be sent".to_owned());
    }
    let mut answer = Vec::new();
    let _ = stream.read_to_end(&mut answer);
    let answer = String::from_utf8_lossy(&answer).into_owned();
    let status = answer
        .split_whitespace()
        .nth(1)
        .and_then(|code| code.parse().ok())
        .unwrap_or(0);
    (status, answer)
}

/// Whether the hub closed `stream` before `deadline` (an answer before the end, such as a
/// `408`, is read past).
fn closed_by(stream: &mut TcpStream, deadline: Instant) -> bool {
    let mut buffer = [0u8; 1024];
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() || stream.set_read_timeout(Some(left)).is_err() {
            return false;
        }
        match stream.read(&mut buffer) {
            Ok(0) => return true,
            Ok(_) => {}
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                ) =>
            {
                return false;
            }
            // Reset: closed too.
            Err(_) => return true,
        }
    }
}

/// A line of `/proc/<pid>/<file>` that starts with `key`, its first number.
#[cfg(target_os = "linux")]
fn proc_number(pid: u32, file: &str, key: &str) -> Option<u64> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/{file}")).ok()?;
    let line = text.lines().find(|line| line.starts_with(key))?;
    line[key.len()..].split_whitespace().next()?.parse().ok()
}

/// The hub's resident memory once it has settled after starting (two readings half a second
/// apart within 256 KiB of each other; five seconds at most), in KiB.
#[cfg(target_os = "linux")]
fn settled_rss(pid: u32) -> u64 {
    let read = || proc_number(pid, "status", "VmRSS:").expect("VmRSS");
    let until = Instant::now() + Duration::from_secs(5);
    let mut last = read();
    while Instant::now() < until {
        std::thread::sleep(Duration::from_millis(500));
        let now = read();
        if now.abs_diff(last) < 256 {
            return now;
        }
        last = now;
    }
    last
}

#[cfg(target_os = "linux")]
fn open_files(pid: u32) -> usize {
    std::fs::read_dir(format!("/proc/{pid}/fd")).map_or(0, Iterator::count)
}

#[test]
fn unfinished_request_heads_leave_the_hub_answering_and_are_closed_within_30_s() {
    raise_own_file_limit(HEADS as u64 + 512);
    let dir = tempfile::tempdir().expect("tempdir");
    let hub = ServedHub::start_with_file_limit(dir.path(), FILE_LIMIT);
    let pid = hub.child.id();
    let addr: SocketAddr = hub
        .url()
        .strip_prefix("http://")
        .and_then(|a| a.parse().ok())
        .expect("a loopback address");
    let token = hub.token();
    #[cfg(target_os = "linux")]
    let (files_before, rss_before) = {
        assert_eq!(
            proc_number(pid, "limits", "Max open files"),
            Some(u64::from(FILE_LIMIT)),
            "the hub runs under the file limit"
        );
        let rss = settled_rss(pid);
        (open_files(pid), rss)
    };

    let opened = Instant::now();
    let mut heads: Vec<TcpStream> = (0..HEADS)
        .map(|_| {
            let mut stream =
                TcpStream::connect_timeout(&addr, Duration::from_secs(10)).expect("connect");
            // No blank line at the end: the hub waits for the rest of the head. (A connection
            // the hub already closed for room may refuse the write; it is closed, as it should.)
            let _ = stream.write_all(
                format!("GET /api/health HTTP/1.1\r\nHost: {addr}\r\nX-Unfinished: yes\r\n")
                    .as_bytes(),
            );
            stream
        })
        .collect();
    #[cfg(target_os = "linux")]
    let rss_crowded = proc_number(pid, "status", "VmRSS:").expect("VmRSS");

    let asked = Instant::now();
    let (status, answer) = health(addr, &token);
    let took = asked.elapsed();
    assert_eq!(
        status, 200,
        "/api/health with {HEADS} unfinished heads open: {answer}"
    );
    assert!(
        took < Duration::from_secs(1),
        "/api/health took {took:?} with {HEADS} unfinished heads open"
    );
    let status = capa(dir.path(), &["hub", "status"]);
    assert!(
        status.status.success() && stdout(&status).starts_with("Hub running at"),
        "{status:?}"
    );

    let deadline = opened + Duration::from_secs(30);
    for (i, stream) in heads.iter_mut().enumerate() {
        assert!(
            closed_by(stream, deadline),
            "unfinished head {i} of {HEADS} is still open 30 s after the first was opened"
        );
    }
    drop(heads);

    #[cfg(target_os = "linux")]
    {
        // The hub's side is closed too, and the memory the heads held is given back (glibc
        // keeps freed memory resident unless asked): polled for at most fifteen seconds. Five
        // were once not enough on a loaded machine (CI, 2026-12-06: 22 KiB over the bound); the
        // poll ends as soon as both hold, so a quick hub waits no longer.
        let settled = Instant::now() + Duration::from_secs(15);
        let (mut files, mut rss) = (usize::MAX, u64::MAX);
        while Instant::now() < settled {
            files = open_files(pid);
            rss = proc_number(pid, "status", "VmRSS:").expect("VmRSS");
            if files <= files_before + 4
                && rss <= rss_before + rss_crowded.saturating_sub(rss_before) / 2
            {
                break;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        eprintln!(
            "hub RSS: {rss_before} KiB before, {rss_crowded} KiB with {HEADS} heads, {rss} KiB after; files {files_before} before, {files} after"
        );
        assert!(
            files <= files_before + 4,
            "the hub still holds {files} files (had {files_before})"
        );
        assert!(
            rss <= rss_before + rss_crowded.saturating_sub(rss_before) / 2,
            "the hub kept the heads' memory: {rss_before} KiB before, {rss_crowded} KiB crowded, {rss} KiB after"
        );
    }
    let (status, answer) = health(addr, &token);
    assert_eq!(status, 200, "{answer}");
}

/// SIGSTOP or SIGCONT to the hub.
fn signal(hub: &ServedHub, signal: &str) {
    let sent = Command::new("kill")
        .args([signal, &hub.child.id().to_string()])
        .status()
        .expect("kill");
    assert!(sent.success(), "kill {signal}");
}

#[test]
fn hub_status_tells_a_hub_that_does_not_answer_from_one_that_is_gone() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut hub = ServedHub::start(Path::new(env!("CARGO_BIN_EXE_capa")), dir.path(), &[]);
    let pid = hub.child.id();

    // A stopped process: the kernel still takes its connections, nobody answers them.
    signal(&hub, "-STOP");
    let stuck = capa(dir.path(), &["hub", "status"]);
    let stuck_json = capa(dir.path(), &["hub", "status", "--json"]);
    signal(&hub, "-CONT");
    let text = stdout(&stuck);
    assert_eq!(stuck.status.code(), Some(4), "{stuck:?}");
    assert!(
        text.starts_with("A hub is running for ")
            && text.contains(&format!("(process {pid}, {}", hub.url()))
            && text.contains("did not answer within 3 s: it is busy or stuck")
            && text.contains(&format!("`kill {pid}`")),
        "{text}"
    );
    assert!(!text.contains("No hub is running"), "{text}");
    let json: serde_json::Value = serde_json::from_slice(&stuck_json.stdout).expect("JSON");
    assert_eq!(stuck_json.status.code(), Some(4), "{stuck_json:?}");
    assert_eq!(json["running"], true, "{json}");
    assert_eq!(json["answering"], false, "{json}");
    assert_eq!(json["problem"], "timed_out", "{json}");
    assert_eq!(json["pid"], pid, "{json}");
    assert!(
        dir.path().join("data/hub.json").exists(),
        "a hub that does not answer keeps its discovery file"
    );

    let answering = capa(dir.path(), &["hub", "status"]);
    assert!(answering.status.success(), "{answering:?}");
    assert!(
        stdout(&answering).starts_with("Hub running at"),
        "{answering:?}"
    );

    hub.child.kill().expect("kill -9");
    hub.child.wait().expect("reaped");
    let gone = capa(dir.path(), &["hub", "status"]);
    assert_eq!(gone.status.code(), Some(3), "{gone:?}");
    assert!(
        stdout(&gone).starts_with("No hub is running for "),
        "{gone:?}"
    );
}
