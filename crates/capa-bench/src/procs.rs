//! Locating the programs under test and starting them.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use anyhow::{Context, bail};
use tokio::process::{Child, Command};

/// Paths of everything a benchmark starts.
pub(crate) struct BenchEnv {
    pub capa: PathBuf,
    pub everything_js: PathBuf,
    pub filesystem_js: PathBuf,
    pub time_server: PathBuf,
    /// The catalog fixture server (tests/fixtures/catalog-server.mjs).
    pub catalog_server: PathBuf,
    /// The venv's Python, which has the `mcp` SDK.
    pub python: PathBuf,
    /// Client drivers (tests/bench/): the TypeScript SDKs, the Python SDK, and the Executor
    /// sandbox measured as a peer.
    pub ts_client: PathBuf,
    pub py_client: PathBuf,
    /// The same guest code through our hub and Executor's daemon (TS SDK 1.x).
    pub hub_calls: PathBuf,
    pub executor_peer: PathBuf,
}

impl BenchEnv {
    /// `CAPA_BIN` or the `capa` beside this executable; the repository from the working directory.
    pub(crate) fn discover() -> anyhow::Result<Self> {
        let capa = match std::env::var_os("CAPA_BIN") {
            Some(path) => PathBuf::from(path),
            None => std::env::current_exe()?.with_file_name("capa"),
        };
        if !capa.is_file() {
            bail!(
                "{} not found: build it (`cargo build --profile dist -p capa-cli`) or set CAPA_BIN",
                capa.display()
            );
        }
        let repo = std::env::current_dir()?;
        let need = |relative: &str| -> anyhow::Result<PathBuf> {
            let path = repo.join(relative);
            if !path.exists() {
                bail!(
                    "{} is missing: run from the repository root after `npm ci` and the Python venv setup",
                    path.display()
                );
            }
            Ok(path)
        };
        Ok(Self {
            everything_js: need(
                "node_modules/@modelcontextprotocol/server-everything/dist/index.js",
            )?,
            filesystem_js: need(
                "node_modules/@modelcontextprotocol/server-filesystem/dist/index.js",
            )?,
            time_server: need("tests/.venv/bin/mcp-server-time")?,
            catalog_server: need("tests/fixtures/catalog-server.mjs")?,
            python: need("tests/.venv/bin/python")?,
            ts_client: need("tests/bench/ts_client.mjs")?,
            py_client: need("tests/bench/py_client.py")?,
            hub_calls: need("tests/bench/hub_calls.mjs")?,
            executor_peer: {
                need("node_modules/@executor-js/runtime-quickjs/package.json")?;
                need("tests/bench/executor_peer.mjs")?
            },
            capa,
        })
    }
}

/// Where `../shared/peers/executor/setup.sh` installed Executor (npm `executor` and the MCP
/// SDK its bench upstream imports): `$EXECUTOR_CLI_DIR`, by default `/tmp/capa-peers/executor-cli`.
pub(crate) fn peer_dir() -> PathBuf {
    std::env::var_os("EXECUTOR_CLI_DIR").map_or_else(
        || PathBuf::from("/tmp/capa-peers/executor-cli"),
        PathBuf::from,
    )
}

/// A child killed when dropped.
pub(crate) struct Owned(pub Child);

impl Drop for Owned {
    fn drop(&mut self) {
        let _ = self.0.start_kill();
    }
}

