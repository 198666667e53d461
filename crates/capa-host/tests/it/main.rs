//! capa-host through its public API: the hosted hub's start-up and stop, and the typed client,
//! in process and over HTTP, against a real hub with the demo source.

mod client;
mod serve;

use std::net::SocketAddr;
use std::path::PathBuf;

use capa_core::{HubPaths, Redactor};
use capa_host::{HostOptions, Hosted};

/// A data and config dir with a capabilities file that turns the demo source on.
pub(crate) struct Place {
    pub(crate) _dir: tempfile::TempDir,
    pub(crate) paths: HubPaths,
    pub(crate) file: PathBuf,
}

pub(crate) fn place() -> Place {
    let dir = tempfile::tempdir().expect("tempdir");
    let paths = HubPaths::in_dir(dir.path());
    let file = dir.path().join("capabilities.yaml");
    std::fs::write(&file, "options:\n  demo: true\n  toolExposure: code\n").expect("write");
    Place {
        _dir: dir,
        paths,
        file,
    }
}

pub(crate) fn options(place: &Place, http: SocketAddr) -> HostOptions {
    HostOptions {
        paths: place.paths.clone(),
        http,
        config: Some(place.file.clone()),
        project: None,
        ui_dir: None,
        check_port_first: false,
        sign_in: None,
    }
}

/// The hub of `place`, hosted on a free loopback port.
pub(crate) async fn host(place: &Place) -> Hosted {
    let any: SocketAddr = "127.0.0.1:0".parse().expect("addr");
    capa_host::serve(options(place, any), Redactor::new())
        .await
        .expect("the hub is hosted")
}
