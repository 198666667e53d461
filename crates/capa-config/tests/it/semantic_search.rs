//! `options.search.semantic`: `on`/`off` (or the booleans), a wrong value named with its line
//! and fix, unknown keys under `search` refused, and a project's choice over the global one.

use std::path::{Path, PathBuf};

use capa_config::{ConfigFiles, SemanticSearch, parse_str};

use crate::load_trusted;

fn semantic(value: &str) -> Option<SemanticSearch> {
    let text = format!("options:\n  search:\n    semantic: {value}\n");
    parse_str(Path::new("c.yaml"), &text)
        .unwrap_or_else(|e| panic!("`{value}` should parse: {e}"))
        .semantic_search
}

fn write(dir: &Path, text: &str) -> PathBuf {
    std::fs::create_dir_all(dir).expect("dir");
    let file = dir.join("capabilities.yaml");
    std::fs::write(&file, text).expect("write");
    file
}

#[test]
fn on_off_and_the_booleans_parse() {
    for (value, choice) in [
        ("on", SemanticSearch::On),
        ("off", SemanticSearch::Off),
        ("true", SemanticSearch::On),
        ("false", SemanticSearch::Off),
        ("\"on\"", SemanticSearch::On),
        ("'off'", SemanticSearch::Off),
        ("On", SemanticSearch::On),
        ("OFF", SemanticSearch::Off),
        ("!!bool true", SemanticSearch::On),
    ] {
        assert_eq!(semantic(value), Some(choice), "{value}");
    }
    let flow = parse_str(
        Path::new("c.yaml"),
        "options: { search: { semantic: off } }\n",
    )
    .expect("valid");
    assert_eq!(flow.semantic_search, Some(SemanticSearch::Off));
}

#[test]
fn without_the_option_the_hub_decides() {
    for text in [
        "",
        "options: {}\n",
        "options:\n  search: {}\n",
        "options:\n  search:\n    semantic:\n",
    ] {
        let checked = parse_str(Path::new("c.yaml"), text).expect("valid");
        assert_eq!(checked.semantic_search, None, "{text:?}");
    }
    assert_eq!(capa_config::HubConfig::default().semantic_search, None);
}

#[test]
fn a_wrong_value_names_the_file_the_line_and_the_fix() {
    let text = "servers: []\noptions:\n  search:\n    semantic: maybe\n";
    let error = parse_str(Path::new("/p/capabilities.yaml"), text).expect_err("refused");
    let issues = error.issues();
    assert_eq!(issues.len(), 1, "{error}");
    assert_eq!(
        (issues[0].position.line, issues[0].position.column),
        (4, 15)
    );
    let shown = error.to_string();
    assert!(
        shown.starts_with(
            "/p/capabilities.yaml:4:15: options.search.semantic must be on or off, not `maybe`"
        ),
        "{shown}"
    );
    assert!(shown.contains("fix: write `semantic: on`"), "{shown}");
    for value in ["yes", "1", "\"\""] {
        let text = format!("options:\n  search:\n    semantic: {value}\n");
        let error = parse_str(Path::new("c.yaml"), &text).expect_err(value);
        assert!(
            error
                .to_string()
                .contains("options.search.semantic must be on or off"),
            "{value}: {error}"
        );
    }
}

#[test]
fn a_list_or_a_map_is_one_problem_of_shape() {
    let error = parse_str(
        Path::new("c.yaml"),
        "options:\n  search:\n    semantic: [on]\n",
    )
    .expect_err("refused");
    assert_eq!(error.issues().len(), 1, "{error}");
    assert!(
        error
            .to_string()
            .contains("`options.search.semantic`: expected text, found a list"),
        "{error}"
    );
}

#[test]
fn an_unknown_key_under_search_is_refused_with_the_one_meant() {
    let error = parse_str(
        Path::new("c.yaml"),
        "options:\n  search:\n    semantc: on\n",
    )
    .expect_err("refused");
    let shown = error.to_string();
    assert!(
        shown.contains("c.yaml:3:5: unknown field `semantc` in `options.search`"),
        "{shown}"
    );
    assert!(shown.contains("did you mean `semantic`?"), "{shown}");
    let error = parse_str(Path::new("c.yaml"), "options:\n  search: off\n").expect_err("refused");
    assert!(
        error
            .to_string()
            .contains("`options.search`: expected a map"),
        "{error}"
    );
}

#[test]
fn the_project_choice_wins_over_the_global_one() {
    let dir = tempfile::tempdir().expect("tempdir");
    let global = write(
        &dir.path().join("config"),
        "options:\n  search:\n    semantic: off\n",
    );
    let project = write(
        &dir.path().join("project"),
        "options:\n  search:\n    semantic: on\n",
    );
    let silent = write(&dir.path().join("silent"), "options:\n  demo: true\n");
    let both = |project: &Path| {
        load_trusted(&ConfigFiles {
            global: Some(global.clone()),
            project: Some(project.to_path_buf()),
            ..Default::default()
        })
        .expect("valid")
        .semantic_search
    };
    assert_eq!(both(&project), Some(SemanticSearch::On));
    assert_eq!(
        both(&silent),
        Some(SemanticSearch::Off),
        "a project file without the option keeps the global choice"
    );
    let alone = load_trusted(&ConfigFiles::only(silent)).expect("valid");
    assert_eq!(alone.semantic_search, None);
}