/// Starts server-everything over Streamable HTTP on a free port; returns it and its URL.
pub(crate) async fn everything_http(env: &BenchEnv) -> anyhow::Result<(Owned, String)> {
    let port = std::net::TcpListener::bind("127.0.0.1:0")?
        .local_addr()?
        .port();
    let child = Command::new("node")
        .arg(&env.everything_js)
        .arg("streamableHttp")
        .env("PORT", port.to_string())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .context("starting server-everything over HTTP")?;
    for _ in 0..200 {
        if tokio::net::TcpStream::connect(("127.0.0.1", port))
            .await
            .is_ok()
        {
            return Ok((Owned(child), format!("http://127.0.0.1:{port}/mcp")));
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    bail!("server-everything did not listen on port {port}")
}

/// A running `capa hub serve` in its own data dir.
pub(crate) struct Hub {
    _child: Owned,
    pub url: String,
    pub token: String,
    pub pid: u32,
    _dir: tempfile::TempDir,
}

/// Seconds an unused search model stays loaded in the benches that measure a hub or app at
/// rest (`CAPA_MODEL_IDLE_SECS`; a person's hub keeps it 5 minutes): what they measure is the
/// memory after it was let go.
pub(crate) const MODEL_IDLE_SECS: u64 = 2;

/// Starts `capa hub serve` with `yaml` and waits for its discovery file.
pub(crate) async fn hub(env: &BenchEnv, yaml: &str) -> anyhow::Result<Hub> {
    hub_with_model(env, yaml, ModelDir::Inherit, None).await
}

/// [`hub`], its search model let go after [`MODEL_IDLE_SECS`] unused.
pub(crate) async fn resting_hub(env: &BenchEnv, yaml: &str) -> anyhow::Result<Hub> {
    hub_with_model(env, yaml, ModelDir::Inherit, Some(MODEL_IDLE_SECS)).await
}

/// Which search model a started hub sees (`CAPA_MODEL_DIR`).
#[derive(Debug, Clone, Copy)]
pub(crate) enum ModelDir<'a> {
    /// This process's environment, as it is.
    Inherit,
    /// The model in this directory.
    At(&'a Path),
    /// No model: no `CAPA_MODEL_DIR`, and the caller's config turns search by meaning off
    /// (`options.search.semantic: off`), since the dist build has `models/` beside it, which the
    /// hub would find.
    Off,
}

/// [`hub`], with the search model of `model`, kept `idle_secs` unused (`None`: the hub's
/// default).
pub(crate) async fn hub_with_model(
    env: &BenchEnv,
    yaml: &str,
    model: ModelDir<'_>,
    idle_secs: Option<u64>,
) -> anyhow::Result<Hub> {
    let dir = tempfile::tempdir()?;
    let config = write_config(dir.path(), yaml)?;
    let data = dir.path().join("data");
    let mut command = Command::new(&env.capa);
    command
        .args(["--config"])
        .arg(&config)
        .args(["hub", "serve", "--http", "127.0.0.1:0"])
        .env("CAPA_DATA_DIR", &data)
        .env("CAPA_CONFIG_DIR", dir.path().join("config"))
        .env("RUST_LOG", "warn")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .kill_on_drop(true);
    if let Some(secs) = idle_secs {
        command.env(capa_embed::MODEL_IDLE_ENV, secs.to_string());
    }
    match model {
        ModelDir::Inherit => {}
        ModelDir::At(path) => {
            command.env(capa_embed::MODEL_DIR_ENV, path);
        }
        ModelDir::Off => {
            command.env_remove(capa_embed::MODEL_DIR_ENV);
        }
    }
    let child = command.spawn().context("starting capa hub serve")?;
    let pid = child.id().context("hub pid")?;
    for _ in 0..400 {
        if let Some((url, token)) = discovery(&data)? {
            return Ok(Hub {
                _child: Owned(child),
                url,
                token,
                pid,
                _dir: dir,
            });
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    bail!("capa hub serve did not start")
}

/// The URL and token of the hub that runs for `data_dir`, once its discovery file and token
/// are written (by `capa hub serve` or the desktop app).
pub(crate) fn discovery(data_dir: &Path) -> anyhow::Result<Option<(String, String)>> {
    let (Ok(discovery), Ok(token)) = (
        std::fs::read_to_string(data_dir.join("hub.json")),
        std::fs::read_to_string(data_dir.join("token")),
    ) else {
        return Ok(None);
    };
    let value: serde_json::Value = serde_json::from_str(&discovery)?;
    let url = value["url"].as_str().context("url in hub.json")?.to_owned();
    Ok(Some((url, token.trim().to_owned())))
}

/// `capa --config <dir>/capabilities.yaml mcp` with its data and config dirs in `dir`: the stdio
/// front as a client starts it.
pub(crate) fn capa_mcp(env: &BenchEnv, dir: &Path, yaml: &str) -> anyhow::Result<Command> {
    let config = write_config(dir, yaml)?;
    let mut command = Command::new(&env.capa);
    command
        .arg("--config")
        .arg(&config)
        .arg("mcp")
        .env("CAPA_DATA_DIR", dir.join("data"))
        .env("CAPA_CONFIG_DIR", dir.join("config"))
        .env("RUST_LOG", "warn");
    Ok(command)
}

pub(crate) fn write_config(dir: &Path, yaml: &str) -> anyhow::Result<PathBuf> {
    let path = dir.join("capabilities.yaml");
    std::fs::write(&path, yaml)?;
    Ok(path)
}

/// An `XEmbed` system tray on the display, ended when dropped.
pub(crate) async fn tray_host() -> anyhow::Result<tokio::process::Child> {
    let tray = tokio::process::Command::new("trayer")
        .args([
            "--edge",
            "top",
            "--align",
            "right",
            "--widthtype",
            "request",
            "--height",
            "24",
        ])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .context("starting trayer, the tray the app sits in (apt-get install trayer)")?;
    // It takes the tray selection as it starts; the app asks when it starts.
    tokio::time::sleep(std::time::Duration::from_millis(500)).await;
    Ok(tray)
}
