//! `profiles:` of a capabilities file: names, modes, the sources and skills they name, their
//! policy patterns and limits.

use std::collections::{BTreeMap, BTreeSet};

use super::{Checker, DEMO_ID, Inherited, is_source_id};
use crate::file::{ProfileEntry, ProfileLimits, ProfileMode};
use crate::located::{Located, Position};
use crate::policy_file::check_policy_pattern;
use crate::resolved::{LoweredLimits, ProfileConfig};

/// The name of the hub's own profile, served at `/mcp`.
pub const DEFAULT_PROFILE: &str = "default";

/// At most this many profiles per file: each is an HTTP endpoint with its own sessions.
const MAX_PROFILES: usize = 64;

/// The sentence for a profile name the configuration does not have: `capa mcp --profile` and
/// `capa clients connect --profile` say it alike.
pub fn no_such_profile<'a>(name: &str, declared: impl IntoIterator<Item = &'a str>) -> String {
    let names: Vec<&str> = declared.into_iter().collect();
    if names.is_empty() {
        format!(
            "no profile named `{name}`: the capabilities files declare none (add one under `profiles:`, docs/profiles.md)"
        )
    } else {
        format!(
            "no profile named `{name}`: the capabilities files declare {}",
            names.join(", ")
        )
    }
}

pub(super) fn check_profiles(
    checker: &mut Checker<'_>,
    entries: &BTreeMap<String, Located<ProfileEntry>>,
    servers: &BTreeMap<String, Position>,
    inherited: Option<Inherited<'_>>,
) -> Vec<ProfileConfig> {
    if entries.len() > MAX_PROFILES {
        let first = entries
            .values()
            .next()
            .map(|e| e.position)
            .unwrap_or_default();
        checker.issue(
            first,
            format!(
                "{} profiles are declared; at most {MAX_PROFILES} are served",
                entries.len()
            ),
            "keep the profiles clients use and remove the others",
        );
        return Vec::new();
    }
    let named: Vec<(&String, &Located<ProfileEntry>)> = entries
        .iter()
        .filter(|(name, entry)| check_name(checker, name, entry.position))
        .collect();
    named
        .into_iter()
        .map(|(name, entry)| ProfileConfig {
            name: name.clone(),
            mode: entry
                .tool_exposure
                .as_ref()
                .map_or(ProfileMode::Code, |m| m.value),
            sources: entry
                .sources
                .as_ref()
                .map(|list| check_sources(checker, name, list, servers, inherited)),
            skills: entry
                .skills
                .as_ref()
                .map(|list| check_skill_names(checker, name, list)),
            ask: check_patterns(checker, name, &entry.ask, "ask"),
            deny: check_patterns(checker, name, &entry.deny, "deny"),
            limits: check_limits(checker, name, &entry.limits),
            read_result: entry.read_result.unwrap_or(true),
            description: entry.description.clone(),
            file: checker.file.to_path_buf(),
        })
        .collect()
}

/// Whether `name` may name a profile; reports why not.
fn check_name(checker: &mut Checker<'_>, name: &str, at: Position) -> bool {
    if name == DEFAULT_PROFILE {
        checker.issue(
            at,
            "`default` is the hub's own profile (served at /mcp) and cannot be redefined",
            "give this profile another name; the default profile follows options.toolExposure",
        );
        return false;
    }
    if !is_source_id(name) {
        checker.issue(
            at,
            format!("profile name {name:?} is not a valid name"),
            "use lower-case letters, digits, `-` and `_`, starting with a letter (at most 64 characters), for example `review`",
        );
        return false;
    }
    true
}

fn check_sources(
    checker: &mut Checker<'_>,
    profile: &str,
    list: &[Located<String>],
    servers: &BTreeMap<String, Position>,
    inherited: Option<Inherited<'_>>,
) -> BTreeSet<String> {
    let mut ids = BTreeSet::new();
    for id in list {
        let declared = servers.contains_key(id.as_str())
            || id.as_str() == DEMO_ID
            || inherited.is_some_and(|i| i.servers.contains(id.as_str()));
        if !declared {
            let known: Vec<&str> = servers.keys().map(String::as_str).collect();
            checker.issue(
                id.position,
                format!(
                    "profile `{profile}` names source `{}`, which no file declares",
                    id.value
                ),
                format!(
                    "name declared sources ({}) or `demo`",
                    if known.is_empty() {
                        "none in this file".to_owned()
                    } else {
                        known.join(", ")
                    }
                ),
            );
        }
        ids.insert(id.value.clone());
    }
    ids
}

fn check_skill_names(
    checker: &mut Checker<'_>,
    profile: &str,
    list: &[Located<String>],
) -> BTreeSet<String> {
    let mut names = BTreeSet::new();
    for skill in list {
        // A profile may name a skill of the global file or of a SKILL.md, which are known only
        // once every file is read: an unknown one is a warning then (load.rs); one that cannot
        // be a skill name at all is refused here.
        if !is_source_id(skill) {
            checker.issue(
                skill.position,
                format!(
                    "profile `{profile}` names skill {:?}, which is not a valid skill name",
                    skill.value
                ),
                "name skills by their id, for example `triage`",
            );
        }
        names.insert(skill.value.clone());
    }
    names
}

fn check_patterns(
    checker: &mut Checker<'_>,
    profile: &str,
    list: &[Located<String>],
    key: &str,
) -> Vec<String> {
    let mut kept = Vec::new();
    for pattern in list {
        match check_policy_pattern(pattern) {
            Ok(()) => kept.push(pattern.value.clone()),
            Err(problem) => checker.issue(
                pattern.position,
                format!("profile `{profile}`, `{key}`: {}", problem.message),
                problem.fix,
            ),
        }
    }
    kept
}

fn check_limits(checker: &mut Checker<'_>, profile: &str, limits: &ProfileLimits) -> LoweredLimits {
    for (key, value) in limits.named() {
        if let Some(value) = value
            && value.value == 0
        {
            checker.issue(
                value.position,
                format!("profile `{profile}`: limits.{key} is 0"),
                format!("use a positive {key}; leave it out to keep the hub's limit"),
            );
        }
    }
    let value = |v: &Option<Located<u64>>| v.as_ref().map(|v| v.value);
    LoweredLimits {
        code_bytes: value(&limits.code_bytes),
        compute_ms: value(&limits.compute_ms),
        wall_ms: value(&limits.wall_ms),
        memory_bytes: value(&limits.memory_bytes),
        max_calls: value(&limits.max_calls),
        max_concurrent: value(&limits.max_concurrent),
        inline_result_bytes: value(&limits.inline_result_bytes),
        upstream_timeout_ms: value(&limits.upstream_timeout_ms),
    }
}
