//! The desktop app as the bench runs it: its own data and config dirs, its log lines as they
//! arrive, and what a terminal does to it (deny an approval).

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, Command};

use crate::procs;

/// The app, started with its own data and config dirs, and its log lines as they arrive.
pub(super) struct App {
    child: Mutex<Child>,
    pub(super) pid: u32,
    pub(super) url: String,
    pub(super) token: String,
    pub(super) lines: Arc<Mutex<Vec<(Instant, String)>>>,
    /// When the app was started.
    pub(super) started: Instant,
    data: PathBuf,
    _dir: tempfile::TempDir,
}

impl App {
    /// Denies the pending approvals of `run` in the app's database, as a terminal does.
    pub(super) fn deny_as_terminal(&self, run: &str) -> anyhow::Result<()> {
        let store = capa_store::Store::open(&self.data.join("hub.db"))?;
        let now = i64::try_from(
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)?
                .as_millis(),
        )?;
        for approval in store.pending_approvals(now)? {
            if approval.run_id == run {
                capa_core::decide_in_store(&store, &approval.id, capa_core::Choice::Deny, "bench")?;
            }
        }
        Ok(())
    }

    pub(super) async fn start(bin: &Path, yaml: &str, background: bool) -> anyhow::Result<Self> {
        let dir = tempfile::tempdir()?;
        let config = procs::write_config(dir.path(), yaml)?;
        let data = dir.path().join("data");
        let port = std::net::TcpListener::bind("127.0.0.1:0")?
            .local_addr()?
            .port();
        let mut command = Command::new(bin);
        command
            .arg("--config")
            .arg(&config)
            .args(["--http", &format!("127.0.0.1:{port}")])
            .env("CAPA_DATA_DIR", &data)
            .env("CAPA_CONFIG_DIR", dir.path().join("config"))
            .env("CAPA_NO_BROWSER", "1")
            .env(
                capa_embed::MODEL_IDLE_ENV,
                procs::MODEL_IDLE_SECS.to_string(),
            )
            .env("RUST_LOG", "warn,capabilities_desktop=info")
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        if background {
            command.arg("--background");
        }
        let started = Instant::now();
        let mut child = command.spawn().context("starting the desktop app")?;
        let pid = child.id().context("app pid")?;
        let lines: Arc<Mutex<Vec<(Instant, String)>>> = Arc::default();
        if let Some(stderr) = child.stderr.take() {
            let lines = lines.clone();
            tokio::spawn(async move {
                let mut reader = BufReader::new(stderr).lines();
                while let Ok(Some(line)) = reader.next_line().await {
                    if let Ok(mut lines) = lines.lock() {
                        lines.push((Instant::now(), line));
                    }
                }
            });
        }
        let app = Self {
            child: Mutex::new(child),
            pid,
            url: String::new(),
            token: String::new(),
            lines,
            started,
            data: data.clone(),
            _dir: dir,
        };
        for _ in 0..600 {
            if let Some(why) = app.exited() {
                bail!("the desktop app exited at start: {why}");
            }
            if let Some((url, token)) = procs::discovery(&data)? {
                return Ok(Self { url, token, ..app });
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        bail!(
            "the desktop app did not start its hub in 30 s:\n{}",
            app.log()
        )
    }

    /// Why the app has exited (its status and log), if it has.
    pub(super) fn exited(&self) -> Option<String> {
        let status = self.child.lock().ok()?.try_wait().ok()??;
        Some(format!("{status}\n{}", self.log()))
    }

    fn log(&self) -> String {
        self.lines
            .lock()
            .map(|lines| {
                let tail = lines.len().saturating_sub(30);
                lines[tail..]
                    .iter()
                    .map(|(_, l)| l.as_str())
                    .collect::<Vec<_>>()
                    .join("\n")
            })
            .unwrap_or_default()
    }

    /// The first log line after `since` holding every one of `parts`, with when it arrived.
    pub(super) async fn wait_line(
        &self,
        since: Instant,
        parts: &[&str],
    ) -> anyhow::Result<(Instant, String)> {
        self.wait_line_within(since, parts, Duration::from_secs(20))
            .await
    }

    /// [`Self::wait_line`], waiting at most `within`.
    pub(super) async fn wait_line_within(
        &self,
        since: Instant,
        parts: &[&str],
        within: Duration,
    ) -> anyhow::Result<(Instant, String)> {
        let deadline = Instant::now() + within;
        loop {
            let found = self.lines.lock().ok().and_then(|lines| {
                lines
                    .iter()
                    .find(|(at, line)| *at >= since && parts.iter().all(|p| line.contains(p)))
                    .cloned()
            });
            if let Some(found) = found {
                return Ok(found);
            }
            if let Some(why) = self.exited() {
                bail!("the desktop app exited: {why}");
            }
            if Instant::now() > deadline {
                bail!(
                    "no log line with {parts:?} from the desktop app in {} s:\n{}",
                    within.as_secs(),
                    self.log()
                );
            }
            tokio::time::sleep(Duration::from_millis(2)).await;
        }
    }

    /// Quits like the tray's "Quit" (SIGTERM stops the hub and its upstreams), then kills.
    pub(super) async fn stop(self) {
        let _ = Command::new("kill")
            .args(["-TERM", &self.pid.to_string()])
            .status()
            .await;
        for _ in 0..100 {
            if self.exited().is_some() {
                return;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        if let Ok(mut child) = self.child.lock() {
            let _ = child.start_kill();
        }
    }
}
