//! Policy: whether a tool may run freely (allow), needs a person (ask) or is hidden (deny).
//!
//! The rules come from the user's policy file (`capa_config` parses and writes it); this module
//! matches them against tool addresses. When no rule matches, the tool's annotations decide
//! ([`Policy::verdict`], in `policy/verdict.rs`); they are untrusted hints, so they can only make
//! a tool stricter and never override a rule. docs/policies.md explains both to users.

pub use capa_config::{PolicyDecision as Decision, PolicyRule as Rule};

use crate::catalog::ToolAddress;

mod confirmation;
mod pinned;
mod profile;
mod verdict;

pub use confirmation::Loosening;
pub use profile::ProfileScope;
pub use verdict::PolicyVerdict;

/// The user's rules. Which rule applies to a tool (docs/policies.md, "Precedence"):
/// 1. a rule naming the connection in use beats one without a connection;
/// 2. then the most specific pattern: an exact address, then the glob with the most literal
///    characters, then the source (`github`, `github.*`), then `*`;
/// 3. at equal specificity the stricter decision (deny over ask over allow).
///
/// A policy may be *held back* by the rules a person last confirmed: then every verdict is the
/// stricter of the two, so a file edit that loosens the policy (made outside the app's window
/// or an interactive terminal: by hand, through the API's token, by a tool that writes files)
/// takes effect only once a person confirms it, while one that tightens it takes effect at once.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Policy {
    rules: Vec<Rule>,
    held_back_by: Option<Box<Policy>>,
    /// The profile a client is served through, which can only make verdicts stricter.
    within: Option<std::sync::Arc<ProfileScope>>,
    /// Tools whose definition is not the one a person approved (`policy/pinned.rs`).
    changed: Option<std::sync::Arc<crate::pins::ChangedTools>>,
}

/// How specifically a pattern matched; variants are in increasing order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Specificity {
    Everything,
    Source,
    /// A glob, by its number of characters other than `*`.
    Glob(usize),
    Exact,
}

impl Policy {
    pub fn new(rules: Vec<Rule>) -> Self {
        Self {
            rules,
            held_back_by: None,
            within: None,
            changed: None,
        }
    }

    /// These rules as a client of `profile` sees them: every verdict is the stricter of the
    /// policy's and the profile's.
    #[must_use]
    pub fn within(self, profile: std::sync::Arc<ProfileScope>) -> Self {
        Self {
            within: Some(profile),
            ..self
        }
    }

    /// Whether the client sees source `namespace` at all: every source, unless a profile
    /// serves only some. Tools of a source it does not serve are not "hidden by your policy":
    /// they are not there, and listings do not count them.
    pub fn serves_source(&self, namespace: &str) -> bool {
        self.within
            .as_ref()
            .is_none_or(|p| p.admits_source(namespace))
    }

    /// The profile these rules are seen through, if any.
    pub fn profile(&self) -> Option<&ProfileScope> {
        self.within.as_deref()
    }

    /// These rules, held back by the `confirmed` ones (see the type's documentation).
    #[must_use]
    pub fn held_back_by(self, confirmed: Policy) -> Self {
        Self {
            held_back_by: Some(Box::new(confirmed.unheld())),
            ..self
        }
    }

    /// The rules a person confirmed, when this policy is held back by them.
    pub fn confirmed(&self) -> Option<&Policy> {
        self.held_back_by.as_deref()
    }

    fn unheld(self) -> Self {
        Self::new(self.rules)
    }

    pub fn rules(&self) -> &[Rule] {
        &self.rules
    }

    /// Whether any rule names a connection (then the hub must know which connection a call
    /// uses before deciding).
    pub fn has_connection_rules(&self) -> bool {
        self.rules.iter().any(|r| r.connection.is_some())
            || self
                .held_back_by
                .as_ref()
                .is_some_and(|c| c.has_connection_rules())
    }

    /// The rule that decides `address` when called with `connection`, `None` when no rule
    /// matches. Without a connection (search, describe) only rules without one apply.
    pub fn decide(
        &self,
        address: &ToolAddress,
        connection: Option<&str>,
    ) -> Option<(Decision, &Rule)> {
        let full = address.to_string();
        self.rules
            .iter()
            .filter(|rule| {
                rule.connection
                    .as_deref()
                    .is_none_or(|c| Some(c) == connection)
            })
            .filter_map(|rule| {
                let specificity = specificity(&rule.pattern, address, &full)?;
                Some((
                    (rule.connection.is_some(), specificity, rule.decision),
                    rule,
                ))
            })
            .max_by_key(|(key, _)| *key)
            .map(|(_, rule)| (rule.decision, rule))
    }
}

