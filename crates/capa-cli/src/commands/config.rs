//! `capa config show|check|trust|schema`.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, bail};
use capa_config::ConfigFiles;
use capa_core::HubPaths;
use serde::Serialize;

use crate::cli::{ConfigCommand, GlobalArgs};
use crate::{output, setup};

/// `capa config show --json`.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Summary<'a> {
    global_file: Option<&'a Path>,
    project_file: Option<&'a Path>,
    global_file_expected_at: PathBuf,
    data_dir: &'a Path,
    tool_exposure: &'static str,
    decided_by: &'a str,
    upstream_timeout_ms: u64,
    demo: bool,
    /// `options.search.semantic` as the files set it: `on`, `off`, or absent (on when the model
    /// is installed).
    #[serde(skip_serializing_if = "Option::is_none")]
    semantic_search: Option<&'static str>,
    sources: Vec<SourceFile<'a>>,
    /// What a found project file brings besides sources of its own, and whether it applies.
    #[serde(skip_serializing_if = "Option::is_none")]
    project_settings: Option<ProjectSettingsView>,
    warnings: &'a [String],
}

/// A found project file's settings (`capa config trust`): applied once trusted, else held.
#[derive(Serialize)]
struct ProjectSettingsView {
    trusted: bool,
    items: Vec<String>,
}

/// A source and the file that declares it.
#[derive(Serialize)]
struct SourceFile<'a> {
    id: &'a str,
    file: &'a Path,
}

pub(super) async fn run(
    global: &GlobalArgs,
    paths: &HubPaths,
    command: ConfigCommand,
) -> anyhow::Result<ExitCode> {
    match command {
        ConfigCommand::Show { json } => {
            let files = setup::config_files(global, paths)?;
            let config = setup::load_config(&files, paths)?;
            let summary = Summary {
                global_file: files.global.as_deref(),
                project_file: files.project.as_deref(),
                global_file_expected_at: paths.global_config(),
                data_dir: &paths.data_dir,
                tool_exposure: config.exposure.mode.as_str(),
                decided_by: &config.exposure.decided_by,
                upstream_timeout_ms: u64::try_from(config.upstream_timeout.as_millis())
                    .unwrap_or(u64::MAX),
                demo: config.demo,
                semantic_search: config
                    .semantic_search
                    .map(capa_config::SemanticSearch::as_str),
                sources: config
                    .sources
                    .iter()
                    .map(|s| SourceFile {
                        id: &s.id,
                        file: &s.file,
                    })
                    .collect(),
                project_settings: config.project.as_ref().map(|p| ProjectSettingsView {
                    trusted: p.trusted,
                    items: p.items.iter().map(ToString::to_string).collect(),
                }),
                warnings: &config.warnings,
            };
            if json {
                output::json(&summary)?;
            } else {
                print_summary(&files, paths, &config);
            }
        }
        ConfigCommand::Check { file } => {
            let files = match file {
                Some(file) => ConfigFiles::only(file),
                None => setup::config_files(global, paths)?,
            };
            let config = setup::load_config(&files, paths)?;
            for file in &config.files {
                println!("{}: ok", file.display());
            }
            if config.files.is_empty() {
                println!("No capabilities file found; the defaults apply.");
            }
        }
        ConfigCommand::Trust => return trust(global, paths).await,
        ConfigCommand::Schema { check } => {
            let schema = capa_config::json_schema();
            match check {
                None => print!("{schema}"),
                Some(file) => {
                    let on_disk = std::fs::read_to_string(&file)
                        .with_context(|| format!("reading {}", file.display()))?;
                    if on_disk != schema {
                        bail!(
                            "{} is out of date; regenerate it with `capa config schema > {}`",
                            file.display(),
                            file.display()
                        );
                    }
                    println!("{}: up to date", file.display());
                }
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// `capa config trust`: the person at this terminal is asked, once, about everything of the
/// project file that waits for their trust.
async fn trust(global: &GlobalArgs, paths: &HubPaths) -> anyhow::Result<ExitCode> {
    crate::terminal::require_person("Trusting a project file")?;
    let files = setup::config_files(global, paths)?;
    let Some(file) = files.project.as_deref() else {
        bail!(
            "no project file (capabilities.yaml) in this directory or above; run it in the project, or name it with --project DIR"
        );
    };
    if files.project_origin == capa_config::ProjectOrigin::Named {
        println!(
            "{} is named with --config: it is your own file and needs no trust.",
            file.display()
        );
        return Ok(ExitCode::SUCCESS);
    }
    if !crate::trust_prompt::ask_project_trust(&files, paths).await? {
        println!(
            "Nothing in {} waits for your trust: you trusted it as it is.",
            file.display()
        );
    }
    Ok(ExitCode::SUCCESS)
}

/// `capa config show` for a person.
fn print_summary(files: &ConfigFiles, paths: &HubPaths, config: &capa_config::HubConfig) {
    let show = |p: &Option<std::path::PathBuf>| {
        p.as_ref()
            .map_or("(none)".to_owned(), |p| p.display().to_string())
    };
    println!(
        "Global file:   {} (looked for {})",
        show(&files.global),
        paths.global_config().display()
    );
    println!("Project file:  {}", show(&files.project));
    println!("Data dir:      {}", paths.data_dir.display());
    println!(
        "Tool exposure: {} — {}",
        config.exposure.mode, config.exposure.decided_by
    );
    println!("Demo source:   {}", if config.demo { "on" } else { "off" });
    println!(
        "Semantic:      {}",
        config.semantic_search.map_or(
            "on when the search model is installed (options.search.semantic unset)",
            |s| s.as_str()
        )
    );
    println!(
        "Sources:       {}",
        if config.sources.is_empty() {
            "(none besides demo)".to_owned()
        } else {
            config
                .sources
                .iter()
                .map(|s| s.id.clone())
                .collect::<Vec<_>>()
                .join(", ")
        }
    );
    if let Some(project) = &config.project {
        let items: Vec<String> = project
            .items
            .iter()
            .map(|i| crate::terminal::printable(&i.to_string()))
            .collect();
        if project.trusted {
            println!("Project:       trusted as it is: {}", items.join("; "));
        } else {
            println!(
                "Project:       held until you trust it (`capa config trust`): {}",
                items.join("; ")
            );
        }
    }
    for warning in &config.warnings {
        println!("warning: {warning}");
    }
}
