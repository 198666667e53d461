//! Skills written as files: `skills/<name>/SKILL.md` beside a capabilities file, in the format
//! people already use for agent skills (agentskills.io): YAML front matter with `name` and
//! `description`, then the instructions in Markdown. The tools a skill needs go in
//! `metadata.requires` (space-separated `@server` or `server.tool`, as a file skill's
//! `requires:`), since `metadata` is the format's place for a host's own keys.
//!
//! Each problem is reported with the SKILL.md's path and line, like a capabilities file's.

use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use crate::error::ConfigIssue;
use crate::located::Position;
use crate::resolved::{SkillConfig, SkillDocument, SkillRequirement};
use crate::validate::{CheckedFile, Inherited, SkillServers, check_requirement, is_source_id};

/// Where the format is explained; fixes that need it point there.
const SKILLS_DOCS: &str = "docs/skills.md";
/// The skills folder beside a capabilities file.
pub const SKILLS_DIR: &str = "skills";
/// The file that makes a folder of [`SKILLS_DIR`] a skill.
pub const SKILL_FILE: &str = "SKILL.md";
/// A SKILL.md is instructions for a model, read whole into its context: far below this.
pub const MAX_SKILL_BYTES: usize = 256 * 1024;
/// Skill folders read beside one file; more is a mistake (a wrong folder), not a library.
const MAX_SKILLS: usize = 256;
/// The format's limits on the front matter.
const MAX_NAME_CHARS: usize = 64;
const MAX_DESCRIPTION_CHARS: usize = 1024;

/// Adds the skills of the `skills/` folder beside `checked.file` to it. A name a file skill
/// already uses is a problem, as is anything the format or the file's servers do not allow.
pub(crate) fn add_skill_files(
    checked: &mut CheckedFile,
    inherited: Option<Inherited<'_>>,
) -> Result<(), Vec<ConfigIssue>> {
    let Some(dir) = checked.file.parent().map(|d| d.join(SKILLS_DIR)) else {
        return Ok(());
    };
    let Ok(entries) = std::fs::read_dir(&dir) else {
        // No skills folder: nothing to add.
        return Ok(());
    };
    // Real folders and files only: a link could serve a file from outside the project.
    let is_real = |path: &Path, dir: bool| {
        std::fs::symlink_metadata(path).is_ok_and(|m| if dir { m.is_dir() } else { m.is_file() })
    };
    let mut folders: Vec<PathBuf> = entries
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| is_real(p, true) && is_real(&p.join(SKILL_FILE), false))
        .collect();
    folders.sort();
    let mut issues = Vec::new();
    if folders.len() > MAX_SKILLS {
        issues.push(issue(
            &dir,
            0,
            format!(
                "{} holds {} skills; at most {MAX_SKILLS} are read",
                dir.display(),
                folders.len()
            ),
            "keep only the skills this hub serves in that folder",
        ));
        return Err(issues);
    }
    let servers = SkillServers {
        own: checked.declared.iter().map(String::as_str).collect(),
        inherited,
    };
    let mut added = Vec::new();
    for folder in folders {
        let file = folder.join(SKILL_FILE);
        match read_skill(&folder, &file, &servers) {
            Ok(skill) => {
                if checked.skills.iter().any(|s| s.id == skill.id) {
                    issues.push(issue(
                        &file,
                        2,
                        format!(
                            "skill `{}` is also declared under `skills:` in {}",
                            skill.id,
                            checked.file.display()
                        ),
                        "keep one: remove the entry from the capabilities file (put its `requires` in the SKILL.md's `metadata.requires`), or rename the folder and its `name`",
                    ));
                } else {
                    added.push(skill);
                }
            }
            Err(mut found) => issues.append(&mut found),
        }
    }
    if !issues.is_empty() {
        return Err(issues);
    }
    checked.skills.extend(added);
    Ok(())
}

fn issue(file: &Path, line: u64, message: String, fix: &str) -> ConfigIssue {
    ConfigIssue {
        file: file.to_path_buf(),
        position: Position {
            line,
            column: u64::from(line > 0),
        },
        message,
        fix: Some(fix.to_owned()),
    }
}

