//! Which changes of the policy loosen it, and so wait for a person to confirm them.
//!
//! A change loosens the policy when it adds or widens an `allow` rule, or when some tool of the
//! catalog gets a less strict verdict than under the confirmed rules (deny or ask becoming
//! allow, deny becoming ask: a removed rule, a more specific allow). Anything else — a new ask
//! or deny rule, a removed allow rule — only tightens it and takes effect at once.

use serde::Serialize;

use super::{Decision, Policy};
use crate::catalog::CatalogTool;

/// One way a changed policy is looser than the confirmed one.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Loosening {
    /// A tool address, or the pattern of an allow rule that matches no tool yet.
    pub target: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub connection: Option<String>,
    /// The confirmed decision (`None` for an allow rule that matches no tool yet).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub from: Option<Decision>,
    pub to: Decision,
}

impl Loosening {
    /// "`demo.delete_note`: ask → allow".
    pub fn describe(&self) -> String {
        let connection = self
            .connection
            .as_deref()
            .map(|c| format!(" (connection `{c}`)"))
            .unwrap_or_default();
        match self.from {
            Some(from) => format!("{}{connection}: {from} → {}", self.target, self.to),
            None => format!("new rule {}{connection}: {}", self.target, self.to),
        }
    }
}

impl Policy {
    /// How `self` is looser than `confirmed`, judged over `tools` (and, for allow rules that
    /// match none of them, by the rules themselves). Empty: `self` may take effect at once.
    pub fn loosenings(&self, confirmed: &Policy, tools: &[CatalogTool]) -> Vec<Loosening> {
        let mut connections: Vec<Option<&str>> = vec![None];
        for rule in self.rules().iter().chain(confirmed.rules()) {
            if let Some(c) = rule.connection.as_deref()
                && !connections.contains(&Some(c))
            {
                connections.push(Some(c));
            }
        }
        let mut found = Vec::new();
        for tool in tools {
            for connection in &connections {
                let now = self.own_verdict(tool, *connection).decision;
                let before = confirmed.own_verdict(tool, *connection).decision;
                if now < before {
                    found.push(Loosening {
                        target: tool.address.to_string(),
                        connection: connection.map(str::to_owned),
                        from: Some(before),
                        to: now,
                    });
                }
            }
        }
        // An allow rule the confirmed policy lacks loosens tools that may come later (a source
        // added afterwards), even when it changes no tool of today's catalog.
        let tool_changes = found.len();
        for rule in self.rules() {
            let known = confirmed.rules().iter().any(|r| r == rule);
            if rule.decision == Decision::Allow && !known && tool_changes == 0 {
                found.push(Loosening {
                    target: rule.pattern.clone(),
                    connection: rule.connection.clone(),
                    from: None,
                    to: Decision::Allow,
                });
            }
        }
        found
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::catalog::ToolAddress;
    use crate::policy::Rule;

    fn tool(address: &str, destructive: bool) -> CatalogTool {
        let definition = json!({
            "name": address,
            "inputSchema": {"type": "object"},
            "annotations": {"destructiveHint": destructive},
        });
        CatalogTool {
            address: ToolAddress::parse(address).expect("address"),
            remote_name: address.to_owned(),
            definition: serde_json::from_value(definition).expect("tool"),
        }
    }

    fn rule(pattern: &str, decision: Decision) -> Rule {
        Rule {
            pattern: pattern.to_owned(),
            connection: None,
            decision,
        }
    }

    #[test]
    fn tightening_takes_effect_and_loosening_is_held() {
        let tools = [tool("demo.add", false), tool("demo.delete_note", true)];
        let confirmed = Policy::new(vec![rule("demo.add", Decision::Allow)]);
        let tighter = Policy::new(vec![rule("demo.add", Decision::Ask)]);
        assert!(tighter.loosenings(&confirmed, &tools).is_empty());
        let looser = Policy::new(vec![rule("*", Decision::Allow)]);
        let found = looser.loosenings(&confirmed, &tools);
        assert_eq!(
            found.iter().map(Loosening::describe).collect::<Vec<_>>(),
            ["demo.delete_note: ask → allow"]
        );
        // Held back, the file's allow waits; its tightening does not.
        let held = Policy::new(vec![
            rule("*", Decision::Allow),
            rule("demo.add", Decision::Ask),
        ])
        .held_back_by(confirmed.clone());
        assert_eq!(held.verdict(&tools[1], None).decision, Decision::Ask);
        assert!(
            held.verdict(&tools[1], None)
                .reason
                .contains("waits for your confirmation")
        );
        assert_eq!(held.verdict(&tools[0], None).decision, Decision::Ask);
    }

    #[test]
    fn an_allow_rule_for_tools_not_there_yet_is_held_too() {
        let tools = [tool("demo.add", false)];
        let confirmed = Policy::new(Vec::new());
        let later = Policy::new(vec![rule("github", Decision::Allow)]);
        assert_eq!(
            later
                .loosenings(&confirmed, &tools)
                .iter()
                .map(Loosening::describe)
                .collect::<Vec<_>>(),
            ["new rule github: allow"]
        );
        let removed_deny = Policy::new(Vec::new());
        let deny = Policy::new(vec![rule("demo", Decision::Deny)]);
        assert_eq!(
            removed_deny.loosenings(&deny, &tools)[0].describe(),
            "demo.add: deny → allow"
        );
    }
}
