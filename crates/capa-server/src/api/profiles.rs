//! `GET /api/profiles`: the hub's own profile and each named one (docs/profiles.md), for
//! `capa profiles list`, the UI's Clients page and scripts.

use std::sync::Arc;

use axum::Json;
use axum::extract::State;
use capa_config::{DEFAULT_PROFILE, LoweredLimits};
use capa_core::Hub;
use serde::{Deserialize, Serialize};

/// A profile as the CLI and the UI list it.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ProfileListing {
    pub name: String,
    /// The hub's own profile (`/mcp`), which follows `options.toolExposure`.
    pub default: bool,
    /// The mode as written (`direct` stays `direct`).
    pub mode: String,
    /// The exposure mode it serves (`direct` is `expose-all`).
    pub exposure: String,
    /// The sources it serves; none listed means every source.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sources: Option<Vec<String>>,
    /// The skills it serves; none listed means every skill.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub skills: Option<Vec<String>>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub ask: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub deny: Vec<String>,
    /// The limits it lowers, by their names in the file.
    #[serde(default)]
    pub limits: serde_json::Map<String, serde_json::Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The capabilities file that declares it; none for the default profile.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
    /// Its MCP endpoint's path on the hub (`/mcp`, `/mcp/<name>`).
    pub path: String,
    /// The arguments of `capa` that serve it over stdio.
    pub stdio_args: Vec<String>,
}

/// The default profile first, then each named one by name.
pub fn profile_listings(hub: &Hub) -> Vec<ProfileListing> {
    let exposure = hub.config().exposure.mode.as_str().to_owned();
    let mut listings = vec![ProfileListing {
        name: DEFAULT_PROFILE.to_owned(),
        default: true,
        mode: exposure.clone(),
        exposure,
        sources: None,
        skills: None,
        ask: Vec::new(),
        deny: Vec::new(),
        limits: serde_json::Map::new(),
        description: Some(hub.config().exposure.decided_by.clone()),
        file: None,
        path: "/mcp".to_owned(),
        stdio_args: vec!["mcp".to_owned()],
    }];
    for profile in hub.profiles() {
        let config = profile.config();
        listings.push(ProfileListing {
            name: config.name.clone(),
            default: false,
            mode: config.mode.as_str().to_owned(),
            exposure: profile.mode().as_str().to_owned(),
            sources: config.sources.as_ref().map(|s| s.iter().cloned().collect()),
            skills: config.skills.as_ref().map(|s| s.iter().cloned().collect()),
            ask: config.ask.clone(),
            deny: config.deny.clone(),
            limits: limits_map(&config.limits),
            description: config.description.clone(),
            file: Some(config.file.display().to_string()),
            path: format!("/mcp/{}", config.name),
            stdio_args: vec![
                "mcp".to_owned(),
                "--profile".to_owned(),
                config.name.clone(),
            ],
        });
    }
    listings
}

fn limits_map(limits: &LoweredLimits) -> serde_json::Map<String, serde_json::Value> {
    match serde_json::to_value(limits) {
        Ok(serde_json::Value::Object(map)) => map,
        _ => serde_json::Map::new(),
    }
}

pub(super) async fn profiles(State(hub): State<Arc<Hub>>) -> Json<Vec<ProfileListing>> {
    Json(profile_listings(&hub))
}
