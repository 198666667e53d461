//! `skills:` of a capabilities file, and the `requires` check a SKILL.md's
//! `metadata.requires` shares (crate `skill_md`).

use std::collections::BTreeMap;

use super::{Checker, DEMO_ID, Inherited, is_source_id};
use crate::file::SkillEntry;
use crate::located::Position;
use crate::resolved::{SkillConfig, SkillRequirement};

pub(super) fn check_skills(
    checker: &mut Checker<'_>,
    entries: &[SkillEntry],
    servers: &BTreeMap<String, Position>,
    inherited: Option<Inherited<'_>>,
) -> Vec<SkillConfig> {
    let mut seen: BTreeMap<String, Position> = BTreeMap::new();
    let mut skills = Vec::new();
    for entry in entries {
        let id = &entry.id;
        if !is_source_id(id) {
            checker.issue(
                id.position,
                format!("skill id {:?} is not a valid name", id.value),
                "use lower-case letters, digits, `-` and `_`, starting with a letter (at most 64 characters), for example `triage`",
            );
        }
        if let Some(first) = seen.get(id.as_str()) {
            let first_line = first.line;
            checker.issue(
                id.position,
                format!(
                    "skill id `{}` is already used on line {first_line}",
                    id.value
                ),
                "give each skill its own id",
            );
        } else {
            seen.insert(id.value.clone(), id.position);
        }
        if entry.description.trim().is_empty() {
            checker.issue(
                entry.description.position,
                format!("skill `{}` has an empty `description`", id.value),
                "say in a sentence what the skill is for: models read it to choose skills",
            );
        }
        let requires = skill_requirements(checker, entry, servers, inherited);
        skills.push(SkillConfig {
            id: id.value.clone(),
            description: entry.description.value.clone(),
            requires,
            active: !entry.disabled,
            file: checker.file.to_path_buf(),
            document: None,
        });
    }
    skills
}

/// The servers a skill of one file may name: the file's own, the global file's (for a project
/// file) and the demo source.
pub(crate) struct SkillServers<'a> {
    pub own: Vec<&'a str>,
    pub inherited: Option<Inherited<'a>>,
}

impl SkillServers<'_> {
    fn declares(&self, server: &str) -> bool {
        self.own.contains(&server)
            || server == DEMO_ID
            || self.inherited.is_some_and(|i| i.servers.contains(server))
    }
}

/// One entry of skill `skill`'s `requires` (a capabilities file's list, or a SKILL.md's
/// `metadata.requires`): what it names, or what is wrong with it and the fix.
pub(crate) fn check_requirement(
    text: &str,
    skill: &str,
    servers: &SkillServers<'_>,
) -> Result<SkillRequirement, (String, String)> {
    const FORMS: &str = "write `@github` for every tool the server exposes, or `github.create_issue` for one remote tool";
    let Some(requirement) = SkillRequirement::parse(text) else {
        return Err((
            format!(
                "`{text}` in the `requires` of skill `{skill}` is neither `@server` nor `server.tool`"
            ),
            FORMS.to_owned(),
        ));
    };
    let server = requirement.server();
    if !is_source_id(server) {
        return Err((
            format!(
                "`{text}` in the `requires` of skill `{skill}`: `{server}` is not a valid server id"
            ),
            FORMS.to_owned(),
        ));
    }
    if let SkillRequirement::Tool { tool, .. } = &requirement
        && tool.contains(char::is_whitespace)
    {
        return Err((
            format!("`{text}` in the `requires` of skill `{skill}`: the tool name has spaces"),
            "write the remote tool name as the server advertises it, for example `github.create_issue`".to_owned(),
        ));
    }
    if !servers.declares(server) {
        let mut known: Vec<&str> = servers.own.clone();
        if let Some(inherited) = servers.inherited {
            known.extend(inherited.servers.iter().map(String::as_str));
        }
        known.sort_unstable();
        known.dedup();
        let where_ = match servers.inherited {
            Some(i) => format!("this file or {}", i.file.display()),
            None => "this file".to_owned(),
        };
        return Err((
            format!(
                "skill `{skill}` requires `{text}`, but no server `{server}` is declared in {where_}"
            ),
            if known.is_empty() {
                format!("declare the server `{server}` under `servers:` first")
            } else {
                format!(
                    "use one of the declared server ids ({}), or declare `{server}` under `servers:`",
                    known.join(", ")
                )
            },
        ));
    }
    Ok(requirement)
}

fn skill_requirements(
    checker: &mut Checker<'_>,
    entry: &SkillEntry,
    servers: &BTreeMap<String, Position>,
    inherited: Option<Inherited<'_>>,
) -> Vec<SkillRequirement> {
    let skill = entry.id.as_str();
    if entry.requires.is_empty() {
        checker.issue(
            entry.requires.position,
            format!("skill `{skill}` has an empty `requires` list"),
            "list the tools it needs: `github.create_issue` for one remote tool, `@github` for every tool the server exposes",
        );
    }
    let servers = SkillServers {
        own: servers.keys().map(String::as_str).collect(),
        inherited,
    };
    let mut requires = Vec::new();
    for text in entry.requires.iter() {
        let position = text.position;
        let requirement = match check_requirement(text, skill, &servers) {
            Ok(requirement) => requirement,
            Err((message, fix)) => {
                checker.issue(position, message, fix);
                continue;
            }
        };
        if requires.contains(&requirement) {
            checker.issue(
                position,
                format!("`{requirement}` is listed twice in the `requires` of skill `{skill}`"),
                "list each requirement once",
            );
            continue;
        }
        requires.push(requirement);
    }
    requires
}
