//! Skills: how they are read, checked against the servers of their file (and of the global
//! file, for a project file) and merged.

use std::path::Path;

use capa_config::{ConfigFiles, SkillRequirement, parse_str};

use crate::load_trusted;

pub(crate) const GITHUB: &str =
    "servers:\n  - id: github\n    type: mcp\n    def: { url: 'https://example.com/mcp' }\n";

pub(crate) fn error_of(text: &str) -> String {
    parse_str(Path::new("/p/capabilities.yaml"), text)
        .expect_err("refused")
        .to_string()
}

#[test]
fn skills_are_read_with_their_requirements_in_order() {
    let text = format!(
        "{GITHUB}skills:\n  - id: triage\n    description: Triage new issues.\n    requires: [github.search_issues, github.update_issue, \"@github\", demo.echo]\n  - id: off\n    description: Not now.\n    disabled: true\n    requires: [\"@demo\"]\n"
    );
    let checked = parse_str(Path::new("/p/capabilities.yaml"), &text).expect("valid");
    let triage = &checked.skills[0];
    assert_eq!(triage.id, "triage");
    assert_eq!(triage.description, "Triage new issues.");
    assert!(triage.active);
    assert_eq!(triage.file, Path::new("/p/capabilities.yaml"));
    let shown: Vec<String> = triage.requires.iter().map(ToString::to_string).collect();
    assert_eq!(
        shown,
        vec![
            "github.search_issues",
            "github.update_issue",
            "@github",
            "demo.echo"
        ]
    );
    assert_eq!(
        triage.requires[0],
        SkillRequirement::Tool {
            server: "github".into(),
            tool: "search_issues".into()
        }
    );
    assert_eq!(
        triage.requires[2],
        SkillRequirement::Server("github".into())
    );
    assert!(
        !checked.skills[1].active,
        "disabled: true keeps the skill inactive"
    );
}

#[test]
fn requirements_keep_dots_of_remote_tool_names() {
    assert_eq!(
        SkillRequirement::parse("fs.read.file"),
        Some(SkillRequirement::Tool {
            server: "fs".into(),
            tool: "read.file".into()
        })
    );
    assert_eq!(SkillRequirement::parse("@"), None);
    assert_eq!(SkillRequirement::parse("github"), None);
    assert_eq!(SkillRequirement::parse("github."), None);
}

#[test]
fn every_skill_mistake_is_named_with_its_line_and_fix() {
    let text = format!(
        "{GITHUB}skills:\n  - id: triage\n    description: Triage.\n    requires: [github.search_issues, \"@slack\", nodot, \"Git Hub.x\", \"github.has space\", github.search_issues]\n  - id: triage\n    description: \"  \"\n    requires: []\n  - id: Bad Id\n    description: x\n    requires: [\"@github\"]\n"
    );
    assert_eq!(
        error_of(&text),
        "/p/capabilities.yaml:8:38: skill `triage` requires `@slack`, but no server `slack` is declared in this file\n  \
         fix: use one of the declared server ids (github), or declare `slack` under `servers:`\n\
         /p/capabilities.yaml:8:48: `nodot` in the `requires` of skill `triage` is neither `@server` nor `server.tool`\n  \
         fix: write `@github` for every tool the server exposes, or `github.create_issue` for one remote tool\n\
         /p/capabilities.yaml:8:55: `Git Hub.x` in the `requires` of skill `triage`: `Git Hub` is not a valid server id\n  \
         fix: write `@github` for every tool the server exposes, or `github.create_issue` for one remote tool\n\
         /p/capabilities.yaml:8:68: `github.has space` in the `requires` of skill `triage`: the tool name has spaces\n  \
         fix: write the remote tool name as the server advertises it, for example `github.create_issue`\n\
         /p/capabilities.yaml:8:88: `github.search_issues` is listed twice in the `requires` of skill `triage`\n  \
         fix: list each requirement once\n\
         /p/capabilities.yaml:9:9: skill id `triage` is already used on line 6\n  \
         fix: give each skill its own id\n\
         /p/capabilities.yaml:10:18: skill `triage` has an empty `description`\n  \
         fix: say in a sentence what the skill is for: models read it to choose skills\n\
         /p/capabilities.yaml:11:15: skill `triage` has an empty `requires` list\n  \
         fix: list the tools it needs: `github.create_issue` for one remote tool, `@github` for every tool the server exposes\n\
         /p/capabilities.yaml:12:9: skill id \"Bad Id\" is not a valid name\n  \
         fix: use lower-case letters, digits, `-` and `_`, starting with a letter (at most 64 characters), for example `triage`"
    );
}

