//! The hub's local attack surface (issue 14), from outside: what a listener on a dead hub's port
//! receives, whether the token changes per start, where the web UI is served from.

mod support;

use std::io::{Read, Write};
use std::net::TcpListener;
use std::path::Path;
use std::process::{Command, Output};
use std::sync::{Arc, Mutex};

use support::ServedHub;

fn capa(dir: &Path, args: &[&str]) -> Output {
    support::in_dir(env!("CARGO_BIN_EXE_capa"), dir)
        .args(args)
        .output()
        .expect("capa runs")
}

/// A listener that answers every request `200 {"proof": "00…"}` and keeps what it received.
fn impostor(listener: TcpListener) -> Arc<Mutex<String>> {
    let received = Arc::new(Mutex::new(String::new()));
    let keep = received.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            let _ = stream.set_read_timeout(Some(std::time::Duration::from_millis(500)));
            let mut buffer = [0u8; 8192];
            let n = stream.read(&mut buffer).unwrap_or(0);
            keep.lock()
                .expect("lock")
                .push_str(&String::from_utf8_lossy(&buffer[..n]));
            let body = format!("{{\"proof\":\"{}\",\"ok\":true}}", "0".repeat(64));
            let _ = write!(
                stream,
                "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                body.len()
            );
        }
    });
    received
}

#[test]
fn a_listener_on_a_dead_hubs_port_never_receives_the_token() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut hub = ServedHub::start(Path::new(env!("CARGO_BIN_EXE_capa")), dir.path(), &[]);
    let url = hub.url();
    let token = hub.token();
    let discovery = std::fs::read_to_string(dir.path().join("data/hub.json")).expect("hub.json");
    assert!(capa(dir.path(), &["hub", "status"]).status.success());
    // A crash: the discovery file stays behind, and someone else takes the port.
    hub.child.kill().expect("kill -9");
    hub.child.wait().expect("reaped");
    let port = url.rsplit(':').next().expect("port");
    let listener = TcpListener::bind(format!("127.0.0.1:{port}")).expect("take the port");
    let received = impostor(listener);

    // The dead pid makes the file stale: removed, nothing sent.
    let status = capa(dir.path(), &["hub", "status"]);
    assert_eq!(status.status.code(), Some(3), "{status:?}");
    assert!(
        !dir.path().join("data/hub.json").exists(),
        "a stale file is removed"
    );

    // The same file naming a live process (this test) on that port: the impostor cannot prove
    // it holds the start's key, so it gets a challenge and nothing else.
    let forged = discovery.replace(
        &format!("\"pid\": {}", hub.child.id()),
        &format!("\"pid\": {}", std::process::id()),
    );
    assert_ne!(forged, discovery);
    std::fs::write(dir.path().join("data/hub.json"), forged).expect("write");
    for args in [
        &["hub", "status"][..],
        &["ui"],
        &["tools", "list"],
        &["hub", "pending"],
    ] {
        let _ = capa(dir.path(), args);
    }
    let received = received.lock().expect("lock").clone();
    assert!(received.contains("/api/hub/prove?challenge="), "{received}");
    assert!(
        !received.contains(&token),
        "the token reached the impostor: {received}"
    );
    assert!(
        !received.to_ascii_lowercase().contains("authorization"),
        "{received}"
    );
    assert!(
        !received.contains("/api/config") && !received.contains("/api/ui/link"),
        "{received}"
    );
}

#[test]
fn the_token_changes_on_every_start_and_a_clean_stop_removes_the_discovery_file() {
    let dir = tempfile::tempdir().expect("tempdir");
    let program = Path::new(env!("CARGO_BIN_EXE_capa"));
    let first = ServedHub::start(program, dir.path(), &[]);
    let (old_url, old_token) = (first.url(), first.token());
    let (status, _) = support::http(
        "GET",
        &format!("{old_url}/api/health"),
        &[("Authorization", &format!("Bearer {old_token}"))],
    );
    assert_eq!(status, 200);
    stop(first);
    assert!(
        !dir.path().join("data/hub.json").exists(),
        "removed on a clean stop"
    );

    let second = ServedHub::start(program, dir.path(), &[]);
    let token = second.token();
    assert_ne!(token, old_token, "a new token per start");
    let health = |token: &str| {
        support::http(
            "GET",
            &format!("{}/api/health", second.url()),
            &[("Authorization", &format!("Bearer {token}"))],
        )
        .0
    };
    assert_eq!(health(&old_token), 401);
    assert_eq!(health(&token), 200);
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        for file in ["token", "hub.json"] {
            let mode = std::fs::metadata(dir.path().join("data").join(file))
                .expect("stat")
                .permissions()
                .mode();
            assert_eq!(mode & 0o777, 0o600, "{file}");
        }
    }
}

/// SIGTERM, then waits for the child to end.
fn stop(mut hub: ServedHub) {
    let pid = hub.child.id().to_string();
    Command::new("kill")
        .args(["-TERM", &pid])
        .status()
        .expect("kill -TERM");
    hub.child.wait().expect("stopped");
}

