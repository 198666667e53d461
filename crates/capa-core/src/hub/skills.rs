//! Skills as the hub sees them (tool-exposure spec): which catalog tools a skill resolves to
//! right now, and which of its requirements the live servers do not advertise.
//!
//! The catalog already holds every tool an active skill names as `server.tool`, even one the
//! server's `expose` policy hides (see [`Catalog::build_with_skills`]). `@server` means the
//! server's exposed set and adds nothing to it. In `search` mode skills have no effect, so the
//! catalog is built without them there.

use capa_config::{ExposureMode, SkillConfig, SkillRequirement};

use super::Hub;
use crate::catalog::{Catalog, ToolAddress};

impl Hub {
    /// Every skill of the configuration, active and inactive, in file order.
    pub fn skills(&self) -> &[SkillConfig] {
        &self.config.skills
    }

    /// The catalog addresses skill `skill_id` resolves to now, in catalog order, each once: a
    /// `@server` requirement gives every catalog tool of that namespace, a `server.tool` one the
    /// catalog tool with that remote name (when the server advertises it). `None` when no skill
    /// has that id; an inactive skill resolves to nothing.
    pub fn skill_tools(&self, skill_id: &str) -> Option<Vec<ToolAddress>> {
        let skill = self.config.skills.iter().find(|s| s.id == skill_id)?;
        if !skill.active {
            return Some(Vec::new());
        }
        Some(resolve(&self.catalog(), &skill.requires))
    }

    /// `(skill, requirement)` for each `server.tool` requirement of an active skill that the
    /// connected server does not advertise, for warnings. Servers that are not connected are not
    /// judged; in `search` mode, where skills have no effect, the list is empty.
    pub fn missing_skill_tools(&self) -> Vec<(String, String)> {
        self.catalog().missing_skill_tools().to_vec()
    }

    /// The skills the catalog honours: none in `search` mode ("Skill requires: has no effect").
    pub(super) fn catalog_skills(&self) -> &[SkillConfig] {
        if self.config.exposure.mode == ExposureMode::Search {
            &[]
        } else {
            &self.config.skills
        }
    }
}

/// The addresses `requires` resolves to in `catalog`, in catalog order, each once.
fn resolve(catalog: &Catalog, requires: &[SkillRequirement]) -> Vec<ToolAddress> {
    catalog
        .tools()
        .iter()
        .filter(|t| {
            requires.iter().any(|r| match r {
                SkillRequirement::Server(server) => t.address.namespace == *server,
                SkillRequirement::Tool { server, tool } => {
                    t.address.namespace == *server && t.remote_name == *tool
                }
            })
        })
        .map(|t| t.address.clone())
        .collect()
}
