//! `capa sources disable|enable <id>` and `capa tools disable|enable <address>`: the app's on/off
//! switches from a terminal (docs/policies.md, "Switches").
//!
//! A source's switch is `disabled: true` in its capabilities file; a tool's is a `deny` rule for
//! its address in `policy.yaml`. Turning something on is a loosening: at an interactive terminal
//! the person running the command confirms it; otherwise (a script, an agent's shell) the file
//! changes and the thing stays off until a person confirms it.

use std::path::Path;
use std::process::ExitCode;

use anyhow::{Context, bail};
use capa_config::{PolicyDecision, PolicyRule, ProjectConnections, config_edit};
use capa_core::{Hub, HubPaths};
use capa_host::policy;
use capa_host::running::RunningHub;
use serde_json::{Value, json};

use crate::cli::GlobalArgs;
use crate::setup;

/// `capa sources disable|enable <id>`.
pub(super) async fn source(
    global: &GlobalArgs,
    paths: &HubPaths,
    id: &str,
    on: bool,
) -> anyhow::Result<ExitCode> {
    let files = setup::config_files(global, paths)?;
    let config = setup::load_config(&files, paths)?;
    let Some(source) = config
        .sources
        .iter()
        .chain(&config.off_sources)
        .find(|s| s.id == id)
    else {
        bail!(
            "no source `{id}` in the capabilities files in use (`capa config show` lists them; the demo is turned off with `options.demo: false`)"
        );
    };
    let person = crate::terminal::interactive();
    if on && person {
        // The person at this terminal turns it on: confirmed as it is configured now.
        let store = capa_host::store::open_store(paths)?;
        Hub::record_confirmation(&store, source, ProjectConnections::Own)?;
    }
    let running = RunningHub::find(paths).await;
    let served_by_hub = source.file == paths.global_config();
    if let (Some(running), true) = (running, served_by_hub) {
        // The running hub edits its own file (its edits are serialised) and switches the source.
        let answer: Value = running
            .put(
                &format!("/api/sources/{id}/enabled"),
                &json!({"enabled": on}),
            )
            .await
            .context("switching the source in the running hub")?;
        println!(
            "{}",
            answer["message"]
                .as_str()
                .unwrap_or(if on { "on" } else { "off" })
        );
        return Ok(ExitCode::SUCCESS);
    }
    edit_file(&source.file, id, !on)?;
    if !on {
        println!("{id} is off (disabled: true in {}).", source.file.display());
    } else if person {
        println!(
            "{id} is on ({}): it starts with the hub.",
            source.file.display()
        );
    } else {
        println!(
            "{id} is on in {}, but this was not run at an interactive terminal: it starts once you confirm it in the Capabilities app or with `capa sources confirm {id}` in a terminal.",
            source.file.display()
        );
    }
    Ok(ExitCode::SUCCESS)
}

fn edit_file(file: &Path, id: &str, disabled: bool) -> anyhow::Result<()> {
    let text =
        std::fs::read_to_string(file).with_context(|| format!("reading {}", file.display()))?;
    let edited = config_edit::set_server_disabled(file, &text, id, disabled)?;
    if edited == text {
        return Ok(());
    }
    let temp = file.with_extension("yaml.tmp");
    std::fs::write(&temp, edited).with_context(|| format!("writing {}", temp.display()))?;
    std::fs::rename(&temp, file).with_context(|| format!("writing {}", file.display()))
}

/// `capa tools disable|enable <address>`.
pub(super) async fn tool(paths: &HubPaths, address: &str, on: bool) -> anyhow::Result<ExitCode> {
    capa_config::check_policy_pattern(address)
        .map_err(|p| anyhow::anyhow!("{}\n  fix: {}", p.message, p.fix))?;
    if address.contains('*') || !address.contains('.') {
        bail!(
            "`{address}` is not one tool's address (source.tool); for patterns use `capa policy set`"
        );
    }
    let file = paths.policy_file();
    let person = crate::terminal::interactive();
    if on {
        // Only the switch's own rule: an exact allow or ask rule is not an "off".
        let rules = capa_config::load_policy_file(&file)?;
        let switched_off = rules.iter().any(|r| {
            r.pattern == address && r.connection.is_none() && r.decision == PolicyDecision::Deny
        });
        if !switched_off
            || !policy::reset_rule(paths, address, None, person)
                .map_err(super::policy::edit_error)?
        {
            println!(
                "{address} has no switch turned off in {} (no deny rule for it): nothing changed. `capa policy list` shows the rules.",
                file.display()
            );
            return Ok(ExitCode::SUCCESS);
        }
        println!(
            "{address} is on (its deny rule removed from {}).",
            file.display()
        );
        if !person {
            eprintln!("{}", super::policy::HELD_NOTE);
        }
    } else {
        let rule = PolicyRule {
            pattern: address.to_owned(),
            connection: None,
            decision: PolicyDecision::Deny,
        };
        policy::set_rule(paths, &rule, person).map_err(super::policy::edit_error)?;
        println!("{address} is off (a deny rule in {}).", file.display());
    }
    super::policy::notify_running_hub(paths, &file).await;
    Ok(ExitCode::SUCCESS)
}
