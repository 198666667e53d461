//! `capa clients`: the Clients page at a terminal. Lists each MCP client's user-wide file and
//! whether it is connected to the global hub, and connects or disconnects it (diff shown, asked
//! first). The same `capa-install` code as the page (`capa_install::user_plan`).

use std::io::IsTerminal;
use std::process::ExitCode;

use anyhow::{Context, bail};
use capa_core::HubPaths;
use capa_install::review::{Prompter, TerminalPrompter};
use capa_install::user_plan::{self, ClientStatus};
use capa_install::{CapaEntry, UserClient, UserHome, UserPlan, user_file, user_files};

use crate::cli::{ClientsArgs, ClientsCommand, GlobalArgs};
use crate::output;

pub(super) fn run(
    global: &GlobalArgs,
    paths: &HubPaths,
    command: ClientsCommand,
) -> anyhow::Result<ExitCode> {
    let home = UserHome::from_env()
        .context("no home directory (HOME is not set), so the clients' files cannot be found")?;
    let exe = std::env::current_exe().context("finding the capa program")?;
    let entry = CapaEntry::global(&exe);
    match command {
        ClientsCommand::List { json } => {
            let url = hub_url(paths);
            let statuses: Vec<ClientStatus> = user_files(&home)
                .iter()
                .map(|f| user_plan::status(&home, f, &entry, url.as_deref()))
                .collect();
            if json {
                output::json(&statuses)?;
            } else {
                for s in &statuses {
                    let status = serde_json::to_value(s.status)?;
                    let mode = s
                        .mode
                        .map(|m| format!(" ({m:?})").to_lowercase())
                        .unwrap_or_default();
                    let profile = s
                        .profile
                        .as_deref()
                        .map(|p| format!(" profile {p}"))
                        .unwrap_or_default();
                    println!(
                        "{:<15} {}{mode}{profile}  {}",
                        s.id.as_str(),
                        status.as_str().unwrap_or_default(),
                        s.path
                    );
                }
            }
            Ok(ExitCode::SUCCESS)
        }
        ClientsCommand::Connect(args) => {
            let entry = match &args.profile {
                Some(name) => {
                    check_profile(global, paths, name)?;
                    CapaEntry::global_profile(&exe, Some(name))
                }
                None => entry,
            };
            change(&home, &entry, &args, true)
        }
        ClientsCommand::Pair { name, json } => super::pairing::pair(paths, &name, json),
        ClientsCommand::Paired { json } => super::pairing::list(paths, json),
        ClientsCommand::Forms { id, state } => super::pairing::forms(paths, &id, state),
        ClientsCommand::Unpair { id } => super::pairing::unpair(paths, &id),
        ClientsCommand::Disconnect(args) => {
            if args.profile.is_some() {
                bail!(
                    "--profile goes with `capa clients connect`; disconnecting takes out capa's entry, whatever profile it serves"
                );
            }
            change(&home, &entry, &args, false)
        }
    }
}

fn change(
    home: &UserHome,
    entry: &CapaEntry,
    args: &ClientsArgs,
    connect: bool,
) -> anyhow::Result<ExitCode> {
    let mut clients = Vec::new();
    for id in &args.clients {
        clients.push(UserClient::parse(id).with_context(|| {
            format!(
                "no client `{id}`: use one of claude-code, claude-desktop, cursor, vscode, codex"
            )
        })?);
    }
    let mut failed = false;
    let mut prompter = TerminalPrompter;
    for client in clients {
        let file = user_file(home, client);
        let planned = if connect {
            UserPlan::connect(&file, entry)
        } else {
            UserPlan::disconnect(&file)
        };
        let plan = match planned {
            Ok(plan) => plan,
            Err(e) => {
                eprintln!("{}: {e}", client.display_name());
                failed = true;
                continue;
            }
        };
        let path = file.path.display();
        if !plan.changes() {
            println!("{path} ({}): up to date", client.display_name());
            continue;
        }
        print!("{}", plan.diff());
        if let Some(warning) = &plan.warning {
            eprintln!("note: this {warning}");
        }
        if args.dry_run {
            println!("{path} ({}): would change", client.display_name());
            continue;
        }
        if !args.yes {
            if !std::io::stdin().is_terminal() {
                bail!(
                    "nothing was written to {path}: capa asks before changing a file, but stdin is not a terminal. Pass --yes to apply (or --dry-run)"
                );
            }
            let question = format!(
                "{path} is your {} config, read in every project. Apply? [y/N] ",
                client.display_name()
            );
            if !prompter.confirm(&question).context("reading the answer")? {
                println!(
                    "{path} ({}): left unchanged (declined)",
                    client.display_name()
                );
                continue;
            }
        }
        match plan.apply() {
            Ok(()) => println!(
                "{path} ({}): {}",
                client.display_name(),
                if connect { "connected" } else { "disconnected" }
            ),
            Err(e) => {
                eprintln!("{}: {e}", client.display_name());
                failed = true;
            }
        }
    }
    Ok(if failed {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    })
}

/// Refuses a profile the global hub's capabilities files do not declare: the entry goes into a
/// user-wide file, read in every project, so a profile of the project at hand does not count
/// (unless `--config` or `--project` names the files).
fn check_profile(global: &GlobalArgs, paths: &HubPaths, name: &str) -> anyhow::Result<()> {
    let mut files = crate::setup::config_files(global, paths)?;
    if global.config.is_none() && global.project.is_none() {
        files.project = None;
    }
    crate::setup::check_profile(&files, name)
}

/// The running hub's MCP address, from its discovery file (an HTTP entry with it is connected).
fn hub_url(paths: &HubPaths) -> Option<String> {
    let text = std::fs::read_to_string(paths.discovery()).ok()?;
    let value: serde_json::Value = serde_json::from_str(&text).ok()?;
    let url = value.get("url")?.as_str()?;
    Some(format!("{}/mcp", url.trim_end_matches('/')))
}
