//! `capa clients`: the Clients page at a terminal. Lists each MCP client's user-wide file and
//! whether it is connected to the global hub, and connects or disconnects it (diff shown, asked
//! first). The same `capa-install` code as the page (`capa_install::user_plan`).

use std::io::IsTerminal;
use std::process::ExitCode;

use anyhow::{Context, bail};
use capa_core::{HubPaths, NewPairing, Pairings};
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
    let exe = capa_install::program::this_capa_program().context("finding the capa program")?;
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
            change(&home, &entry, &args, paths, true)
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
            change(&home, &entry, &args, paths, false)
        }
    }
}

/// Connects or disconnects each client of `args`. At an interactive terminal a connected
/// client is paired: its entry carries its own key (`env.CAPA_CLIENT_KEY`), so its approval
/// forms count as the person's answer; without a terminal the entry is written unpaired. A
/// disconnect ends the pairing whose key it takes out of the file.
fn change(
    home: &UserHome,
    entry: &CapaEntry,
    args: &ClientsArgs,
    paths: &HubPaths,
    connect: bool,
) -> anyhow::Result<ExitCode> {
    // Pairing needs the store, and a person; a disconnect opens it only to end a pairing.
    let pairing_store = if connect && !args.dry_run && crate::terminal::interactive() {
        Some(capa_host::open_store(paths)?)
    } else {
        None
    };
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
        let keyed = !connect && !args.dry_run && user_plan::client_key(&file).is_some();
        let unpair_store = match &pairing_store {
            None if keyed => Some(capa_host::open_store(paths)?),
            _ => None,
        };
        let store = pairing_store.as_ref().or(unpair_store.as_ref());
        let change = key_change(store, &file, client, connect)?;
        let entry = match &change.key {
            Some(key) => entry.clone().with_client_key(key.clone()),
            None => entry.clone(),
        };
        let planned = if connect {
            UserPlan::connect(&file, &entry)
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
        print!(
            "{}",
            capa_core::mask_client_key(&plan.diff(), change.key.as_deref())
        );
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
        failed |= !apply_change(&plan, store, &change, connect, client)?;
    }
    Ok(if failed {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    })
}

/// The key a change of a client's file concerns, the pairing a connect makes (stored when the
/// change is applied) and the one a disconnect ends.
struct KeyChange {
    key: Option<String>,
    pairing: Option<NewPairing>,
    unpairs: Option<String>,
}

/// What `store` (none: no pairing here) makes of the key in `client`'s `file`: a connect
/// writes the key of its pairing (kept, or new); a disconnect takes it out, and its pairing
/// ends with it.
fn key_change(
    store: Option<&capa_core::Store>,
    file: &capa_install::UserFile,
    client: UserClient,
    connect: bool,
) -> anyhow::Result<KeyChange> {
    let change = match (store, connect) {
        (Some(store), true) => {
            let (key, pairing) = key_for(store, file, client)?;
            KeyChange {
                key,
                pairing,
                unpairs: None,
            }
        }
        (Some(store), false) => {
            let found = paired_in_file(store, file);
            KeyChange {
                key: found.as_ref().map(|(key, _)| key.clone()),
                pairing: None,
                unpairs: found.map(|(_, owner)| owner.id),
            }
        }
        (None, _) => KeyChange {
            key: None,
            pairing: None,
            unpairs: None,
        },
    };
    Ok(change)
}

/// Writes `plan`, storing the pairing it makes first (taken back when the write fails) and
/// ending the one it takes out, and says what happened. False when the write failed.
fn apply_change(
    plan: &UserPlan,
    store: Option<&capa_core::Store>,
    change: &KeyChange,
    connect: bool,
    client: UserClient,
) -> anyhow::Result<bool> {
    let path = plan.file.path.display();
    if let (Some(store), Some(new)) = (store, &change.pairing) {
        Pairings::new(store).record(new)?;
    }
    if let Err(e) = plan.apply() {
        if let (Some(store), Some(new)) = (store, &change.pairing) {
            let _ = Pairings::new(store).remove(&new.client.id);
        }
        eprintln!("{}: {e}", client.display_name());
        return Ok(false);
    }
    if let (Some(store), Some(id)) = (store, &change.unpairs) {
        Pairings::new(store).remove(id)?;
    }
    let what = match (connect, &change.key, &change.unpairs) {
        (false, _, Some(_)) => "disconnected and unpaired",
        (false, _, None) => "disconnected",
        (true, Some(_), _) => "connected and paired (its own approval forms count as your answer)",
        (true, None, _) => {
            "connected, not paired (its approvals wait for you in the app; `capa clients pair` at a terminal pairs a client)"
        }
    };
    println!("{path} ({}): {what}", client.display_name());
    Ok(true)
}

/// The paired client whose key `file`'s `capa` entry holds, with the key.
fn paired_in_file(
    store: &capa_core::Store,
    file: &capa_install::UserFile,
) -> Option<(String, capa_core::PairedClient)> {
    let key = user_plan::client_key(file)?;
    let owner = Pairings::new(store).owner_of(&key)?;
    Some((key, owner))
}

/// The key to write into `client`'s entry: the one its file holds when it belongs to a paired
/// client (reconnecting keeps the pairing), else a new pairing's (stored once applied).
fn key_for(
    store: &capa_core::Store,
    file: &capa_install::UserFile,
    client: UserClient,
) -> anyhow::Result<(Option<String>, Option<NewPairing>)> {
    if let Some((key, _)) = paired_in_file(store, file) {
        return Ok((Some(key), None));
    }
    let new = NewPairing::prepare(client.display_name())?;
    Ok((Some(new.key.clone()), Some(new)))
}

/// Refuses a profile the global hub's capabilities files do not declare: the entry goes into a
/// user-wide file, read in every project, so a profile of the project at hand does not count
/// (unless `--config` or `--project` names the files).
fn check_profile(global: &GlobalArgs, paths: &HubPaths, name: &str) -> anyhow::Result<()> {
    let mut files = crate::setup::config_files(global, paths)?;
    if global.config.is_none() && global.project.is_none() {
        files.project = None;
    }
    crate::setup::check_profile(&files, paths, name)
}

/// The running hub's MCP address, from its discovery file (an HTTP entry with it is connected).
fn hub_url(paths: &HubPaths) -> Option<String> {
    let text = std::fs::read_to_string(paths.discovery()).ok()?;
    let value: serde_json::Value = serde_json::from_str(&text).ok()?;
    let url = value.get("url")?.as_str()?;
    Some(format!("{}/mcp", url.trim_end_matches('/')))
}
