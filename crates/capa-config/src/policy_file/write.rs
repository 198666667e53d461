//! Writing the policy file: deterministic YAML under a header, replaced atomically (a temporary
//! file renamed over it, so a reader never sees half a file), and the one-rule edits that
//! `capa policy set|reset` and the hub's "always allow" make: read the file, change one rule,
//! write it back. Two processes editing at the same instant may lose one edit; neither can
//! leave a broken file.

use std::path::Path;

use super::{
    PolicyDecision, PolicyRule, check_policy_connection, check_policy_pattern, load_policy_file,
};
use crate::error::{ConfigError, ConfigIssue};

const HEADER: &str = "# Capabilities policy: allow | ask | deny per tool address, source or glob. `capa policy` edits this file.\n\
# Precedence and defaults: docs/policies.md. capa rewrites this file; comments other than this header are not kept.\n";

/// The file's text for `rules`, in their order.
pub fn render_policy(rules: &[PolicyRule]) -> String {
    let mut out = String::from(HEADER);
    if rules.is_empty() {
        out.push_str("rules: []\n");
        return out;
    }
    out.push_str("rules:\n");
    for rule in rules {
        out.push_str(&format!("  - match: {}\n", scalar(&rule.pattern)));
        if let Some(connection) = &rule.connection {
            out.push_str(&format!("    connection: {}\n", scalar(connection)));
        }
        out.push_str(&format!("    decision: {}\n", rule.decision));
    }
    out
}

/// A YAML scalar that reads back as the same string: plain when that is safe, else single-quoted
/// (`*` would start an alias, `null` or `1` would not be strings).
fn scalar(text: &str) -> String {
    const SPECIAL: &[&str] = &[
        "true", "false", "null", "yes", "no", "on", "off", "y", "n", "~",
    ];
    let plain = text.chars().next().is_some_and(|c| c.is_ascii_alphabetic())
        && text
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.' | '*'))
        && !SPECIAL.contains(&text.to_ascii_lowercase().as_str());
    if plain {
        text.to_owned()
    } else {
        format!("'{}'", text.replace('\'', "''"))
    }
}

/// Adds the rule, or changes the decision of the rule with the same pattern and connection.
/// Returns the decision it replaced. A file that does not parse is left alone (the error says
/// where it is broken).
pub fn set_policy_rule(
    file: &Path,
    rule: PolicyRule,
) -> Result<Option<PolicyDecision>, ConfigError> {
    let problem = check_policy_pattern(&rule.pattern).err().or_else(|| {
        rule.connection
            .as_deref()
            .and_then(|c| check_policy_connection(c).err())
    });
    if let Some(problem) = problem {
        return Err(ConfigError::Invalid(vec![ConfigIssue {
            file: file.to_path_buf(),
            position: crate::Position::default(),
            message: problem.message,
            fix: Some(problem.fix),
        }]));
    }
    let mut rules = load_policy_file(file)?;
    let existing = rules
        .iter_mut()
        .find(|r| r.same_target(&rule.pattern, rule.connection.as_deref()));
    let previous = if let Some(existing) = existing {
        let previous = existing.decision;
        *existing = rule;
        Some(previous)
    } else {
        rules.push(rule);
        None
    };
    write_atomically(file, &render_policy(&rules))?;
    Ok(previous)
}

/// Removes the rule with this pattern and connection; `false` when there was none (the file is
/// then left untouched).
pub fn reset_policy_rule(
    file: &Path,
    pattern: &str,
    connection: Option<&str>,
) -> Result<bool, ConfigError> {
    let mut rules = load_policy_file(file)?;
    let before = rules.len();
    rules.retain(|r| !r.same_target(pattern, connection));
    if rules.len() == before {
        return Ok(false);
    }
    write_atomically(file, &render_policy(&rules))?;
    Ok(true)
}

/// Removes every rule; returns how many there were. A broken file is replaced too: starting
/// over is what `--all` asks for.
pub fn reset_all_policy_rules(file: &Path) -> Result<usize, ConfigError> {
    let count = load_policy_file(file).map_or(0, |rules| rules.len());
    write_atomically(file, &render_policy(&[]))?;
    Ok(count)
}

fn write_atomically(file: &Path, text: &str) -> Result<(), ConfigError> {
    let error = |source| ConfigError::Write {
        file: file.to_path_buf(),
        source,
    };
    if let Some(dir) = file.parent() {
        std::fs::create_dir_all(dir).map_err(error)?;
    }
    let name = file
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let tmp = file.with_file_name(format!(".{name}.{}.tmp", std::process::id()));
    std::fs::write(&tmp, text)
        .and_then(|()| std::fs::rename(&tmp, file))
        .map_err(|e| {
            let _ = std::fs::remove_file(&tmp);
            error(e)
        })
}