/// One skill folder's SKILL.md.
fn read_skill(
    folder: &Path,
    file: &Path,
    servers: &SkillServers<'_>,
) -> Result<SkillConfig, Vec<ConfigIssue>> {
    let text = read_bounded(file).map_err(|message| {
        vec![issue(
            file,
            0,
            message,
            "make it a UTF-8 text file of at most 256 KiB",
        )]
    })?;
    let (front, body) = split_front_matter(&text).ok_or_else(|| {
        vec![issue(
            file,
            1,
            "a SKILL.md starts with YAML front matter between `---` lines".to_owned(),
            "begin the file with `---`, then `name:` and `description:`, then `---`",
        )]
    })?;
    // Through the crate's own reader: its limits (depth, size, alias copies counted as they
    // expand) hold for a hostile SKILL.md as for a capabilities file, and its problems carry
    // their lines (the blank first line stands for the opening `---`).
    let read = crate::yaml::read::<Value>(file, &format!("\n{front}"), SKILLS_DOCS);
    if !read.issues.is_empty() {
        return Err(read.issues);
    }
    let front_matter = match read.value {
        Some(Value::Object(map)) => map,
        _ => Map::new(),
    };
    let mut issues = Vec::new();
    let folder_name = folder
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or_default();
    let name = text_field(&front_matter, "name");
    match name {
        None => issues.push(issue(
            file,
            2,
            "the front matter has no `name`".to_owned(),
            "add `name: <the folder's name>`",
        )),
        Some(name) if !is_skill_name(name) => issues.push(issue(
            file,
            2,
            format!("`name: {name}` is not a valid skill name"),
            "use lower-case letters, digits and single `-`, starting with a letter, at most 64 characters",
        )),
        Some(name) if name != folder_name => issues.push(issue(
            file,
            2,
            format!("`name: {name}` differs from its folder `{folder_name}`"),
            "name the folder as the skill, or the skill as its folder",
        )),
        Some(_) => {}
    }
    let description = text_field(&front_matter, "description").unwrap_or_default();
    if description.trim().is_empty() || description.chars().count() > MAX_DESCRIPTION_CHARS {
        issues.push(issue(
            file,
            2,
            "the front matter needs a `description` of 1 to 1024 characters".to_owned(),
            "say in a sentence what the skill does and when to use it: models read it to choose skills",
        ));
    }
    let requires = requirements(&front_matter, folder_name, file, servers, &mut issues);
    if !issues.is_empty() {
        return Err(issues);
    }
    Ok(SkillConfig {
        id: folder_name.to_owned(),
        description: description.trim().to_owned(),
        requires,
        active: true,
        file: file.to_path_buf(),
        document: Some(SkillDocument {
            instructions: body.trim().to_owned(),
            front_matter,
            text,
        }),
    })
}

/// `metadata.requires`: `@server` or `server.tool`, separated by spaces, each checked as a
/// capabilities file's `requires` entry is.
fn requirements(
    front_matter: &Map<String, Value>,
    skill: &str,
    file: &Path,
    servers: &SkillServers<'_>,
    issues: &mut Vec<ConfigIssue>,
) -> Vec<SkillRequirement> {
    let Some(listed) = front_matter.get("metadata").and_then(|m| m.get("requires")) else {
        return Vec::new();
    };
    let Some(listed) = listed.as_str() else {
        issues.push(issue(
            file,
            2,
            "`metadata.requires` is not a string".to_owned(),
            "list the tools separated by spaces, for example `requires: \"@github demo.add_note\"`",
        ));
        return Vec::new();
    };
    let mut requires: Vec<SkillRequirement> = Vec::new();
    for word in listed.split_whitespace() {
        match check_requirement(word, skill, servers) {
            Ok(requirement) => {
                if !requires.contains(&requirement) {
                    requires.push(requirement);
                }
            }
            Err((message, fix)) => issues.push(issue(file, 2, message, &fix)),
        }
    }
    requires
}

fn text_field<'a>(front_matter: &'a Map<String, Value>, key: &str) -> Option<&'a str> {
    front_matter.get(key).and_then(Value::as_str)
}