#[test]
fn a_skill_without_description_or_requires_is_a_shape_error() {
    let err = error_of("skills:\n  - id: triage\n    requires: ['@demo']\n");
    assert!(
        err.contains("missing field `description` in `skills[0]`"),
        "{err}"
    );
    assert!(err.contains("fix: add `description: …` to it"), "{err}");
}

pub(crate) fn write(dir: &Path, name: &str, text: &str) -> std::path::PathBuf {
    let path = dir.join(name);
    std::fs::create_dir_all(dir).expect("mkdir");
    std::fs::write(&path, text).expect("write");
    path
}

#[test]
fn a_project_skill_may_name_a_server_of_the_global_file() {
    let dir = tempfile::tempdir().expect("tempdir");
    let global = write(&dir.path().join("config"), "capabilities.yaml", GITHUB);
    let project = write(
        &dir.path().join("project"),
        "capabilities.yaml",
        "skills:\n  - id: triage\n    description: Triage.\n    requires: [github.search_issues]\n",
    );
    let config = load_trusted(&ConfigFiles {
        global: Some(global.clone()),
        project: Some(project.clone()),
        ..Default::default()
    })
    .expect("the global file declares github");
    assert_eq!(config.skills.len(), 1);
    assert_eq!(config.skills[0].file, project);

    // The same project file on its own (`--config FILE`) names an unknown server.
    let err = load_trusted(&ConfigFiles::only(project.clone())).expect_err("github is unknown");
    let issue = &err.issues()[0];
    assert_eq!((issue.position.line, issue.position.column), (4, 16));
    assert!(
        issue
            .message
            .contains("no server `github` is declared in this file"),
        "{err}"
    );

    // A global file cannot lean on the project file.
    let err = load_trusted(&ConfigFiles {
        global: Some(project.clone()),
        project: Some(global),
        ..Default::default()
    })
    .expect_err("a global skill names only global servers");
    assert!(err.to_string().contains("no server `github`"), "{err}");

    // A project file naming a server neither file declares is told both places to look.
    let other = write(
        &dir.path().join("other"),
        "capabilities.yaml",
        "skills:\n  - id: t\n    description: T.\n    requires: ['@slack']\n",
    );
    let err = load_trusted(&ConfigFiles {
        global: Some(dir.path().join("config/capabilities.yaml")),
        project: Some(other),
        ..Default::default()
    })
    .expect_err("slack is unknown");
    let shown = err.to_string();
    assert!(
        shown.contains(&format!(
            "no server `slack` is declared in this file or {}",
            dir.path().join("config/capabilities.yaml").display()
        )),
        "{shown}"
    );
}

#[test]
fn a_project_skill_replaces_a_global_skill_with_the_same_id() {
    let dir = tempfile::tempdir().expect("tempdir");
    let global = write(
        &dir.path().join("config"),
        "capabilities.yaml",
        &format!(
            "{GITHUB}skills:\n  - id: triage\n    description: Global.\n    requires: ['@github']\n  - id: notes\n    description: Notes.\n    requires: [demo.list_notes]\n"
        ),
    );
    let project = write(
        &dir.path().join("project"),
        "capabilities.yaml",
        "skills:\n  - id: triage\n    description: Project.\n    requires: [github.search_issues]\n",
    );
    let config = load_trusted(&ConfigFiles {
        global: Some(global),
        project: Some(project),
        ..Default::default()
    })
    .expect("valid");
    let skills: Vec<(&str, &str)> = config
        .skills
        .iter()
        .map(|s| (s.id.as_str(), s.description.as_str()))
        .collect();
    assert_eq!(skills, vec![("notes", "Notes."), ("triage", "Project.")]);
}

#[test]
fn a_skill_of_the_demo_source_warns_when_demo_is_off() {
    let dir = tempfile::tempdir().expect("tempdir");
    let file = write(
        dir.path(),
        "capabilities.yaml",
        "options: { demo: false }\nskills:\n  - id: maths\n    description: Sums.\n    requires: [demo.add]\n",
    );
    let config = load_trusted(&ConfigFiles::only(file)).expect("valid");
    assert_eq!(config.warnings.len(), 1, "{:?}", config.warnings);
    assert!(
        config.warnings[0]
            .contains("skill `maths` requires `demo.add`, but the demo source is off"),
        "{:?}",
        config.warnings
    );
}
