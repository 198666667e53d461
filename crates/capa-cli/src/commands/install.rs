//! `capa install`: lists each server's tools with a hub started here, warns about the project's
//! policies, and writes (in `toolExposure: none`, takes out) the `capa` entry in each MCP client's
//! configuration, showing a diff and asking first. What goes into which file is decided by the
//! `capa-install` crate; this file is the glue: the hub, progress, questions and output.

use std::collections::BTreeSet;
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use capa_config::{ConfigFiles, ExposureMode, HubConfig};
use capa_core::{HubPaths, Redactor, STARTUP_LIMIT, SourceState};
use capa_install::review::{self, Prompter, TerminalPrompter};
use capa_install::warnings::{self, InstallWarning, ServerTools};
use capa_install::{Action, CapaEntry, Client, ClientFile, FilePlan, Intent, Locations, Scope};
use serde::Serialize;

use crate::cli::{ClientArg, GlobalArgs, InstallArgs};
use crate::{output, setup};

/// What one server answered.
#[derive(Debug, Serialize)]
struct ServerReport {
    id: String,
    /// How many tools the server advertises; `None` when it could not be listed.
    tools: Option<usize>,
    /// How many of them the project exposes (after `expose` and `tools:` entries).
    #[serde(skip_serializing_if = "Option::is_none")]
    exposed: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<String>,
    #[serde(skip)]
    advertised: Option<Vec<String>>,
}

/// What happened to one client's file.
#[derive(Debug, Serialize)]
struct FileReport {
    client: Client,
    path: Option<PathBuf>,
    scope: Option<Scope>,
    /// What the file needs; `None` when it could not be read or understood.
    action: Option<Action>,
    status: Status,
    #[serde(skip_serializing_if = "Option::is_none")]
    note: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<String>,
    #[serde(skip)]
    label: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
enum Status {
    /// The change was written.
    Applied,
    /// Nothing to change.
    Unchanged,
    /// `--dry-run`: shown, not written.
    DryRun,
    /// The person answered no.
    Declined,
    /// Not asked: stdin is not a terminal and `--yes` was not given.
    Refused,
    /// The file could not be read, understood or written.
    Failed,
}

#[derive(Debug, Serialize)]
struct Report<'a> {
    mode: &'a str,
    project: &'a Path,
    dry_run: bool,
    servers: &'a [ServerReport],
    warnings: &'a [InstallWarning],
    files: &'a [FileReport],
}

pub(super) async fn run(
    global: &GlobalArgs,
    paths: &HubPaths,
    redactor: Arc<Redactor>,
    args: InstallArgs,
) -> anyhow::Result<ExitCode> {
    let files = setup::config_files(global, paths)?;
    let (project_file, project_dir) = project_of(&files)?;
    // At a terminal the person is asked about the project file first (its sources, skills and
    // options), so that the entries written serve what they trusted.
    if crate::terminal::interactive() {
        crate::trust_prompt::ask_project_trust(&files, paths).await?;
    }
    let config = setup::load_config(&files, paths)?;
    let mode = config.exposure.mode;
    let exe = capa_install::program::this_capa_program().context("finding the capa program")?;
    let entry = if capa_config::find_project_file(&project_dir).as_ref() == Some(&project_file) {
        CapaEntry::for_project(&exe, &project_dir)
    } else {
        CapaEntry::for_config_file(&exe, &project_file)
    };

    let (servers, skill_gaps) = list_servers(&config, paths, redactor).await?;
    let warnings = collect_warnings(&config, &servers, &skill_gaps);
    for warning in &warnings {
        eprintln!("warning: {}", warning.message);
    }

    let locations = Locations {
        project_dir: project_dir.clone(),
        codex_home: codex_home(),
        codex_user_file: args.user_file,
    };
    let clients: Vec<Client> = if args.clients.is_empty() {
        locations.detect()
    } else {
        let named: BTreeSet<Client> = args.clients.iter().map(|c| client(*c)).collect();
        named.into_iter().collect()
    };
    let intent = if mode == ExposureMode::None {
        Intent::Unregister
    } else {
        Intent::Register
    };
    let (mut reports, plans) = plan_files(&locations, clients, intent, &entry, &project_dir);

    if mode == ExposureMode::None && !args.json {
        println!(
            "toolExposure is `none`: capa writes no MCP client config and takes out the entries it \
             wrote before; run tools with `capa sh`."
        );
    }
    let changing = plans.iter().flatten().filter(|p| p.changes()).count();
    let refuse = changing > 0 && !args.yes && !args.dry_run && !std::io::stdin().is_terminal();
    let mut prompter = TerminalPrompter;
    for (plan, report) in plans.iter().zip(reports.iter_mut()) {
        let Some(plan) = plan else { continue };
        if !plan.changes() {
            continue;
        }
        let diff = review::unified_diff(plan, &report.label);
        if args.json {
            eprint!("{diff}");
        } else {
            print!("{diff}");
        }
        report.status = if args.dry_run {
            Status::DryRun
        } else if refuse {
            Status::Refused
        } else if args.yes || ask(&mut prompter, plan, &report.label)? {
            match plan.apply() {
                Ok(()) => Status::Applied,
                Err(e) => {
                    report.error = Some(error_text(&e));
                    Status::Failed
                }
            }
        } else {
            Status::Declined
        };
    }

    if args.json {
        output::json(&Report {
            mode: mode.as_str(),
            project: &project_dir,
            dry_run: args.dry_run,
            servers: &servers,
            warnings: &warnings,
            files: &reports,
        })?;
    } else {
        print_summary(&project_dir, &reports, args.clients.is_empty());
    }
    if refuse {
        bail!(
            "nothing was written: {changing} file{} would change, and capa asks before changing \
             a file, but stdin is not a terminal. Pass --yes to apply (or --dry-run to only see \
             the changes)",
            if changing == 1 { "" } else { "s" }
        );
    }
    Ok(if reports.iter().any(|r| r.status == Status::Failed) {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    })
}

