//! `capa policy list|set|reset|confirm`: reads and edits `<config dir>/policy.yaml`, then tells
//! a running hub to re-read it (as `capa connections set` does for connections).
//!
//! A change that loosens the policy takes effect once a person confirmed it. At an interactive
//! terminal the person running the command is that person: the change is recorded as
//! confirmed (in the hub's database, beside the file). Without one (a script, an agent's shell)
//! the file is written, and a loosening waits for `capa policy confirm` at a terminal or
//! "Confirm" in the app.

use std::path::Path;
use std::process::ExitCode;

use anyhow::anyhow;
use capa_config::{
    ConfigError, PolicyDecision, PolicyRule, check_policy_connection, check_policy_pattern,
};
use capa_core::HubPaths;
use capa_host::policy::{self, PolicyEditError, PolicyReloaded};
use serde::Serialize;

use crate::cli::{DecisionArg, PolicyCommand};
use crate::output;

/// `capa policy list --json`.
#[derive(Serialize)]
struct Listing<'a> {
    file: &'a Path,
    rules: &'a [PolicyRule],
}

pub(super) async fn run(paths: &HubPaths, command: PolicyCommand) -> anyhow::Result<ExitCode> {
    let file = paths.policy_file();
    match command {
        PolicyCommand::List { json } => list(paths, &file, json)?,
        PolicyCommand::Set {
            pattern,
            decision,
            connection,
        } => {
            check_arguments(&pattern, connection.as_deref())?;
            let decision = match decision {
                DecisionArg::Allow => PolicyDecision::Allow,
                DecisionArg::Ask => PolicyDecision::Ask,
                DecisionArg::Deny => PolicyDecision::Deny,
            };
            let rule = PolicyRule {
                pattern: pattern.clone(),
                connection: connection.clone(),
                decision,
            };
            let confirmed = crate::terminal::interactive();
            let previous = policy::set_rule(paths, &rule, confirmed).map_err(edit_error)?;
            let was = match previous {
                Some(p) if p != decision => format!(", was {p}"),
                _ => String::new(),
            };
            println!(
                "{}{} → {decision} (written to {}{was})",
                pattern,
                for_connection(connection.as_deref()),
                file.display()
            );
            if !confirmed && decision != PolicyDecision::Deny {
                eprintln!("{HELD_NOTE}");
            }
            notify_running_hub(paths, &file).await;
        }
        PolicyCommand::Confirm => {
            crate::terminal::require_person("Confirming the policy")?;
            let count = policy::confirm_file(paths).map_err(edit_error)?;
            println!(
                "Confirmed the {count} rule{} of {}: they are in force.",
                if count == 1 { "" } else { "s" },
                file.display()
            );
            notify_running_hub(paths, &file).await;
        }
        PolicyCommand::Reset {
            pattern,
            connection,
            all,
        } => {
            let confirmed = crate::terminal::interactive();
            if all {
                let count = policy::reset_all(paths, confirmed).map_err(edit_error)?;
                println!(
                    "Removed {count} rule{} from {}.",
                    if count == 1 { "" } else { "s" },
                    file.display()
                );
            } else {
                let pattern = pattern.unwrap_or_default();
                check_arguments(&pattern, connection.as_deref())?;
                let target = format!("`{pattern}`{}", for_connection(connection.as_deref()));
                if policy::reset_rule(paths, &pattern, connection.as_deref(), confirmed)
                    .map_err(edit_error)?
                {
                    println!("Removed the rule for {target} from {}.", file.display());
                } else {
                    println!(
                        "No rule for {target} in {}; nothing changed. `capa policy list` shows the rules.",
                        file.display()
                    );
                    return Ok(ExitCode::SUCCESS);
                }
            }
            if !confirmed {
                eprintln!("{HELD_NOTE}");
            }
            notify_running_hub(paths, &file).await;
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// `capa policy list`: the rules of `file`, as a table or JSON.
fn list(paths: &HubPaths, file: &Path, json: bool) -> anyhow::Result<()> {
    let rules = policy::rules(paths).map_err(file_error)?;
    if json {
        output::json(&Listing {
            file,
            rules: &rules,
        })?;
    } else if rules.is_empty() {
        println!("No policy rules ({}).", file.display());
        println!(
            "Tools run freely, except those their server marks destructive, which ask. \
             Add a rule with `capa policy set <pattern> <allow|ask|deny>`."
        );
    } else {
        let rows: Vec<Vec<String>> = rules
            .iter()
            .map(|r| {
                vec![
                    r.pattern.clone(),
                    r.connection.clone().unwrap_or_else(|| "(any)".to_owned()),
                    r.decision.to_string(),
                ]
            })
            .collect();
        output::table(&["MATCH", "CONNECTION", "DECISION"], &rows);
        println!("\nFrom {}.", file.display());
    }
    Ok(())
}

/// What a change made without a person at the terminal means.
pub(super) const HELD_NOTE: &str = "note: this was not made at an interactive terminal: if it loosens your policy, it takes effect once you confirm it in the Capabilities app or with `capa policy confirm` in a terminal";

fn for_connection(connection: Option<&str>) -> String {
    connection
        .map(|c| format!(" (connection `{c}`)"))
        .unwrap_or_default()
}

/// Argument mistakes are reported as such, not as problems of the file.
fn check_arguments(pattern: &str, connection: Option<&str>) -> anyhow::Result<()> {
    let problem = check_policy_pattern(pattern)
        .err()
        .or_else(|| connection.and_then(|c| check_policy_connection(c).err()));
    match problem {
        Some(p) => Err(anyhow!("{}\n  fix: {}", p.message, p.fix)),
        None => Ok(()),
    }
}

fn file_error(error: ConfigError) -> anyhow::Error {
    match error {
        ConfigError::Invalid(_) => anyhow!(
            "the policy file is invalid (nothing was changed):\n{error}\n\
             Fix the file, or start over with `capa policy reset --all`."
        ),
        other => anyhow!(other),
    }
}

pub(super) fn edit_error(error: PolicyEditError) -> anyhow::Error {
    match error {
        PolicyEditError::File(e) => file_error(e),
        PolicyEditError::Record(e) => e,
        other => anyhow!(other),
    }
}

/// Tells a running hub to re-read the file; the change is saved either way.
pub(super) async fn notify_running_hub(paths: &HubPaths, file: &Path) {
    match policy::tell_running_hub(paths).await {
        PolicyReloaded::NoHub => {}
        PolicyReloaded::Reloaded { file: theirs } => {
            if theirs.to_string_lossy() != file.to_string_lossy() {
                eprintln!(
                    "note: the running hub reads its policy from {:?}, not {}",
                    theirs.display().to_string(),
                    file.display()
                );
            }
        }
        PolicyReloaded::Kept { reason } => eprintln!(
            "warning: the running hub kept its previous policy: {}",
            reason.as_deref().unwrap_or("no reason given")
        ),
        PolicyReloaded::Unreachable(e) => {
            let e = anyhow::Error::new(e);
            eprintln!("warning: the running hub did not reload its policy: {e:#}");
        }
    }
}