#[test]
fn a_ui_dir_planted_above_a_copy_of_the_binary_is_not_served() {
    let dir = tempfile::tempdir().expect("tempdir");
    // A shared folder: `shared/a/b/capa`, and someone else's `shared/ui/dist/index.html`.
    let shared = dir.path().join("shared");
    std::fs::create_dir_all(shared.join("a/b")).expect("dirs");
    std::fs::create_dir_all(shared.join("ui/dist")).expect("dirs");
    std::fs::write(shared.join("ui/dist/index.html"), "PLANTED PAGE").expect("plant");
    let copy = shared.join("a/b/capa");
    std::fs::copy(env!("CARGO_BIN_EXE_capa"), &copy).expect("copy the binary");
    let hub = ServedHub::start(&copy, dir.path(), &[("CAPA_UI_DIR", None)]);
    let (_, body) = support::http("GET", &format!("{}/app/", hub.url()), &[]);
    assert!(!body.contains("PLANTED PAGE"), "{body}");
}

#[cfg(unix)]
#[test]
fn a_ui_dir_others_may_write_to_is_refused() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().expect("tempdir");
    let ui = dir.path().join("ui");
    std::fs::create_dir_all(&ui).expect("dir");
    std::fs::write(ui.join("index.html"), "OPEN TO ALL").expect("write");
    std::fs::set_permissions(&ui, std::fs::Permissions::from_mode(0o777)).expect("chmod");
    let ui_dir = ui.to_string_lossy().into_owned();
    let hub = ServedHub::start(
        Path::new(env!("CARGO_BIN_EXE_capa")),
        dir.path(),
        &[("CAPA_UI_DIR", Some(&ui_dir))],
    );
    let (status, body) = support::http("GET", &format!("{}/app/", hub.url()), &[]);
    assert_eq!(status, 503, "{body}");
    assert!(!body.contains("OPEN TO ALL"), "{body}");
    drop(hub);
    std::fs::set_permissions(&ui, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    let hub = ServedHub::start(
        Path::new(env!("CARGO_BIN_EXE_capa")),
        dir.path(),
        &[("CAPA_UI_DIR", Some(&ui_dir))],
    );
    let (status, body) = support::http("GET", &format!("{}/app/", hub.url()), &[]);
    assert_eq!((status, body.as_str()), (200, "OPEN TO ALL"));
}

/// The package layout (`<exe dir>/ui`) is served when it is the user's own, and not when
/// another user owns it (a `ui/` someone made in a shared folder the binary was copied to).
#[cfg(unix)]
#[test]
fn a_ui_beside_the_binary_is_served_only_when_nobody_else_owns_it() {
    let dir = tempfile::tempdir().expect("tempdir");
    let bin = dir.path().join("bin");
    std::fs::create_dir_all(bin.join("ui")).expect("dirs");
    std::fs::write(bin.join("ui/index.html"), "BESIDE THE BINARY").expect("write");
    let copy = bin.join("capa");
    std::fs::copy(env!("CARGO_BIN_EXE_capa"), &copy).expect("copy the binary");
    let served = |hub: &ServedHub| support::http("GET", &format!("{}/app/", hub.url()), &[]).1;
    let hub = ServedHub::start(&copy, dir.path(), &[("CAPA_UI_DIR", None)]);
    assert_eq!(served(&hub), "BESIDE THE BINARY");
    drop(hub);
    // Owned by someone else (nobody, 65534): only root can hand a file over, as CI runs.
    let handed = std::os::unix::fs::chown(bin.join("ui"), Some(65534), None)
        .and_then(|()| std::os::unix::fs::chown(bin.join("ui/index.html"), Some(65534), None));
    if let Err(e) = handed {
        // By hand a non-root developer skips this half; under scripts/test that is a failure.
        assert!(
            std::env::var_os("CAPA_REQUIRE_ALL").is_none(),
            "CAPA_REQUIRE_ALL is set but the other-owner half cannot run: chown needs root ({e})"
        );
        eprintln!("skipping the other-owner half: cannot chown here (not root): {e}");
        return;
    }
    let hub = ServedHub::start(&copy, dir.path(), &[("CAPA_UI_DIR", None)]);
    assert!(!served(&hub).contains("BESIDE THE BINARY"));
}

/// `capa mcp` forwarding to a running hub checks it is still there before every request: after
/// the hub dies, a listener on its port gets nothing from the bridge.
#[test]
fn a_bridge_sends_nothing_to_whoever_takes_a_dead_hubs_port() {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::create_dir_all(dir.path().join("config")).expect("config dir");
    std::fs::write(
        dir.path().join("config/capabilities.yaml"),
        "options: { demo: true, toolExposure: expose-all }\n",
    )
    .expect("config");
    let mut hub = ServedHub::start(Path::new(env!("CARGO_BIN_EXE_capa")), dir.path(), &[]);
    let token = hub.token();
    let url = hub.url();
    let mut bridge = support::StdioMcp::start(dir.path());
    let listed = bridge.request(2, "tools/list", &serde_json::json!({}));
    assert!(listed.to_string().contains("demo."), "{listed}");

    hub.child.kill().expect("kill -9");
    hub.child.wait().expect("reaped");
    let port = url.rsplit(':').next().expect("port");
    let received = impostor(TcpListener::bind(format!("127.0.0.1:{port}")).expect("take the port"));
    let called = bridge.request(
        3,
        "tools/call",
        &serde_json::json!({"name": "demo.add", "arguments": {"a": 1, "b": 2}}),
    );
    let listed = bridge.request(4, "tools/list", &serde_json::json!({}));
    bridge.close();
    assert!(called.to_string().contains("has stopped"), "{called}");
    assert!(listed.to_string().contains("has stopped"), "{listed}");
    let received = received.lock().expect("lock").clone();
    assert!(
        received.is_empty(),
        "the bridge sent the impostor: {received}"
    );
    assert!(!received.contains(&token));
}