/// Each client's report and, when its config file could be planned, the plan for it (`None`
/// when the report says why not), in the order of `clients`.
fn plan_files(
    locations: &Locations,
    clients: Vec<Client>,
    intent: Intent,
    entry: &CapaEntry,
    project_dir: &Path,
) -> (Vec<FileReport>, Vec<Option<FilePlan>>) {
    let mut reports = Vec::new();
    let mut plans = Vec::new();
    for client in clients {
        let mut report = FileReport {
            client,
            path: None,
            scope: None,
            action: None,
            status: Status::Unchanged,
            note: None,
            error: None,
            label: client.display_name().to_owned(),
        };
        let planned = locations.file(client).and_then(|file| {
            report.label = label(&file, project_dir);
            report.path = Some(file.path.clone());
            report.scope = Some(file.scope);
            FilePlan::new(file, intent, entry)
        });
        match planned {
            Ok(plan) => {
                report.action = Some(plan.action);
                report.note.clone_from(&plan.note);
                plans.push(Some(plan));
            }
            Err(e) => {
                report.status = Status::Failed;
                report.error = Some(error_text(&e));
                plans.push(None);
            }
        }
        reports.push(report);
    }
    (reports, plans)
}

/// The project's capabilities file and its directory.
fn project_of(files: &ConfigFiles) -> anyhow::Result<(PathBuf, PathBuf)> {
    let Some(file) = files.project.clone() else {
        bail!(
            "no capabilities file here: `capa install` configures a project, and found no \
             capabilities.yaml in this directory or its parents. Create one with `capa init`, \
             or pass --project DIR or --config FILE"
        );
    };
    let dir = file
        .parent()
        .map(Path::to_path_buf)
        .context("the capabilities file has no directory")?;
    Ok((file, dir))
}

