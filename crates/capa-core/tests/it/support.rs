use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use capa_config::{ConfigFiles, HubConfig};
use capa_core::{CallContext, Hub, HubOptions, HubPaths, Redactor};
use capa_secrets::Keychain;
use serde_json::Value;

pub(crate) fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .expect("repo root")
}

/// A path inside the repository that the test setup installs; fails with the fix when missing.
pub(crate) fn installed(relative: &str) -> String {
    let path = repo_root().join(relative);
    assert!(
        path.exists(),
        "{} is missing: run `npm ci` and create tests/.venv (scripts/test does both)",
        path.display()
    );
    path.display().to_string()
}

pub(crate) fn everything_js() -> String {
    installed("node_modules/@modelcontextprotocol/server-everything/dist/index.js")
}

pub(crate) fn filesystem_js() -> String {
    installed("node_modules/@modelcontextprotocol/server-filesystem/dist/index.js")
}

/// A `servers:` entry (YAML) for the catalog fixture server, run with `args`.
pub(crate) fn catalog_server_source(id: &str, args: &[String]) -> String {
    let mut all = vec![
        repo_root()
            .join("tests/fixtures/catalog-server.mjs")
            .display()
            .to_string(),
    ];
    all.extend(args.iter().cloned());
    let quoted: Vec<String> = all.iter().map(|a| format!("{a:?}")).collect();
    format!(
        "  - id: {id}\n    type: mcp\n    def: {{ command: {:?}, args: [{}] }}\n",
        installed("node_modules/.bin/node"),
        quoted.join(", ")
    )
}

pub(crate) fn time_server() -> String {
    installed("tests/.venv/bin/mcp-server-time")
}

/// A hub in a temporary directory, configured by `yaml`.
pub(crate) struct TestHub {
    pub hub: Arc<Hub>,
    pub dir: tempfile::TempDir,
    pub redactor: Arc<Redactor>,
}

impl TestHub {
    pub(crate) async fn start(yaml: &str) -> Self {
        Self::start_with(yaml, Keychain::default()).await
    }

    pub(crate) async fn start_with(yaml: &str, keychain: Keychain) -> Self {
        Self::start_in(tempfile::tempdir().expect("tempdir"), yaml, keychain).await
    }

    /// A hub whose config and data dirs are under `dir` (`config/`, `data/`).
    pub(crate) async fn start_in(dir: tempfile::TempDir, yaml: &str, keychain: Keychain) -> Self {
        let file = dir.path().join("capabilities.yaml");
        std::fs::write(&file, yaml).expect("write config");
        let config: HubConfig =
            capa_config::load(&ConfigFiles::only(file), None).expect("valid config");
        let redactor = Redactor::new();
        let hub = Hub::start(HubOptions {
            config,
            paths: HubPaths::in_dir(dir.path()),
            redactor: redactor.clone(),
            keychain,
            store: None,
        })
        .await
        .expect("hub starts");
        hub.settled(Duration::from_secs(30)).await;
        Self { hub, dir, redactor }
    }

    /// The hub's database, opened apart as another reader would (the hub keeps its own handle
    /// to itself): what a test checks is what was written to the file.
    pub(crate) fn store(&self) -> capa_store::Store {
        self.hub
            .runs()
            .commit_writes()
            .expect("the hub commits its queued writes");
        capa_store::Store::open(&self.hub.paths().database()).expect("the hub's database opens")
    }

    pub(crate) async fn call(
        &self,
        address: &str,
        args: Value,
    ) -> Result<Value, capa_core::CallError> {
        let args = match args {
            Value::Object(map) => Some(map),
            _ => None,
        };
        let permit = self
            .hub
            .authorize(address, None)
            .await?
            .into_permit()
            .map_err(capa_core::Refusal::into_call_error)?;
        let result = self.hub.call(permit, args, &CallContext::default()).await?;
        Ok(serde_json::to_value(result).expect("result serialises"))
    }

    pub(crate) fn addresses(&self) -> Vec<String> {
        self.hub
            .catalog()
            .tools()
            .iter()
            .map(|t| t.address.to_string())
            .collect()
    }

    pub(crate) fn source(&self, id: &str) -> capa_core::SourceStatus {
        self.hub
            .sources()
            .list()
            .into_iter()
            .find(|s| s.id == id)
            .expect("source listed")
    }
}

/// The first text block of a tool result.
pub(crate) fn text(result: &Value) -> String {
    result["content"][0]["text"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

pub(crate) fn no_demo() -> &'static str {
    "options:\n  demo: false\n"
}

/// Waits until `check` holds, polling, at most `limit`.
pub(crate) async fn eventually(limit: Duration, mut check: impl FnMut() -> bool) -> bool {
    let deadline = tokio::time::Instant::now() + limit;
    while tokio::time::Instant::now() < deadline {
        if check() {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    check()
}

/// A keychain of its own for one test binary, or `None` (the test skips) where no Secret
/// Service runs — unless `CAPA_REQUIRE_KEYCHAIN` is set, as in CI, where that is a failure.
pub(crate) fn keychain_or_skip(name: &str) -> Option<Keychain> {
    let keychain = Keychain::new(format!("capabilities-{name}-{}", std::process::id()));
    match keychain.check() {
        Ok(()) => Some(keychain),
        Err(e) if std::env::var_os("CAPA_REQUIRE_KEYCHAIN").is_some() => {
            panic!("CAPA_REQUIRE_KEYCHAIN is set but the keychain is unavailable: {e}")
        }
        Err(e) => {
            eprintln!("skipping: no keychain ({e})");
            None
        }
    }
}

/// `execute` of `code` or `resume` of a run through the hub, as the envelope's JSON.
pub(crate) async fn execute_json(hub: &TestHub, code: Option<&str>, resume: Option<&str>) -> Value {
    let envelope = hub
        .hub
        .execute(capa_core::ExecuteRequest {
            code: code.map(str::to_owned),
            resume: resume.map(str::to_owned),
            client: None,
        })
        .await
        .expect("an envelope");
    serde_json::to_value(envelope).expect("json")
}

/// The authorizer's permit for a call the policy allows (panics otherwise).
pub(crate) async fn permit(hub: &capa_core::Hub, address: &str) -> capa_core::Permit {
    hub.authorize(address, None)
        .await
        .expect("known tool")
        .into_permit()
        .expect("the policy allows it")
}
