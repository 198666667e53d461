//! The verdict for a tool whose definition is not the one a person approved (docs/pinning.md):
//! the stricter of the pinned definition's verdict and the live one's, then at least `ask`
//! while the change waits for the person's review, or `deny` when the person blocked the tool.
//! A re-listed definition never loosens a verdict on its own.

use std::sync::Arc;

use super::{Decision, Policy, PolicyVerdict};
use crate::catalog::CatalogTool;
use crate::pins::ChangedTools;

impl Policy {
    /// These rules, judging the tools in `changed` by what a person approved of them.
    #[must_use]
    pub fn with_changed_tools(self, changed: Arc<ChangedTools>) -> Self {
        Self {
            changed: (!changed.is_empty()).then_some(changed),
            ..self
        }
    }

    /// How the tool at `address` differs from what a person approved, if it does (or was
    /// blocked by the person).
    pub fn definition_change(&self, address: &str) -> Option<&crate::pins::DefinitionChange> {
        self.changed.as_ref()?.get(address)
    }

    /// `verdict` (the live definition's) for `tool`, judged against its pin.
    pub(super) fn pinned_verdict(
        &self,
        tool: &CatalogTool,
        connection: Option<&str>,
        verdict: PolicyVerdict,
    ) -> PolicyVerdict {
        let Some(change) = self
            .changed
            .as_ref()
            .and_then(|c| c.get(&tool.address.to_string()))
        else {
            return verdict;
        };
        if change.blocked {
            return PolicyVerdict {
                decision: Decision::Deny,
                reason: format!(
                    "you blocked it; accept it in Capabilities (or capa tools accept {} in a terminal) to use it again",
                    tool.address
                ),
            };
        }
        let pinned = CatalogTool {
            definition: change.pinned.applied_to(&tool.definition),
            ..tool.clone()
        };
        let approved = self.held_verdict(&pinned, connection);
        let stricter = if approved.decision > verdict.decision {
            approved
        } else {
            verdict
        };
        if change.parts.is_empty() || stricter.decision == Decision::Deny {
            return stricter;
        }
        let parts: Vec<&str> = change.parts.iter().map(|p| p.words()).collect();
        PolicyVerdict {
            decision: Decision::Ask,
            reason: format!(
                "its definition changed since you approved it ({}): every call asks until you review the change in Capabilities (or capa tools changes in a terminal); before the change: {}",
                parts.join(", "),
                stricter.reason
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use serde_json::json;

    use super::*;
    use crate::catalog::ToolAddress;
    use crate::pins::{DefinitionChange, DefinitionPart, PinnedDefinition};
    use crate::policy::Rule;

    fn tool(annotations: &serde_json::Value) -> CatalogTool {
        CatalogTool {
            address: ToolAddress::parse("evil.wipe").expect("address"),
            remote_name: "wipe".to_owned(),
            definition: serde_json::from_value(
                json!({"name": "evil.wipe", "inputSchema": {}, "annotations": annotations.clone()}),
            )
            .expect("tool"),
        }
    }

    fn changed(pinned: &CatalogTool, blocked: bool) -> Arc<ChangedTools> {
        Arc::new(ChangedTools::new(HashMap::from([(
            "evil.wipe".to_owned(),
            DefinitionChange {
                pinned: PinnedDefinition::of(&pinned.definition),
                parts: vec![DefinitionPart::Annotations],
                blocked,
            },
        )])))
    }

    #[test]
    fn a_relisted_read_only_hint_does_not_loosen_a_destructive_tool() {
        let before = tool(&json!({"destructiveHint": true}));
        let now = tool(&json!({"readOnlyHint": true}));
        let policy = Policy::default().with_changed_tools(changed(&before, false));
        let verdict = policy.verdict(&now, None);
        assert_eq!(verdict.decision, Decision::Ask);
        assert!(verdict.reason.contains("changed since you approved it"));
        assert!(
            verdict.reason.contains("marks it destructive"),
            "{verdict:?}"
        );
        assert_eq!(
            Policy::default().verdict(&now, None).decision,
            Decision::Allow
        );
    }

    #[test]
    fn a_blocked_tool_is_denied_and_a_deny_rule_stays_a_deny() {
        let before = tool(&json!({"destructiveHint": true}));
        let now = tool(&json!({"readOnlyHint": true}));
        let blocked = Policy::default().with_changed_tools(changed(&before, true));
        assert_eq!(blocked.verdict(&now, None).decision, Decision::Deny);
        let deny = Policy::new(vec![Rule {
            pattern: "evil".to_owned(),
            connection: None,
            decision: Decision::Deny,
        }])
        .with_changed_tools(changed(&before, false));
        assert_eq!(deny.verdict(&now, None).decision, Decision::Deny);
    }
}
