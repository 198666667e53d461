//! A named profile's restrictions on top of the policy: the sources it serves, and its own `ask`
//! and `deny` patterns. A profile can only make the policy stricter; its verdict for a tool is
//! the stricter of the policy's and its own.

use std::collections::BTreeSet;

use capa_config::ProfileConfig;

use super::{Decision, Policy, PolicyVerdict, Rule};
use crate::catalog::CatalogTool;

/// What a profile restricts (see the module's documentation).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProfileScope {
    name: String,
    sources: Option<BTreeSet<String>>,
    rules: Policy,
}

impl ProfileScope {
    pub fn new(profile: &ProfileConfig) -> Self {
        let rule = |pattern: &String, decision| Rule {
            pattern: pattern.clone(),
            connection: None,
            decision,
        };
        let rules = profile
            .ask
            .iter()
            .map(|p| rule(p, Decision::Ask))
            .chain(profile.deny.iter().map(|p| rule(p, Decision::Deny)))
            .collect();
        Self {
            name: profile.name.clone(),
            sources: profile.sources.clone(),
            rules: Policy::new(rules),
        }
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    /// Whether the profile serves the tools of source `namespace`.
    pub fn admits_source(&self, namespace: &str) -> bool {
        self.sources.as_ref().is_none_or(|s| s.contains(namespace))
    }

    /// `verdict` made stricter where the profile says so.
    pub(super) fn tighten(&self, tool: &CatalogTool, verdict: PolicyVerdict) -> PolicyVerdict {
        if !self.admits_source(&tool.address.namespace) {
            return PolicyVerdict {
                decision: Decision::Deny,
                reason: format!(
                    "the profile \"{}\" does not serve the source {}",
                    self.name, tool.address.namespace
                ),
            };
        }
        match self.rules.decide(&tool.address, None) {
            Some((decision, rule)) if decision > verdict.decision => PolicyVerdict {
                decision,
                reason: format!(
                    "the profile \"{}\" says {decision} for \"{}\"",
                    self.name, rule.pattern
                ),
            },
            _ => verdict,
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::catalog::ToolAddress;

    fn tool(address: &str) -> CatalogTool {
        CatalogTool {
            address: ToolAddress::parse(address).expect("address"),
            remote_name: address.to_owned(),
            definition: serde_json::from_value(
                json!({"name": address, "inputSchema": {"type": "object"}}),
            )
            .expect("tool"),
        }
    }

    fn profile() -> ProfileConfig {
        ProfileConfig {
            name: "review".into(),
            mode: capa_config::ProfileMode::Search,
            sources: Some(["github".to_owned(), "docs".to_owned()].into()),
            skills: None,
            ask: vec!["github.create_*".into()],
            deny: vec!["github.delete_*".into()],
            limits: capa_config::LoweredLimits::default(),
            read_result: true,
            description: None,
            file: "capabilities.yaml".into(),
        }
    }

    #[test]
    fn a_profile_only_tightens_the_policy() {
        let loose = Policy::new(vec![Rule {
            pattern: "*".into(),
            connection: None,
            decision: Decision::Allow,
        }]);
        let strict = Policy::new(vec![Rule {
            pattern: "github.create_issue".into(),
            connection: None,
            decision: Decision::Deny,
        }]);
        let scope = std::sync::Arc::new(ProfileScope::new(&profile()));
        let within = |p: &Policy| p.clone().within(scope.clone());
        let d = |p: &Policy, a: &str| within(p).verdict(&tool(a), None).decision;
        assert_eq!(d(&loose, "github.get_me"), Decision::Allow);
        assert_eq!(d(&loose, "github.create_issue"), Decision::Ask);
        assert_eq!(d(&loose, "github.delete_repo"), Decision::Deny);
        assert_eq!(
            d(&loose, "slack.post"),
            Decision::Deny,
            "not a source of the profile"
        );
        assert_eq!(
            d(&strict, "github.create_issue"),
            Decision::Deny,
            "the policy's deny stays"
        );
        let reason = within(&loose).verdict(&tool("slack.post"), None).reason;
        assert_eq!(
            reason,
            "the profile \"review\" does not serve the source slack"
        );
    }
}
