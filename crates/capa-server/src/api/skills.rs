//! `GET /api/skills`: every skill of the configuration as a person lists it (docs/skills.md),
//! for `capa skills` and the UI's Tools page.

use std::sync::Arc;

use axum::Json;
use axum::extract::State;
use capa_core::Hub;
use serde::{Deserialize, Serialize};

/// A skill as the CLI and the UI list it.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SkillListing {
    pub name: String,
    pub description: String,
    /// False for a `skills:` entry with `disabled: true`.
    pub active: bool,
    /// The file that declares it: its SKILL.md, or the capabilities file.
    pub file: String,
    /// Its `requires`, as written (`@server`, `server.tool`).
    pub requires: Vec<String>,
    /// The tool addresses those resolve to now.
    pub tools: Vec<String>,
    /// Its SKILL.md's URI when MCP clients are served it (the Skills extension); none for an
    /// inactive skill or a name the extension does not allow.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub uri: Option<String>,
    /// The instructions of a skill written as a SKILL.md.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instructions: Option<String>,
}

/// Every skill, active or not, in configuration order.
pub fn skill_listings(hub: &Hub) -> Vec<SkillListing> {
    hub.skills()
        .iter()
        .map(|skill| SkillListing {
            name: skill.id.clone(),
            description: skill.description.clone(),
            active: skill.active,
            file: skill.file.display().to_string(),
            requires: skill.requires.iter().map(ToString::to_string).collect(),
            tools: hub
                .skill_tools(&skill.id)
                .unwrap_or_default()
                .iter()
                .map(ToString::to_string)
                .collect(),
            uri: (skill.active && capa_config::is_skill_name(&skill.id))
                .then(|| capa_core::skill_uri(&skill.id)),
            instructions: skill.document.as_ref().map(|d| d.instructions.clone()),
        })
        .collect()
}

pub(super) async fn skills(State(hub): State<Arc<Hub>>) -> Json<Vec<SkillListing>> {
    hub.startup_done().await;
    Json(skill_listings(&hub))
}