/// Starts a hub here for the file's servers (without the built-in demo), reports each server
/// on stderr as it connects or fails, and returns what they advertised and the skill
/// requirements they lack. Nothing read here is written anywhere.
async fn list_servers(
    config: &HubConfig,
    paths: &HubPaths,
    redactor: Arc<Redactor>,
) -> anyhow::Result<(Vec<ServerReport>, Vec<(String, String)>)> {
    if config.sources.is_empty() {
        return Ok((Vec::new(), Vec::new()));
    }
    let mut hub_config = config.clone();
    hub_config.demo = false;
    let hub = setup::start_hub(hub_config, paths, redactor).await?;
    let mut reports: Vec<Option<ServerReport>> = config.sources.iter().map(|_| None).collect();
    let deadline = Instant::now() + STARTUP_LIMIT;
    loop {
        let statuses = hub.sources().list();
        for (source, slot) in config.sources.iter().zip(reports.iter_mut()) {
            if slot.is_some() {
                continue;
            }
            let Some(status) = statuses.iter().find(|s| s.id == source.id) else {
                continue;
            };
            let timed_out = Instant::now() >= deadline;
            if status.state == SourceState::Starting && !timed_out {
                continue;
            }
            let advertised = hub
                .sources()
                .advertised_tools(&source.id)
                .map(|tools| tools.iter().map(|t| t.name.to_string()).collect::<Vec<_>>());
            let error = match (&advertised, status.state) {
                (Some(_), _) => None,
                (None, SourceState::Starting) => Some(format!(
                    "did not answer within {}s",
                    STARTUP_LIMIT.as_secs()
                )),
                (None, SourceState::NeedsConnection) => Some(format!(
                    "needs a connection: {}",
                    status
                        .last_error
                        .as_deref()
                        .unwrap_or("no credentials stored")
                )),
                (None, state) => Some(
                    status
                        .last_error
                        .clone()
                        .unwrap_or_else(|| format!("not connected ({state})")),
                ),
            };
            match (&advertised, &error) {
                (Some(tools), _) => eprintln!(
                    "{}: {} tool{}",
                    source.id,
                    tools.len(),
                    if tools.len() == 1 { "" } else { "s" }
                ),
                (None, Some(error)) => eprintln!("{}: error: {error}", source.id),
                (None, None) => {}
            }
            *slot = Some(ServerReport {
                id: source.id.clone(),
                tools: advertised.as_ref().map(Vec::len),
                exposed: None,
                error,
                advertised,
            });
        }
        if reports.iter().all(Option::is_some) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    // Rebuild the catalog from what the servers said, for exposed counts and skill checks.
    hub.settled(Duration::from_millis(1)).await;
    let statuses = hub.sources().list();
    let skill_gaps = hub.missing_skill_tools();
    hub.shutdown().await;
    let reports = reports
        .into_iter()
        .flatten()
        .map(|mut report| {
            if report.advertised.is_some() {
                report.exposed = statuses.iter().find(|s| s.id == report.id).map(|s| s.tools);
            }
            report
        })
        .collect();
    Ok((reports, skill_gaps))
}

/// Warnings about the servers' policies, the skills and the file, in that order.
fn collect_warnings(
    config: &HubConfig,
    servers: &[ServerReport],
    skill_gaps: &[(String, String)],
) -> Vec<InstallWarning> {
    let seen: Vec<ServerTools<'_>> = config
        .sources
        .iter()
        .map(|source| ServerTools {
            id: &source.id,
            selection: &source.selection,
            advertised: servers
                .iter()
                .find(|s| s.id == source.id)
                .and_then(|s| s.advertised.as_deref()),
        })
        .collect();
    let mut all = warnings::server_warnings(&seen);
    all.extend(warnings::skill_warnings(skill_gaps));
    all.extend(
        config
            .warnings
            .iter()
            // Install says this itself, for every server with `tools:` entries.
            .filter(|w| !w.contains("so its `expose` is ignored"))
            .map(|w| warnings::config_warning(w)),
    );
    all
}

/// `CODEX_HOME`, else `~/.codex`.
fn codex_home() -> Option<PathBuf> {
    match std::env::var_os("CODEX_HOME").filter(|v| !v.is_empty()) {
        Some(home) => std::path::absolute(PathBuf::from(home)).ok(),
        None => dirs::home_dir().map(|home| home.join(".codex")),
    }
}

fn client(arg: ClientArg) -> Client {
    match arg {
        ClientArg::Claude => Client::Claude,
        ClientArg::Cursor => Client::Cursor,
        ClientArg::Codex => Client::Codex,
        ClientArg::Vscode => Client::Vscode,
    }
}

/// A project file relative to the project; the user's own file in full.
fn label(file: &ClientFile, project_dir: &Path) -> String {
    match file.path.strip_prefix(project_dir) {
        Ok(relative) if file.scope == Scope::Project => relative.display().to_string(),
        _ => file.path.display().to_string(),
    }
}

fn ask(prompter: &mut dyn Prompter, plan: &FilePlan, label: &str) -> anyhow::Result<bool> {
    prompter
        .confirm(&review::question(plan, label))
        .context("reading the answer from stdin")
}

/// An error with its causes, `{:#}` style.
fn error_text(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        text.push_str(&format!(": {cause}"));
        source = cause.source();
    }
    text
}

fn print_summary(project_dir: &Path, reports: &[FileReport], detected: bool) {
    if reports.is_empty() && detected {
        println!(
            "No MCP client found in {} (.mcp.json, .claude/, .cursor/, .vscode/, .codex/, or \
             Codex's user directory); name one with --client claude|cursor|vscode|codex.",
            project_dir.display()
        );
    }
    for report in reports {
        let what = match (report.status, report.action) {
            (Status::Failed, _) => format!(
                "failed: {}",
                report.error.as_deref().unwrap_or("unknown error")
            ),
            (Status::DryRun, Some(action)) => action.would().to_owned(),
            (Status::Declined, _) => "left unchanged (declined)".to_owned(),
            (Status::Refused, _) => "left unchanged (not asked: pass --yes)".to_owned(),
            (_, Some(action)) => action.done().to_owned(),
            (_, None) => String::new(),
        };
        let note = report
            .note
            .as_deref()
            .map(|n| format!(" ({n})"))
            .unwrap_or_default();
        println!(
            "{} ({}): {what}{note}",
            report.label,
            report.client.display_name()
        );
    }
}
