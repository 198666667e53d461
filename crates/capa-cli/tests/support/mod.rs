//! Helpers shared by the CLI's test binaries.
// Each test binary uses some of these helpers.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

/// The repository's root.
pub(crate) fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The Node that runs upstream servers: the repository's own when there is one.
pub(crate) fn node() -> PathBuf {
    let bundled = repo_root().join("node_modules/.bin/node");
    if bundled.exists() {
        bundled
    } else {
        PathBuf::from("node")
    }
}

/// server-everything's entry point (installed by `npm ci`).
pub(crate) fn everything_js() -> PathBuf {
    let js = repo_root().join("node_modules/@modelcontextprotocol/server-everything/dist/index.js");
    assert!(js.exists(), "{} missing: run npm ci", js.display());
    js.canonicalize().expect("canonical path")
}

/// `program` run in `dir` as these tests run capa: `dir/data` and `dir/config` as its data and
/// config dirs, no browser, no `RUST_LOG` from outside.
pub(crate) fn in_dir(program: impl AsRef<std::ffi::OsStr>, dir: &Path) -> Command {
    let mut command = Command::new(program);
    command
        .current_dir(dir)
        .env("CAPA_DATA_DIR", dir.join("data"))
        .env("CAPA_CONFIG_DIR", dir.join("config"))
        .env("CAPA_NO_BROWSER", "1")
        .env_remove("RUST_LOG");
    command
}

