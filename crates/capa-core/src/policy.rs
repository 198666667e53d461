//! Policy: whether a tool may run freely (allow), needs a person (ask) or is hidden (deny).
//!
//! Search, describe and calls already consult this one type. Rules are loaded from the user's
//! configuration by the approvals work; until then a hub's policy is empty, so every tool is
//! allowed (tool annotations are untrusted hints and never decide on their own).

use crate::catalog::ToolAddress;

/// What the policy says about one tool.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Decision {
    Allow,
    /// Calls pause for a person; search marks the tool `[asks]`.
    Ask,
    /// The tool is hidden: search counts it without naming it, describe and calls refuse it.
    Deny,
}

/// One rule: a pattern and its decision.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rule {
    /// `github.create_issue` (one tool), `github` or `github.*` (a source), `github.delete_*`
    /// (a name prefix), or `*` (everything).
    pub pattern: String,
    pub decision: Decision,
}

/// Ordered rules; the most specific matching pattern wins (exact address, then the longest
/// prefix pattern, then the source, then `*`), and no match means allow.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Policy {
    rules: Vec<Rule>,
}

impl Policy {
    pub fn new(rules: Vec<Rule>) -> Self {
        Self { rules }
    }

    pub fn decide(&self, address: &ToolAddress) -> Decision {
        let full = address.to_string();
        self.rules
            .iter()
            .filter_map(|rule| specificity(&rule.pattern, address, &full).map(|s| (s, rule)))
            .max_by_key(|(s, _)| *s)
            .map_or(Decision::Allow, |(_, rule)| rule.decision)
    }
}

/// How specifically `pattern` matches, `None` when it does not.
fn specificity(pattern: &str, address: &ToolAddress, full: &str) -> Option<usize> {
    if pattern == full {
        return Some(usize::MAX);
    }
    if pattern == "*" {
        return Some(0);
    }
    if pattern == address.namespace || pattern == format!("{}.*", address.namespace) {
        return Some(1);
    }
    let prefix = pattern.strip_suffix('*')?;
    (prefix.contains('.') && full.starts_with(prefix)).then_some(1 + prefix.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rule(pattern: &str, decision: Decision) -> Rule {
        Rule {
            pattern: pattern.to_owned(),
            decision,
        }
    }

    #[test]
    fn the_most_specific_rule_wins() {
        let policy = Policy::new(vec![
            rule("*", Decision::Ask),
            rule("github", Decision::Allow),
            rule("github.delete_*", Decision::Deny),
            rule("github.delete_file", Decision::Ask),
        ]);
        let decide = |a: &str| policy.decide(&ToolAddress::parse(a).expect("address"));
        assert_eq!(decide("slack.post"), Decision::Ask);
        assert_eq!(decide("github.create_issue"), Decision::Allow);
        assert_eq!(decide("github.delete_repo"), Decision::Deny);
        assert_eq!(decide("github.delete_file"), Decision::Ask);
        assert_eq!(
            Policy::default().decide(&ToolAddress::new("a", "b")),
            Decision::Allow
        );
    }
}