/// How specifically `pattern` matches the tool, `None` when it does not.
fn specificity(pattern: &str, address: &ToolAddress, full: &str) -> Option<Specificity> {
    if pattern == "*" {
        return Some(Specificity::Everything);
    }
    let source = capa_config::canonical_pattern(pattern);
    if !source.contains(['.', '*']) {
        return (source == address.namespace).then_some(Specificity::Source);
    }
    if !pattern.contains('*') {
        return (pattern == full).then_some(Specificity::Exact);
    }
    glob_matches(pattern, full)
        .then(|| Specificity::Glob(pattern.len() - pattern.matches('*').count()))
}

/// `*` stands for any text (dots included); everything else matches itself.
fn glob_matches(pattern: &str, text: &str) -> bool {
    let mut parts = pattern.split('*');
    let first = parts.next().unwrap_or_default();
    let Some(mut rest) = text.strip_prefix(first) else {
        return false;
    };
    let parts: Vec<&str> = parts.collect();
    let Some((last, middle)) = parts.split_last() else {
        // No `*` at all: the whole text must be the pattern.
        return rest.is_empty();
    };
    for part in middle {
        match rest.find(part) {
            Some(at) => rest = &rest[at + part.len()..],
            None => return false,
        }
    }
    rest.len() >= last.len() && rest.ends_with(last)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rule(pattern: &str, connection: Option<&str>, decision: Decision) -> Rule {
        Rule {
            pattern: pattern.to_owned(),
            connection: connection.map(str::to_owned),
            decision,
        }
    }

    fn decide(policy: &Policy, address: &str, connection: Option<&str>) -> Option<Decision> {
        let address = ToolAddress::parse(address).expect("address");
        policy.decide(&address, connection).map(|(d, _)| d)
    }

    #[test]
    fn the_most_specific_pattern_wins() {
        let policy = Policy::new(vec![
            rule("*", None, Decision::Ask),
            rule("github", None, Decision::Allow),
            rule("github.delete_*", None, Decision::Deny),
            rule("github.delete_file", None, Decision::Ask),
            rule("github.delete_f*", None, Decision::Allow),
        ]);
        let d = |a| decide(&policy, a, None);
        assert_eq!(d("slack.post"), Some(Decision::Ask));
        assert_eq!(d("github.create_issue"), Some(Decision::Allow));
        assert_eq!(d("github.delete_repo"), Some(Decision::Deny));
        assert_eq!(
            d("github.delete_fork"),
            Some(Decision::Allow),
            "longer glob"
        );
        assert_eq!(
            d("github.delete_file"),
            Some(Decision::Ask),
            "exact address"
        );
        assert_eq!(decide(&Policy::default(), "a.b", None), None);
    }

    #[test]
    fn a_rule_for_the_connection_in_use_beats_a_more_specific_one_without() {
        let policy = Policy::new(vec![
            rule("github.delete_repo", None, Decision::Ask),
            rule("github", Some("work"), Decision::Deny),
        ]);
        assert_eq!(
            decide(&policy, "github.delete_repo", Some("work")),
            Some(Decision::Deny)
        );
        assert_eq!(
            decide(&policy, "github.delete_repo", Some("personal")),
            Some(Decision::Ask)
        );
        // Search and describe know no connection: connection rules do not apply there.
        assert_eq!(decide(&policy, "github.get_me", None), None);
        assert_eq!(
            decide(&policy, "github.get_me", Some("work")),
            Some(Decision::Deny)
        );
    }

    #[test]
    fn at_equal_specificity_the_stricter_decision_wins() {
        for rules in [
            vec![
                rule("github", None, Decision::Allow),
                rule("github.*", None, Decision::Deny),
            ],
            vec![
                rule("github.*", None, Decision::Deny),
                rule("github", None, Decision::Allow),
            ],
        ] {
            assert_eq!(
                decide(&Policy::new(rules), "github.x", None),
                Some(Decision::Deny)
            );
        }
        // Both globs have 12 characters besides `*`.
        let policy = Policy::new(vec![
            rule("github.*issue", None, Decision::Ask),
            rule("*.close_issue", None, Decision::Allow),
        ]);
        assert_eq!(
            decide(&policy, "github.close_issue", None),
            Some(Decision::Ask)
        );
    }

    #[test]
    fn globs_match_anywhere_in_the_address() {
        assert!(glob_matches("*.delete_*", "github.delete_repo"));
        assert!(glob_matches("github.*_issue", "github.create_issue"));
        assert!(glob_matches("g*b.*", "github.x"));
        assert!(!glob_matches("github.delete_*", "github.create_issue"));
        assert!(!glob_matches("a*aa", "aa"), "parts may not overlap");
        assert!(glob_matches("a*a", "aa"));
        let policy = Policy::new(vec![rule("git*", None, Decision::Deny)]);
        assert_eq!(decide(&policy, "github.x", None), Some(Decision::Deny));
        assert_eq!(decide(&policy, "gitlab.x", None), Some(Decision::Deny));
        assert_eq!(decide(&policy, "slack.git", None), None);
    }
}