/// The format's names (lower-case letters, digits and `-`; no `-` at either end nor twice in a
/// row) that are also hub ids (starting with a letter), so `setup_tools(['name'])` takes them.
pub fn is_skill_name(name: &str) -> bool {
    name.chars().count() <= MAX_NAME_CHARS
        && is_source_id(name)
        && !name.contains('_')
        && !name.ends_with('-')
        && !name.contains("--")
}

/// The front matter and the body after it; `None` when the text does not open with `---`.
fn split_front_matter(text: &str) -> Option<(&str, &str)> {
    // A byte-order mark some editors write is not part of the text.
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let rest = text
        .strip_prefix("---\r\n")
        .or_else(|| text.strip_prefix("---\n"))?;
    let mut offset = 0;
    for line in rest.split_inclusive('\n') {
        if line.trim_end() == "---" {
            return Some((&rest[..offset], &rest[offset + line.len()..]));
        }
        offset += line.len();
    }
    None
}

/// The file's text, refused past [`MAX_SKILL_BYTES`] or when it is not UTF-8.
fn read_bounded(file: &Path) -> Result<String, String> {
    let bytes = crate::yaml::read_capped(file, MAX_SKILL_BYTES)
        .map_err(|e| format!("cannot read it: {e}"))?;
    if bytes.len() > MAX_SKILL_BYTES {
        return Err(format!("it is larger than {MAX_SKILL_BYTES} bytes"));
    }
    String::from_utf8(bytes).map_err(|_| "it is not UTF-8 text".to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn front_matter_is_split_from_the_body() {
        let (front, body) =
            split_front_matter("---\nname: a\n---\n# Steps\n").expect("front matter");
        assert_eq!(front, "name: a\n");
        assert_eq!(body, "# Steps\n");
        assert!(split_front_matter("name: a\n").is_none());
        assert!(
            split_front_matter("---\nname: a\n").is_none(),
            "never closed"
        );
    }

    /// Only the demo source, which a skill may always name.
    fn no_servers() -> SkillServers<'static> {
        SkillServers {
            own: Vec::new(),
            inherited: None,
        }
    }

    fn skill_dir(text: &str) -> (tempfile::TempDir, PathBuf) {
        let root = tempfile::tempdir().expect("temp dir");
        let folder = root.path().join("skills").join("a");
        std::fs::create_dir_all(&folder).expect("folder");
        std::fs::write(folder.join(SKILL_FILE), text).expect("write");
        (root, folder)
    }

    #[test]
    fn an_alias_bomb_in_the_front_matter_is_refused_not_expanded() {
        let mut text = String::from("---\nname: a\ndescription: d\nx0: &x0 \"");
        text.push_str(&"y".repeat(1000));
        text.push_str("\"\n");
        for level in 1..12 {
            let prev = level - 1;
            text.push_str(&format!(
                "x{level}: &x{level} [{}]\n",
                vec![format!("*x{prev}"); 10].join(", ")
            ));
        }
        text.push_str("---\nbody\n");
        let (_root, folder) = skill_dir(&text);
        let issues =
            read_skill(&folder, &folder.join(SKILL_FILE), &no_servers()).expect_err("refused");
        assert!(issues.iter().all(|i| i.position.line >= 2), "{issues:?}");
    }

    #[test]
    fn a_skill_reads_its_front_matter_and_instructions() {
        let (_root, folder) = skill_dir(
            "---\nname: a\ndescription: \"Say \\\"hi\\\" to C:\\\\x\"\nmetadata:\n  requires: \"@demo\"\n---\n\nSteps.\n",
        );
        let skill = read_skill(&folder, &folder.join(SKILL_FILE), &no_servers()).expect("read");
        assert_eq!(skill.description, "Say \"hi\" to C:\\x");
        assert_eq!(
            skill.requires,
            vec![SkillRequirement::Server("demo".into())]
        );
        assert_eq!(skill.document.expect("document").instructions, "Steps.");
    }

    #[test]
    fn names_follow_the_format_and_the_hub() {
        for good in ["triage", "pdf-processing", "a1"] {
            assert!(is_skill_name(good), "{good}");
        }
        for bad in [
            "",
            "Triage",
            "-a",
            "a-",
            "a--b",
            "1a",
            "a_b",
            &"a".repeat(65),
        ] {
            assert!(!is_skill_name(bad), "{bad}");
        }
    }
}
