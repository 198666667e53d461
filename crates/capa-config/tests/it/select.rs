//! `ConfigFiles::select`: the files `--config`, `--project` and the working directory pick, and
//! the errors that name the flag to fix; whose sources each file gives (a found project file's
//! need the person's trust, a file named with `--config` is the person's own).

use capa_config::{ConfigFiles, SelectError, SourceScope};

use crate::load_trusted;

#[test]
fn config_alone_skips_the_global_file_and_the_project_lookup() {
    let dir = tempfile::tempdir().expect("tempdir");
    let config_dir = dir.path().join("config");
    std::fs::create_dir_all(&config_dir).expect("test setup");
    std::fs::write(config_dir.join("capabilities.yaml"), "servers: []\n").expect("test setup");
    let file = dir.path().join("only.yaml");
    std::fs::write(&file, "servers: []\n").expect("test setup");

    let files = ConfigFiles::select(Some(&file), None, &config_dir).expect("selected");
    assert_eq!(files, ConfigFiles::only(file));
}

#[test]
fn project_dir_finds_the_nearest_project_file_beside_the_global_one() {
    let dir = tempfile::tempdir().expect("tempdir");
    let config_dir = dir.path().join("config");
    std::fs::create_dir_all(&config_dir).expect("test setup");
    let global = config_dir.join("capabilities.yaml");
    std::fs::write(&global, "servers: []\n").expect("test setup");
    let project = dir.path().join("project");
    let nested = project.join("src/deep");
    std::fs::create_dir_all(&nested).expect("test setup");
    std::fs::write(project.join("capabilities.yml"), "servers: []\n").expect("test setup");

    let files = ConfigFiles::select(None, Some(&nested), &config_dir).expect("selected");
    assert_eq!(files.global, Some(global));
    assert_eq!(files.project, Some(project.join("capabilities.yml")));
}

#[test]
fn a_missing_config_file_or_project_dir_names_the_flag_to_fix() {
    let dir = tempfile::tempdir().expect("tempdir");
    let missing = dir.path().join("nope.yaml");
    let error = ConfigFiles::select(Some(&missing), None, dir.path()).expect_err("refused");
    assert!(matches!(error, SelectError::NoFile(ref f) if f == &missing));
    assert_eq!(
        error.to_string(),
        format!(
            "{} does not exist; pass an existing capabilities file to --config",
            missing.display()
        )
    );

    let file = dir.path().join("file.txt");
    std::fs::write(&file, "").expect("test setup");
    let error = ConfigFiles::select(None, Some(&file), dir.path()).expect_err("refused");
    assert_eq!(
        error.to_string(),
        format!(
            "{} is not a directory; pass the project's directory to --project",
            file.display()
        )
    );
}

const SERVERS: &str = "servers:\n  - id: gh\n    type: mcp\n    def: { command: gh-mcp }\n  - id: files\n    type: mcp\n    def: { command: fs-mcp }\n";

#[test]
fn sources_of_a_found_project_file_are_the_projects_and_say_which_global_ones_they_replace() {
    let dir = tempfile::tempdir().expect("tempdir");
    let config_dir = dir.path().join("config");
    std::fs::create_dir_all(&config_dir).expect("test setup");
    std::fs::write(
        config_dir.join("capabilities.yaml"),
        "servers:\n  - id: gh\n    type: mcp\n    def: { command: mine }\n  - id: notes\n    type: mcp\n    def: { command: notes }\n",
    )
    .expect("test setup");
    let project = dir.path().join("clone");
    std::fs::create_dir_all(&project).expect("test setup");
    std::fs::write(project.join("capabilities.yaml"), SERVERS).expect("test setup");

    let files = ConfigFiles::select(None, Some(&project), &config_dir).expect("selected");
    let config = load_trusted(&files).expect("valid");
    let scope = |id: &str| {
        config
            .sources
            .iter()
            .find(|s| s.id == id)
            .map(|s| s.scope)
            .expect("source")
    };
    assert_eq!(
        scope("gh"),
        SourceScope::Project {
            replaces_global: true
        }
    );
    assert_eq!(
        scope("files"),
        SourceScope::Project {
            replaces_global: false
        }
    );
    assert_eq!(scope("notes"), SourceScope::User);
}

#[test]
fn sources_of_a_file_named_with_config_are_the_persons_own() {
    let dir = tempfile::tempdir().expect("tempdir");
    let file = dir.path().join("capabilities.yaml");
    std::fs::write(&file, SERVERS).expect("test setup");
    let files = ConfigFiles::select(Some(&file), None, dir.path()).expect("selected");
    let config = load_trusted(&files).expect("valid");
    assert_eq!(config.sources.len(), 2);
    assert!(config.sources.iter().all(|s| s.scope == SourceScope::User));
}
