//! `capa mcp` when a hub is already running forwards to it through capa-mcp's
//! [`RemoteSurface`]; this module tells that bridge whether the hub it proved still runs, from
//! the discovery file ([`crate::discovery`]).

use capa_mcp::surface::BoxFuture;

pub use capa_mcp::bridge::{HubLiveness, RemoteSurface};

/// Which hub a bridge forwards to, and where its discovery file is.
#[derive(Debug, Clone)]
pub struct HubCheck {
    pub paths: capa_core::HubPaths,
    pub found: crate::discovery::FoundHub,
}

impl HubLiveness for HubCheck {
    /// Whether that hub still runs ([`crate::discovery::still_running`]).
    fn still_there(&self) -> BoxFuture<'_, bool> {
        Box::pin(crate::discovery::still_running(&self.paths, &self.found))
    }

    fn url(&self) -> &str {
        &self.found.url
    }
}
