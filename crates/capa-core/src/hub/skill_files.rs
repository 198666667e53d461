//! Skills as clients read them: one SKILL.md per active skill (the MCP Skills extension serves
//! them as `skill://<name>/SKILL.md` resources), `describe("skill:<name>")` in code mode, and the
//! skills a `search` query names.
//!
//! A skill written as a SKILL.md is served as written. A skill of a capabilities file's
//! `skills:` has no file: the hub writes one from its name, description and the tools it
//! requires, so that every skill reads the same way.

use std::fmt::Write as _;

use capa_config::{SkillConfig, SkillRequirement};
use serde_json::{Map, Value};

use super::{Hub, Profile};
use crate::lookup::{self, LookupError};

/// The URI scheme of skills (the Skills extension's recommended layout).
pub const SKILL_URI_PREFIX: &str = "skill://";
/// How `describe` and the sandbox name a skill.
pub const SKILL_TARGET_PREFIX: &str = "skill:";
/// Longer than any skill name (the format allows 64 characters).
pub(super) const MAX_SKILL_NAME_CHARS: usize = 64;
/// Skills a `search` answer lists at most.
const MAX_SKILLS_IN_SEARCH: usize = 3;

/// One skill's SKILL.md as served.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SkillFile {
    pub name: String,
    pub description: String,
    /// `skill://<name>/SKILL.md`.
    pub uri: String,
    /// The whole file, front matter included.
    pub text: String,
    /// The front matter as JSON, as the file has it.
    pub front_matter: Map<String, Value>,
    /// `sha256:<hex>` of `text`'s bytes.
    pub digest: String,
}

impl SkillFile {
    fn of(skill: &SkillConfig) -> Self {
        let (text, front_matter) = match &skill.document {
            Some(document) => (document.text.clone(), document.front_matter.clone()),
            None => written_for(skill),
        };
        Self::new(
            skill.id.clone(),
            skill.description.clone(),
            skill_uri(&skill.id),
            text,
            front_matter,
        )
    }

    /// A SKILL.md at `uri` with its `text`; the digest is computed here.
    pub fn new(
        name: String,
        description: String,
        uri: String,
        text: String,
        front_matter: Map<String, Value>,
    ) -> Self {
        Self {
            digest: format!("sha256:{}", crate::digest::sha256_hex(text.as_bytes())),
            name,
            description,
            uri,
            text,
            front_matter,
        }
    }

    /// The file's size in bytes.
    pub fn size(&self) -> usize {
        self.text.len()
    }
}

/// `skill://<name>/SKILL.md`.
pub fn skill_uri(name: &str) -> String {
    format!("{SKILL_URI_PREFIX}{name}/{}", capa_config::SKILL_FILE)
}

/// The SKILL.md of a capabilities file's skill: its front matter, its description, and the
/// tools it requires (the front matter's `metadata.requires`, as a SKILL.md would say it).
fn written_for(skill: &SkillConfig) -> (String, Map<String, Value>) {
    let requires: Vec<String> = skill.requires.iter().map(ToString::to_string).collect();
    let mut front_matter = Map::new();
    front_matter.insert("name".into(), Value::from(skill.id.clone()));
    front_matter.insert("description".into(), Value::from(skill.description.clone()));
    let mut metadata = Map::new();
    metadata.insert("requires".into(), Value::from(requires.join(" ")));
    front_matter.insert("metadata".into(), Value::Object(metadata));
    // JSON strings are YAML flow scalars: quotes, backslashes and newlines stay what they are.
    let quoted = |text: &str| Value::from(text).to_string();
    let mut text = format!(
        "---\nname: {}\ndescription: {}\nmetadata:\n  requires: {}\n---\n\n{}\n",
        quoted(&skill.id),
        quoted(&skill.description),
        quoted(&requires.join(" ")),
        skill.description
    );
    if !requires.is_empty() {
        text.push_str("\nTools:\n");
        for requirement in &skill.requires {
            let _ = match requirement {
                SkillRequirement::Server(server) => {
                    writeln!(text, "- every tool of `{server}` the hub exposes")
                }
                SkillRequirement::Tool { server, tool } => writeln!(text, "- `{server}.{tool}`"),
            };
        }
    }
    (text, front_matter)
}

impl Hub {
    /// The SKILL.md of every active skill, in configuration order.
    pub fn skill_files(&self) -> Vec<SkillFile> {
        self.skill_files_in(None)
    }

