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
    load_policy_file, reset_all_policy_rules, reset_policy_rule, set_policy_rule,
};
use capa_core::{HubPaths, confirm_policy_rule, confirm_policy_rule_removed, confirm_policy_rules};
use serde_json::json;

use crate::cli::{DecisionArg, PolicyCommand};
use crate::output;
use crate::running::RunningHub;

pub async fn run(paths: &HubPaths, command: PolicyCommand) -> anyhow::Result<ExitCode> {
    let file = paths.policy_file();
    match command {
        PolicyCommand::List { json } => {
            let rules = load_policy_file(&file).map_err(file_error)?;
            if json {
                output::json(&json!({"file": file, "rules": rules}))?;
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
        }
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
            let previous = set_policy_rule(&file, rule.clone()).map_err(file_error)?;
            let confirmed = crate::terminal::interactive();
            if confirmed {
                confirm_policy_rule(&super::approvals::open_store(paths)?, &rule)?;
            }
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
            let rules = load_policy_file(&file).map_err(file_error)?;
            confirm_policy_rules(&super::approvals::open_store(paths)?, &rules)?;
            println!(
                "Confirmed the {} rule{} of {}: they are in force.",
                rules.len(),
                if rules.len() == 1 { "" } else { "s" },
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
                let count = reset_all_policy_rules(&file).map_err(file_error)?;
                if confirmed {
                    confirm_policy_rules(&super::approvals::open_store(paths)?, &[])?;
                }
                println!(
                    "Removed {count} rule{} from {}.",
                    if count == 1 { "" } else { "s" },
                    file.display()
                );
            } else {
                let pattern = pattern.unwrap_or_default();
                check_arguments(&pattern, connection.as_deref())?;
                let target = format!("`{pattern}`{}", for_connection(connection.as_deref()));
                if reset_policy_rule(&file, &pattern, connection.as_deref()).map_err(file_error)? {
                    if confirmed {
                        confirm_policy_rule_removed(
                            &super::approvals::open_store(paths)?,
                            &pattern,
                            connection.as_deref(),
                        )?;
                    }
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

/// What a change made without a person at the terminal means.
const HELD_NOTE: &str = "note: this was not made at an interactive terminal: if it loosens your policy, it takes effect once you confirm it in the Capabilities app or with `capa policy confirm` in a terminal";

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

/// Tells a running hub to re-read the file; the change is saved either way.
async fn notify_running_hub(paths: &HubPaths, file: &Path) {
    let Some(hub) = RunningHub::find(paths).await else {
        return;
    };
    match hub.post("/api/policy/reload", &json!({})).await {
        Ok(answer) if answer["ok"] == true => {
            if answer["file"].as_str() != Some(&*file.to_string_lossy()) {
                eprintln!(
                    "note: the running hub reads its policy from {}, not {}",
                    answer["file"],
                    file.display()
                );
            }
        }
        Ok(answer) => eprintln!(
            "warning: the running hub kept its previous policy: {}",
            answer["error"]["message"]
                .as_str()
                .unwrap_or("no reason given")
        ),
        Err(e) => eprintln!("warning: the running hub did not reload its policy: {e:#}"),
    }
}
