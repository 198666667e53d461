//! Named profiles (`profiles:` of the capabilities files): what the clients of one endpoint see.
//! A profile narrows the hub (some sources, some skills), makes its policy stricter and lowers
//! its limits; it never widens anything (docs/profiles.md).

use std::sync::Arc;

use capa_config::{ExposureMode, ProfileConfig, SkillConfig};
use capa_domain::{Policy, ProfileScope};
use capa_sandbox::Limits;

use super::Hub;

/// One named profile of the hub's configuration.
#[derive(Debug, Clone)]
pub struct Profile {
    config: Arc<ProfileConfig>,
    scope: Arc<ProfileScope>,
}

impl Profile {
    fn new(config: &ProfileConfig) -> Self {
        Self {
            scope: Arc::new(ProfileScope::new(config)),
            config: Arc::new(config.clone()),
        }
    }

    pub fn name(&self) -> &str {
        &self.config.name
    }

    /// The exposure mode its clients get (`direct` is expose-all).
    pub fn mode(&self) -> ExposureMode {
        self.config.mode.exposure()
    }

    pub fn config(&self) -> &ProfileConfig {
        &self.config
    }

    /// Whether the profile serves `skill`: one it lists, or, when it lists none, every skill
    /// that needs one of its sources (or no tools at all): a skill whose tools are all
    /// elsewhere would only send the model to tools it cannot call.
    pub fn serves_skill(&self, skill: &SkillConfig) -> bool {
        match &self.config.skills {
            Some(names) => names.contains(&skill.id),
            None => {
                skill.requires.is_empty()
                    || skill
                        .requires
                        .iter()
                        .any(|r| self.scope.admits_source(r.server()))
            }
        }
    }

    /// `limits` lowered where the profile asks (never raised).
    pub fn lower(&self, limits: Limits) -> Limits {
        let l = &self.config.limits;
        let size = |v: Option<u64>| v.map(|v| usize::try_from(v).unwrap_or(usize::MAX));
        let lowered = Limits {
            code_bytes: size(l.code_bytes).unwrap_or(usize::MAX),
            compute_ms: l.compute_ms.unwrap_or(u64::MAX),
            wall_ms: l.wall_ms.unwrap_or(u64::MAX),
            memory_bytes: size(l.memory_bytes).unwrap_or(usize::MAX),
            stack_bytes: usize::MAX,
            max_calls: l
                .max_calls
                .map_or(u32::MAX, |v| u32::try_from(v).unwrap_or(u32::MAX)),
            max_concurrent: size(l.max_concurrent).unwrap_or(usize::MAX),
            inline_result_bytes: size(l.inline_result_bytes).unwrap_or(usize::MAX),
            upstream_timeout_ms: l.upstream_timeout_ms.unwrap_or(u64::MAX),
            argument_bytes: usize::MAX,
        };
        limits.lowered_to(&lowered)
    }
}

impl Hub {
    /// The profile named `name`, if the configuration has one.
    pub fn profile(&self, name: &str) -> Option<Profile> {
        self.config.profiles.get(name).map(Profile::new)
    }

    /// Every named profile, by name.
    pub fn profiles(&self) -> Vec<Profile> {
        self.config.profiles.values().map(Profile::new).collect()
    }

    /// The policy as a client of `profile` sees it (the hub's own for `None`).
    pub fn policy_in(&self, profile: Option<&Profile>) -> Arc<Policy> {
        let policy = self.policy();
        match profile {
            Some(profile) => Arc::new((*policy).clone().within(profile.scope.clone())),
            None => policy,
        }
    }

    /// The limits of a run started through `profile`.
    pub fn run_limits_in(&self, profile: Option<&Profile>) -> Limits {
        let limits = self.run_limits();
        match profile {
            Some(profile) => profile.lower(limits),
            None => limits,
        }
    }
}
