//! The policy file, `<config dir>/policy.yaml`: allow / ask / deny per tool address, source or
//! glob. People edit it by hand and `capa policy` rewrites it, so it is parsed with positions (a
//! mistake names its line and the fix) and written back deterministically (`policy_file/write.rs`).
//! Matching rules against tools is the hub's job; this module only knows the file.

use std::collections::BTreeMap;
use std::fmt;
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::error::{ConfigError, ConfigIssue};
use crate::located::{Located, Position};

mod write;

pub use write::{render_policy, reset_all_policy_rules, reset_policy_rule, set_policy_rule};

/// The file's name in the config dir.
pub const POLICY_FILE_NAME: &str = "policy.yaml";
/// Where the format, precedence and defaults are explained; fixes point there.
const POLICY_DOCS: &str = "docs/policies.md";
/// Longer than any address; longer input is a mistake.
const MAX_PATTERN_CHARS: usize = 200;

/// What a policy says about a tool, ordered from the most to the least permissive so that
/// "the stricter decision" is the greater one.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, Default,
)]
#[serde(rename_all = "lowercase")]
pub enum PolicyDecision {
    /// Calls run without asking anyone.
    #[default]
    Allow,
    /// Calls pause for a person; search marks the tool `[asks]`.
    Ask,
    /// The tool is hidden: search counts it without naming it, describe and calls refuse it.
    Deny,
}

impl PolicyDecision {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Allow => "allow",
            Self::Ask => "ask",
            Self::Deny => "deny",
        }
    }

    /// `allow`, `ask` or `deny` (exactly, lower case).
    pub fn parse(text: &str) -> Option<Self> {
        match text {
            "allow" => Some(Self::Allow),
            "ask" => Some(Self::Ask),
            "deny" => Some(Self::Deny),
            _ => None,
        }
    }
}

impl fmt::Display for PolicyDecision {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One rule: which tools (`pattern`), for which connection (none: every connection), and the
/// decision.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PolicyRule {
    /// `github.create_issue` (one tool), `github` or `github.*` (a source), a glob such as
    /// `github.delete_*`, or `*` (everything).
    pub pattern: String,
    /// Applies only to calls made with this connection of the source.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub connection: Option<String>,
    pub decision: PolicyDecision,
}

impl PolicyRule {
    /// Whether `self` and `other` are the same rule target: the same connection and a pattern
    /// naming the same tools (`github` and `github.*` are one source).
    pub fn same_target(&self, pattern: &str, connection: Option<&str>) -> bool {
        self.connection.as_deref() == connection
            && canonical_pattern(&self.pattern) == canonical_pattern(pattern)
    }
}

/// `github.*` is written for `github` (a whole source); every other pattern is itself.
pub fn canonical_pattern(pattern: &str) -> &str {
    match pattern.strip_suffix(".*") {
        Some(source) if !source.contains(['.', '*']) => source,
        _ => pattern,
    }
}

/// Why a pattern or connection name cannot be used, and how to fix it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RuleProblem {
    pub message: String,
    pub fix: String,
}

impl fmt::Display for RuleProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}; {}", self.message, self.fix)
    }
}

/// Checks a pattern: a namespace part of lower-case letters, digits, `-`, `_` (as source ids,
/// starting with a letter) and optionally `.` and a tool-name part of letters, digits, `_`, `-`,
/// `.` (MCP tool names); `*` anywhere stands for any text.
pub fn check_policy_pattern(pattern: &str) -> Result<(), RuleProblem> {
    const FIX: &str = "write a tool address (`github.create_issue`), a source (`github` or `github.*`), a glob (`github.delete_*`) or `*`";
    let problem = |detail: &str| RuleProblem {
        message: format!("`{pattern}` is not a valid policy pattern: {detail}"),
        fix: FIX.to_owned(),
    };
    if pattern.trim().is_empty() {
        return Err(RuleProblem {
            message: "the pattern is empty".to_owned(),
            fix: FIX.to_owned(),
        });
    }
    if pattern.chars().count() > MAX_PATTERN_CHARS {
        return Err(problem(&format!(
            "longer than {MAX_PATTERN_CHARS} characters"
        )));
    }
    let (namespace, name) = match pattern.split_once('.') {
        Some((ns, name)) => (ns, Some(name)),
        None => (pattern, None),
    };
    let namespace_ok = matches!(namespace.chars().next(), Some(c) if c.is_ascii_lowercase() || c == '*')
        && namespace
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || matches!(c, '-' | '_' | '*'));
    if !namespace_ok {
        return Err(problem(
            "the source part takes lower-case letters, digits, `-`, `_` and `*`, starting with a letter or `*`",
        ));
    }
    if let Some(name) = name {
        if name.is_empty() {
            return Err(problem("nothing follows the `.`"));
        }
        if !name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | '*'))
        {
            return Err(problem(
                "the tool part takes letters, digits, `-`, `_`, `.` and `*`",
            ));
        }
    }
    Ok(())
}

