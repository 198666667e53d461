//! Profiles: how they are read, checked (names, sources, patterns, limits) and merged.
use capa_config::{ConfigFiles, ExposureMode, ProfileMode};

use crate::load_trusted;

// The skills tests' file helpers: a checked file's errors, a file written in a directory.
use crate::skills::{GITHUB, error_of, write};

#[test]
fn a_profile_is_read_with_its_mode_sources_rules_and_limits() {
    let dir = tempfile::tempdir().expect("tempdir");
    let file = write(
        dir.path(),
        "capabilities.yaml",
        &format!(
            "{GITHUB}profiles:\n  review:\n    toolExposure: direct\n    sources: [github, demo]\n    skills: [triage]\n    ask: ['github.create_*']\n    deny: [github.delete_repo]\n    limits: {{ maxCalls: 5, wallMs: 1000 }}\n    description: Reviews\n  plain: {{}}\n"
        ),
    );
    let config = load_trusted(&ConfigFiles {
        global: Some(file.clone()),
        ..Default::default()
    })
    .expect("valid");
    let review = &config.profiles["review"];
    assert_eq!(review.mode, ProfileMode::Direct);
    assert_eq!(review.mode.exposure(), ExposureMode::ExposeAll);
    assert_eq!(
        review
            .sources
            .as_ref()
            .map(|s| s.iter().cloned().collect::<Vec<_>>()),
        Some(vec!["demo".to_owned(), "github".to_owned()])
    );
    assert_eq!(review.ask, ["github.create_*"]);
    assert_eq!(review.deny, ["github.delete_repo"]);
    assert_eq!(review.limits.max_calls, Some(5));
    assert_eq!(review.limits.wall_ms, Some(1000));
    assert_eq!(review.limits.compute_ms, None);
    assert_eq!(review.file, file);
    // Every field may be left out: code mode over every source and skill.
    let plain = &config.profiles["plain"];
    assert_eq!(plain.mode, ProfileMode::Code);
    assert!(plain.sources.is_none() && plain.skills.is_none());
    // A skill no file declares is a warning, not a refusal (it may come from a SKILL.md).
    assert!(
        config
            .warnings
            .iter()
            .any(|w| w.contains("profile `review` names skill `triage`, which no file declares")),
        "{:?}",
        config.warnings
    );
}

#[test]
fn every_profile_mistake_is_named_with_its_line_and_fix() {
    let text = format!(
        "{GITHUB}profiles:\n  default:\n    toolExposure: search\n  Bad Name:\n    sources: [github]\n  review:\n    sources: [github, slack]\n    deny: ['Git.x']\n    limits: {{ maxCalls: 0 }}\n"
    );
    let error = error_of(&text);
    // A profile's own problems point at its first field, the line under its name.
    for expected in [
        "/p/capabilities.yaml:7:5: `default` is the hub's own profile (served at /mcp) and cannot be redefined",
        "/p/capabilities.yaml:9:5: profile name \"Bad Name\" is not a valid name",
        "/p/capabilities.yaml:11:23: profile `review` names source `slack`, which no file declares\n  fix: name declared sources (github) or `demo`",
        "/p/capabilities.yaml:12:12: profile `review`, `deny`: `Git.x` is not a valid policy pattern",
        "/p/capabilities.yaml:13:25: profile `review`: limits.maxCalls is 0",
    ] {
        assert!(
            error.contains(expected),
            "missing {expected:?} in:\n{error}"
        );
    }
}

#[test]
fn an_unknown_mode_or_field_is_refused_by_the_reader() {
    let error = error_of("profiles:\n  a:\n    toolExposure: everything\n");
    assert!(error.contains("everything"), "{error}");
    let error = error_of("profiles:\n  a:\n    sourcse: [demo]\n");
    assert!(error.contains("sourcse"), "{error}");
}

#[test]
fn a_project_profile_names_the_global_files_sources_and_wins_by_name() {
    let dir = tempfile::tempdir().expect("tempdir");
    let global_dir = dir.path().join("global");
    std::fs::create_dir(&global_dir).expect("test setup");
    let global = write(
        &global_dir,
        "capabilities.yaml",
        &format!(
            "{GITHUB}profiles:\n  review:\n    toolExposure: search\n  mine:\n    toolExposure: none\n"
        ),
    );
    let project = write(
        dir.path(),
        "capabilities.yaml",
        "profiles:\n  review:\n    sources: [github]\n",
    );
    let config = load_trusted(&ConfigFiles {
        global: Some(global),
        project: Some(project.clone()),
        ..Default::default()
    })
    .expect("the global file declares github");
    assert_eq!(config.profiles.len(), 2);
    assert_eq!(config.profiles["review"].mode, ProfileMode::Code);
    assert_eq!(config.profiles["review"].file, project);
    assert_eq!(config.profiles["mine"].mode, ProfileMode::None);
    assert!(
        config
            .warnings
            .iter()
            .any(|w| w.contains("profile `review` replaces the one of")),
        "{:?}",
        config.warnings
    );
}

#[test]
fn run_limits_of_a_profile_without_execute_are_a_warning() {
    let dir = tempfile::tempdir().expect("tempdir");
    let file = write(
        dir.path(),
        "capabilities.yaml",
        "profiles:\n  ide:\n    toolExposure: direct\n    limits: { maxCalls: 3, inlineResultBytes: 4096 }\n  runs:\n    limits: { maxCalls: 3 }\n",
    );
    let config = load_trusted(&ConfigFiles {
        global: Some(file),
        ..Default::default()
    })
    .expect("valid");
    let warned: Vec<&String> = config
        .warnings
        .iter()
        .filter(|w| w.contains("which only code mode's runs use"))
        .collect();
    assert_eq!(warned.len(), 1, "{:?}", config.warnings);
    assert!(
        warned[0].contains("profile `ide` (direct) sets maxCalls,"),
        "{}",
        warned[0]
    );
}