    /// [`Hub::skill_files`] for a client of `profile`: the skills it serves.
    pub fn skill_files_in(&self, profile: Option<&Profile>) -> Vec<SkillFile> {
        self.served_skills(profile).map(SkillFile::of).collect()
    }

    /// The active skills a client of `profile` is served.
    fn served_skills<'a>(
        &'a self,
        profile: Option<&'a Profile>,
    ) -> impl Iterator<Item = &'a SkillConfig> + 'a {
        self.config
            .skills
            .iter()
            .filter(move |s| s.active && profile.is_none_or(|p| p.serves_skill(s)))
    }

    /// `describe("skill:<name>")`: the skill's instructions, then the declarations of the tools
    /// it requires (as `describe` gives them, within its budget).
    pub(super) async fn describe_skill(
        &self,
        name: &str,
        profile: Option<&Profile>,
    ) -> Result<String, LookupError> {
        let Some(skill) = self.served_skills(profile).find(|s| s.id == name) else {
            let names: Vec<String> = self
                .served_skills(profile)
                .map(|s| format!("skill:{}", s.id))
                .collect();
            let hint = if names.is_empty() {
                "This hub has no skills.".to_owned()
            } else {
                format!("Skills: {}.", names.join(", "))
            };
            return Err(LookupError::UnknownTarget(format!(
                "unknown target `skill:{name}`: no active skill has that name. {hint}"
            )));
        };
        let mut text = format!("// skill:{}: {}\n", skill.id, skill.description);
        if let Some(document) = &skill.document
            && !document.instructions.is_empty()
        {
            text.push('\n');
            text.push_str(&document.instructions);
            text.push('\n');
        }
        let mut tools = self.skill_tools(&skill.id).unwrap_or_default();
        // Tools the policy denies are not described (describe would refuse them as unknown).
        let catalog = self.catalog();
        let policy = self.policy_in(profile);
        let before = tools.len();
        tools.retain(|address| {
            catalog
                .tools()
                .iter()
                .find(|t| &t.address == address)
                .is_some_and(|t| !policy.hides(t))
        });
        let hidden = before - tools.len();
        if hidden > 0 {
            let _ = writeln!(text, "// {hidden} of its tools are hidden by your policy.");
        }
        if tools.is_empty() {
            return Ok(text);
        }
        // The tools themselves when they fit describe's targets, else their namespaces.
        let mut targets: Vec<String> = tools.iter().map(ToString::to_string).collect();
        if targets.len() > lookup::MAX_TARGETS {
            targets.clear();
            for tool in &tools {
                if !targets.contains(&tool.namespace) {
                    targets.push(tool.namespace.clone());
                }
            }
            if targets.len() > lookup::MAX_TARGETS {
                let _ = writeln!(
                    text,
                    "// It uses {} sources; describe the others by name: {}.",
                    targets.len(),
                    targets[lookup::MAX_TARGETS..].join(", ")
                );
                targets.truncate(lookup::MAX_TARGETS);
            }
        }
        text.push('\n');
        text.push_str(&self.describe_tools(&targets, profile).await?);
        Ok(text)
    }

    /// The lines `search` adds for skills that `query` names: the best few, none when no word
    /// of the query is in a skill's name or description.
    pub(super) fn skills_for_query(
        &self,
        query: &str,
        profile: Option<&Profile>,
    ) -> Option<String> {
        let words: Vec<String> = query
            .split(|c: char| !c.is_alphanumeric())
            .filter(|w| w.chars().count() >= 3)
            .map(str::to_lowercase)
            .collect();
        if words.is_empty() {
            return None;
        }
        let mut scored: Vec<(usize, &SkillConfig)> = self
            .served_skills(profile)
            .filter_map(|skill| {
                let haystack = format!("{} {}", skill.id, skill.description).to_lowercase();
                let hay_words: Vec<&str> = haystack
                    .split(|c: char| !c.is_alphanumeric())
                    .filter(|w| !w.is_empty())
                    .collect();
                let score = words
                    .iter()
                    .filter(|w| hay_words.iter().any(|h| h.starts_with(w.as_str())))
                    .count();
                (score > 0).then_some((score, skill))
            })
            .collect();
        if scored.is_empty() {
            return None;
        }
        scored.sort_by_key(|(score, _)| std::cmp::Reverse(*score));
        let mut text = String::from("skills  (describe(\"skill:<name>\") for steps and tools)\n");
        for (_, skill) in scored.into_iter().take(MAX_SKILLS_IN_SEARCH) {
            let _ = writeln!(text, "  skill:{}\n    {}", skill.id, skill.description);
        }
        Some(text)
    }
}
