//! Shared by the front's integration tests: a hub from a YAML config, served on loopback HTTP.

use std::sync::Arc;
use std::time::Duration;

use capa_config::ConfigFiles;
use capa_core::{Hub, HubOptions, HubPaths, Redactor};

/// A file the test setup installs (node_modules, tests/.venv, fixtures); fails with the fix.
#[allow(dead_code)] // each test binary uses its own part of the support module
pub fn repo_file(relative: &str) -> String {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .join(relative);
    assert!(
        path.exists(),
        "{} is missing: run scripts/setup --test",
        path.display()
    );
    path.display().to_string()
}

/// A running hub and its HTTP server; the temp dir lives as long as they do.
pub struct Served {
    pub _dir: tempfile::TempDir,
    pub hub: Arc<Hub>,
    pub server: capa_server::HttpServer,
    pub token: String,
}

/// Starts a hub configured by `yaml`, waits for its sources, and serves it on 127.0.0.1.
pub async fn serve_hub(yaml: &str) -> Served {
    let dir = tempfile::tempdir().expect("tempdir");
    let file = dir.path().join("capabilities.yaml");
    std::fs::write(&file, yaml).expect("write");
    let config = capa_config::load(&ConfigFiles::only(file)).expect("config");
    let hub = Hub::start(HubOptions {
        config,
        paths: HubPaths::in_dir(dir.path()),
        redactor: Redactor::new(),
        keychain: capa_secrets::Keychain::default(),
    })
    .await
    .expect("hub");
    hub.settled(Duration::from_secs(30)).await;
    let token = "t".repeat(64);
    let server = capa_server::serve(
        hub.clone(),
        "127.0.0.1:0".parse().expect("addr"),
        token.clone(),
    )
    .await
    .expect("serve");
    Served {
        _dir: dir,
        hub,
        server,
        token,
    }
}
