//! Shared by the front's integration tests: a hub from a YAML config, served on loopback HTTP.

use std::sync::Arc;
use std::time::Duration;

use capa_config::ConfigFiles;
use capa_core::{Hub, HubOptions, HubPaths, Redactor};

/// A file the test setup installs (`node_modules`, `tests/.venv`, fixtures); fails with the fix.
#[allow(dead_code)] // each test binary uses its own part of the support module
pub(crate) fn repo_file(relative: &str) -> String {
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

/// The node the test setup installs, as a real path (a capabilities file names it as a
/// source's command).
#[allow(dead_code)] // each test binary uses its own part of the support module
pub(crate) fn node() -> String {
    std::path::Path::new(&repo_file("node_modules/.bin/node"))
        .canonicalize()
        .expect("node")
        .display()
        .to_string()
}

/// A running hub and its HTTP server; the temp dir lives as long as they do.
pub(crate) struct Served {
    pub _dir: tempfile::TempDir,
    pub hub: Arc<Hub>,
    pub server: capa_server::HttpServer,
    pub token: String,
}

/// Starts a hub configured by `yaml`, waits for its sources, and serves it on 127.0.0.1.
pub(crate) async fn serve_hub(yaml: &str) -> Served {
    serve_hub_with(HubFiles::Only(yaml), capa_secrets::Keychain::default()).await
}

/// The capabilities file a served hub reads.
#[allow(dead_code)] // each test binary uses its own part of the support module
pub(crate) enum HubFiles<'a> {
    /// One file, as `--config FILE`.
    Only(&'a str),
    /// The user's global file in the hub's config dir (the one the UI's source edits write).
    Global(&'a str),
    /// No file yet, as on a fresh install: the UI's first source creates the global file.
    NoneYet,
}

/// [`serve_hub`] on `store` (a team hub's database, shared with other hubs) instead of SQLite
/// in its own data dir.
#[allow(dead_code)] // each test binary uses its own part of the support module
pub(crate) async fn serve_hub_on(yaml: &str, store: capa_store::Store) -> Served {
    serve_hub_in(
        HubFiles::Only(yaml),
        capa_secrets::Keychain::default(),
        Some(store),
    )
    .await
}

/// [`serve_hub`] with the file in the place `files` says and with `keychain`.
pub(crate) async fn serve_hub_with(
    files: HubFiles<'_>,
    keychain: capa_secrets::Keychain,
) -> Served {
    serve_hub_in(files, keychain, None).await
}

async fn serve_hub_in(
    files: HubFiles<'_>,
    keychain: capa_secrets::Keychain,
    store: Option<capa_store::Store>,
) -> Served {
    let dir = tempfile::tempdir().expect("tempdir");
    let paths = HubPaths::in_dir(dir.path());
    let files = match files {
        HubFiles::Only(yaml) => {
            let file = dir.path().join("capabilities.yaml");
            std::fs::write(&file, yaml).expect("write");
            ConfigFiles::only(file)
        }
        HubFiles::Global(yaml) => {
            std::fs::create_dir_all(&paths.config_dir).expect("config dir");
            std::fs::write(paths.global_config(), yaml).expect("write");
            ConfigFiles {
                global: Some(paths.global_config()),
                project: None,
                ..ConfigFiles::default()
            }
        }
        HubFiles::NoneYet => {
            std::fs::create_dir_all(&paths.config_dir).expect("config dir");
            ConfigFiles::default()
        }
    };
    let config = capa_config::load(&files, None).expect("config");
    let hub = Hub::start(HubOptions {
        config,
        paths,
        redactor: Redactor::new(),
        keychain,
        store,
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