/// Checks a connection name: the same rule as `capa connections set` (lower-case letters,
/// digits, `-`, `_`; 1 to 64 characters).
pub fn check_policy_connection(connection: &str) -> Result<(), RuleProblem> {
    let ok = !connection.is_empty()
        && connection.len() <= 64
        && connection
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || c == '_');
    if ok {
        Ok(())
    } else {
        Err(RuleProblem {
            message: format!("`{connection}` is not a valid connection name"),
            fix: "use lower-case letters, digits, `-` and `_` (at most 64 characters), as `capa connections list` shows them".to_owned(),
        })
    }
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawFile {
    #[serde(default)]
    rules: Option<Vec<RawRule>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawRule {
    #[serde(rename = "match")]
    pattern: Located<String>,
    #[serde(default)]
    connection: Option<Located<String>>,
    /// A string rather than [`PolicyDecision`], so that a wrong value gets our message and fix.
    decision: Located<String>,
}

/// Reads the policy file; a missing file means no rules.
pub fn load_policy_file(file: &Path) -> Result<Vec<PolicyRule>, ConfigError> {
    match crate::yaml::read_text(file) {
        Ok(text) => parse_policy_str(file, &text),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Vec::new()),
        Err(source) => Err(ConfigError::Read {
            file: file.to_path_buf(),
            source,
        }),
    }
}

/// Parses and checks the text of a policy file named `file`, reporting every problem found.
pub fn parse_policy_str(file: &Path, text: &str) -> Result<Vec<PolicyRule>, ConfigError> {
    let read = crate::yaml::read::<RawFile>(file, text, POLICY_DOCS);
    let Some(raw) = read.value else {
        let mut issues = read.issues;
        // An unquoted `*` starts an alias in YAML, the most common way to break this file.
        if text.contains(": *") || text.contains(":*") {
            for issue in &mut issues {
                issue.fix = Some(format!(
                    "{}; a pattern starting with `*` must be quoted: `match: '*'`",
                    issue.fix.take().unwrap_or_default()
                ));
            }
        }
        return Err(ConfigError::Invalid(issues));
    };
    let mut issues = Vec::new();
    let mut issue = |position: Position, message: String, fix: String| {
        issues.push(ConfigIssue {
            file: file.to_path_buf(),
            position,
            message,
            fix: Some(fix),
        });
    };
    let mut rules = Vec::new();
    let mut seen: BTreeMap<(String, Option<String>), u64> = BTreeMap::new();
    for raw in raw.rules.unwrap_or_default() {
        let mut ok = true;
        if let Err(p) = check_policy_pattern(&raw.pattern) {
            issue(raw.pattern.position, p.message, p.fix);
            ok = false;
        }
        if let Some(connection) = &raw.connection
            && let Err(p) = check_policy_connection(connection)
        {
            issue(connection.position, p.message, p.fix);
            ok = false;
        }
        let decision = PolicyDecision::parse(raw.decision.trim());
        if decision.is_none() {
            issue(
                raw.decision.position,
                format!("unknown decision `{}`", raw.decision.value),
                "use allow, ask or deny".to_owned(),
            );
        }
        let (Some(decision), true) = (decision, ok) else {
            continue;
        };
        let connection = raw.connection.map(|c| c.value);
        let key = (
            canonical_pattern(&raw.pattern).to_owned(),
            connection.clone(),
        );
        if let Some(first) = seen.get(&key) {
            issue(
                raw.pattern.position,
                format!(
                    "a rule for `{}`{} is already on line {first}",
                    raw.pattern.value,
                    connection
                        .as_deref()
                        .map(|c| format!(" (connection `{c}`)"))
                        .unwrap_or_default()
                ),
                "keep one rule per pattern and connection".to_owned(),
            );
            continue;
        }
        seen.insert(key, raw.pattern.position.line);
        rules.push(PolicyRule {
            pattern: raw.pattern.value,
            connection,
            decision,
        });
    }
    if issues.is_empty() && read.issues.is_empty() {
        Ok(rules)
    } else {
        Err(ConfigError::Invalid(crate::yaml::settle(
            read.issues,
            issues,
        )))
    }
}