/// Runs capa on a pseudo-terminal (util-linux `script`), as a person at a terminal does, with
/// `input` typed in. Output is the terminal's (stdout and stderr together).
pub(crate) fn at_terminal(dir: &Path, args: &[&str], input: &str) -> Output {
    let quote = |s: &str| format!("'{}'", s.replace('\'', "'\\''"));
    let line = std::iter::once(env!("CARGO_BIN_EXE_capa"))
        .chain(args.iter().copied())
        .map(quote)
        .collect::<Vec<_>>()
        .join(" ");
    let mut child = in_dir("script", dir)
        .args(["-qec", &line, "/dev/null"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("script runs");
    if let Some(mut stdin) = child.stdin.take() {
        // The prompt reads a line once it is up; typed-ahead input waits in the terminal.
        std::io::Write::write_all(&mut stdin, input.as_bytes()).expect("type");
    }
    child.wait_with_output().expect("script ends")
}

/// A `capa hub serve` child, stopped (SIGKILL) when dropped.
pub(crate) struct ServedHub {
    pub child: std::process::Child,
    pub data_dir: std::path::PathBuf,
}

impl Drop for ServedHub {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl ServedHub {
    /// Starts `program hub serve` on a free loopback port with `dir`'s data and config dirs,
    /// and waits for its discovery file; `env` is added (a `None` value removes a variable).
    pub(crate) fn start(program: &Path, dir: &Path, env: &[(&str, Option<&str>)]) -> Self {
        let mut command = in_dir(program, dir);
        command.args(["hub", "serve", "--http", "127.0.0.1:0"]);
        for (key, value) in env {
            match value {
                Some(value) => command.env(key, value),
                None => command.env_remove(key),
            };
        }
        Self::spawn(command, dir)
    }

    /// [`ServedHub::start`] of this crate's `capa` under a file limit of `files` (soft and
    /// hard, as `ulimit -n` sets them): `sh` sets it and `exec`s capa, so the hub keeps the pid
    /// its discovery file names.
    pub(crate) fn start_with_file_limit(dir: &Path, files: u32) -> Self {
        let mut command = in_dir("sh", dir);
        command.args([
            "-c",
            "ulimit -n \"$0\" && exec \"$@\"",
            &files.to_string(),
            env!("CARGO_BIN_EXE_capa"),
            "hub",
            "serve",
            "--http",
            "127.0.0.1:0",
        ]);
        Self::spawn(command, dir)
    }

    fn spawn(mut command: Command, dir: &Path) -> Self {
        command.stdout(Stdio::null()).stderr(Stdio::null());
        let hub = Self {
            child: command.spawn().expect("hub serve"),
            data_dir: dir.join("data"),
        };
        let deadline = std::time::Instant::now() + std::time::Duration::from_mins(1);
        while hub.discovery().is_none() {
            assert!(
                std::time::Instant::now() < deadline,
                "the hub did not start"
            );
            std::thread::sleep(std::time::Duration::from_millis(100));
        }
        hub
    }

    /// `hub.json` as JSON, once it names this child.
    pub(crate) fn discovery(&self) -> Option<serde_json::Value> {
        let text = std::fs::read_to_string(self.data_dir.join("hub.json")).ok()?;
        let value: serde_json::Value = serde_json::from_str(&text).ok()?;
        (value["pid"].as_u64() == Some(u64::from(self.child.id()))).then_some(value)
    }

    pub(crate) fn url(&self) -> String {
        self.discovery()
            .and_then(|d| d["url"].as_str().map(str::to_owned))
            .expect("url")
    }

    pub(crate) fn token(&self) -> String {
        std::fs::read_to_string(self.data_dir.join("token"))
            .expect("token")
            .trim()
            .to_owned()
    }
}

/// A plain HTTP/1.1 request to `url` (`http://host:port/path`), redirects not followed: the
/// status and the body.
pub(crate) fn http(method: &str, url: &str, headers: &[(&str, &str)]) -> (u16, String) {
    use std::io::{Read, Write};
    let rest = url.strip_prefix("http://").expect("http URL");
    let (host, path) = rest.split_once('/').unwrap_or((rest, ""));
    let mut stream = std::net::TcpStream::connect(host).expect("connect");
    let extra: String = headers
        .iter()
        .map(|(k, v)| format!("{k}: {v}\r\n"))
        .collect();
    write!(
        stream,
        "{method} /{path} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\nContent-Length: 0\r\n{extra}\r\n"
    )
    .expect("request");
    let mut answer = String::new();
    let _ = stream.read_to_string(&mut answer);
    let status = answer
        .split_whitespace()
        .nth(1)
        .and_then(|code| code.parse().ok())
        .unwrap_or(0);
    let body = answer
        .split_once("\r\n\r\n")
        .map(|(_, b)| b.to_owned())
        .unwrap_or_default();
    (status, body)
}

/// `capa mcp` driven over pipes by a minimal JSON-RPC client (no terminal: as a client app
/// starts it).
pub(crate) struct StdioMcp {
    child: std::process::Child,
    input: Option<std::process::ChildStdin>,
    output: std::io::BufReader<std::process::ChildStdout>,
}

impl StdioMcp {
    /// Starts `capa mcp` in `dir` and initializes the session.
    pub(crate) fn start(dir: &Path) -> Self {
        Self::start_at(dir, dir)
    }

    /// [`StdioMcp::start`] with `dir`'s data and config dirs, run in `cwd` (a project).
    pub(crate) fn start_at(dir: &Path, cwd: &Path) -> Self {
        let mut child = in_dir(env!("CARGO_BIN_EXE_capa"), dir)
            .current_dir(cwd)
            .arg("mcp")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("capa mcp runs");
        let input = child.stdin.take();
        let output = std::io::BufReader::new(child.stdout.take().expect("stdout"));
        let mut mcp = Self {
            child,
            input,
            output,
        };
        mcp.request(
            1,
            "initialize",
            &serde_json::json!({"protocolVersion": "2025-06-18", "capabilities": {},
                "clientInfo": {"name": "capa-cli-test", "version": "1"}}),
        );
        mcp.notify("notifications/initialized");
        mcp
    }

    fn send(&mut self, message: &serde_json::Value) {
        use std::io::Write;
        let input = self.input.as_mut().expect("stdin open");
        writeln!(input, "{message}").expect("send");
        input.flush().expect("flush");
    }

    pub(crate) fn notify(&mut self, method: &str) {
        self.send(&serde_json::json!({"jsonrpc": "2.0", "method": method}));
    }

    /// Sends a request and returns its answer (other messages are skipped).
    pub(crate) fn request(
        &mut self,
        id: i64,
        method: &str,
        params: &serde_json::Value,
    ) -> serde_json::Value {
        use std::io::BufRead;
        self.send(
            &serde_json::json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}),
        );
        let mut line = String::new();
        loop {
            line.clear();
            assert!(
                self.output.read_line(&mut line).expect("read") > 0,
                "capa mcp ended"
            );
            let message: serde_json::Value = serde_json::from_str(&line).expect("a JSON-RPC line");
            if message["id"] == id {
                return message;
            }
        }
    }

    /// Closes stdin and waits for the process to end.
    pub(crate) fn close(mut self) {
        drop(self.input.take());
        let _ = self.child.wait();
    }
}

impl Drop for StdioMcp {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
