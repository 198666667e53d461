//! Capabilities file parsing and validation through the public API.

mod all_at_once;
mod expose_policy;
mod limits;
mod malformed;
mod namespace;
mod oauth;
mod openapi;
mod policy;
mod profiles;
mod project_trust;
mod select;
mod semantic_search;
mod skills;
mod valid;

use capa_config::{ConfigError, ConfigFiles, HubConfig};

/// [`capa_config::load`] as a hub whose person trusted the project file as it is now (a file
/// named with `--config`, or no project file, needs no trust).
pub(crate) fn load_trusted(files: &ConfigFiles) -> Result<HubConfig, ConfigError> {
    let untrusted = capa_config::load(files, None)?;
    let digest = untrusted.project.as_ref().map(|p| p.digest.clone());
    capa_config::load(files, digest.as_deref())
}
