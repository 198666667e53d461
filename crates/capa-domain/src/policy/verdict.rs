//! The decision for one catalog tool, with the reason a person reads: the user's rule when one
//! matches, else the tool's annotations, else allow.
//!
//! Annotations are hints from the server, which the user does not control, so they are only
//! trusted to make a tool stricter: a tool marked `destructiveHint: true` (and not
//! `readOnlyHint: true`) asks. An unannotated tool is allowed, although MCP's default for a
//! missing `destructiveHint` is true: most servers annotate nothing, and asking for each of
//! their tools would make the hub unusable out of the box (docs/policies.md, "Defaults").

use serde::Serialize;

use super::{Decision, Policy};
use crate::catalog::CatalogTool;

/// What the policy decided for a tool and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PolicyVerdict {
    pub decision: Decision,
    /// A short sentence for people, in plain words (no Markdown: the approval popup shows it as
    /// it is): `your policy rule "github.*" says ask`.
    pub reason: String,
}

impl Policy {
    /// The decision for `tool` called with `connection` (`None` for search and describe, where
    /// only rules without a connection apply). A held-back policy answers with the stricter of
    /// its own verdict and the confirmed rules' one.
    pub fn verdict(&self, tool: &CatalogTool, connection: Option<&str>) -> PolicyVerdict {
        let verdict = self.pinned_verdict(tool, connection, self.held_verdict(tool, connection));
        match self.profile() {
            Some(profile) => profile.tighten(tool, verdict),
            None => verdict,
        }
    }

    /// Whether listings and a run's globals leave `tool` out: the policy denies it (with no
    /// connection named, as for search and describe).
    pub fn hides(&self, tool: &CatalogTool) -> bool {
        self.verdict(tool, None).decision == Decision::Deny
    }

    /// The verdict before a profile is applied.
    pub(super) fn held_verdict(
        &self,
        tool: &CatalogTool,
        connection: Option<&str>,
    ) -> PolicyVerdict {
        let own = self.own_verdict(tool, connection);
        let Some(confirmed) = self.confirmed() else {
            return own;
        };
        let kept = confirmed.own_verdict(tool, connection);
        if kept.decision > own.decision {
            return PolicyVerdict {
                decision: kept.decision,
                reason: format!(
                    "{}; the policy file now says {}, which waits for your confirmation in Capabilities (or capa policy confirm in a terminal)",
                    kept.reason, own.decision
                ),
            };
        }
        own
    }

    /// The verdict of these rules alone.
    pub(crate) fn own_verdict(
        &self,
        tool: &CatalogTool,
        connection: Option<&str>,
    ) -> PolicyVerdict {
        if let Some((decision, rule)) = self.decide(&tool.address, connection) {
            let reason = match &rule.connection {
                Some(c) => format!(
                    "your policy rule \"{}\" for connection \"{c}\" says {decision}",
                    rule.pattern
                ),
                None => format!("your policy rule \"{}\" says {decision}", rule.pattern),
            };
            return PolicyVerdict { decision, reason };
        }
        if marked_destructive(tool) {
            return PolicyVerdict {
                decision: Decision::Ask,
                reason:
                    "the server marks it destructive (an untrusted hint; set a policy to change it)"
                        .to_owned(),
            };
        }
        PolicyVerdict {
            decision: Decision::Allow,
            reason: "allowed by default".to_owned(),
        }
    }
}

/// `destructiveHint: true` said explicitly, and not contradicted by `readOnlyHint: true`.
fn marked_destructive(tool: &CatalogTool) -> bool {
    tool.definition
        .annotations
        .as_ref()
        .is_some_and(|a| a.destructive_hint == Some(true) && a.read_only_hint != Some(true))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::catalog::ToolAddress;
    use crate::policy::Rule;

    fn tool(address: &str, annotations: Option<serde_json::Value>) -> CatalogTool {
        let mut definition = json!({"name": address, "inputSchema": {"type": "object"}});
        if let Some(a) = annotations {
            definition["annotations"] = a;
        }
        CatalogTool {
            address: ToolAddress::parse(address).expect("address"),
            remote_name: address.to_owned(),
            definition: serde_json::from_value(definition).expect("tool"),
        }
    }

    fn rule(pattern: &str, connection: Option<&str>, decision: Decision) -> Rule {
        Rule {
            pattern: pattern.to_owned(),
            connection: connection.map(str::to_owned),
            decision,
        }
    }

    #[test]
    fn annotations_decide_only_when_no_rule_matches() {
        let none = Policy::default();
        let destructive = tool("gh.delete_repo", Some(json!({"destructiveHint": true})));
        let read_only_too = tool(
            "gh.odd",
            Some(json!({"destructiveHint": true, "readOnlyHint": true})),
        );
        let unannotated = tool("gh.create_issue", None);
        let additive = tool("gh.create_pr", Some(json!({"readOnlyHint": false})));
        assert_eq!(
            none.verdict(&destructive, None),
            PolicyVerdict {
                decision: Decision::Ask,
                reason:
                    "the server marks it destructive (an untrusted hint; set a policy to change it)"
                        .into(),
            }
        );
        for t in [&read_only_too, &unannotated, &additive] {
            assert_eq!(
                none.verdict(t, None),
                PolicyVerdict {
                    decision: Decision::Allow,
                    reason: "allowed by default".into(),
                },
                "{}",
                t.address
            );
        }
        let user = Policy::new(vec![
            rule("gh", None, Decision::Allow),
            rule("gh.create_*", None, Decision::Ask),
        ]);
        assert_eq!(
            user.verdict(&destructive, None),
            PolicyVerdict {
                decision: Decision::Allow,
                reason: "your policy rule \"gh\" says allow".into(),
            },
            "the user's rule wins over the hint"
        );
        assert_eq!(
            user.verdict(&unannotated, None).reason,
            "your policy rule \"gh.create_*\" says ask"
        );
    }

    #[test]
    fn a_connection_rule_names_its_connection() {
        let policy = Policy::new(vec![rule("gh.delete_repo", Some("work"), Decision::Deny)]);
        let t = tool("gh.delete_repo", None);
        assert_eq!(
            policy.verdict(&t, Some("work")).reason,
            "your policy rule \"gh.delete_repo\" for connection \"work\" says deny"
        );
        assert_eq!(policy.verdict(&t, None).decision, Decision::Allow);
    }
}
