//! Editing `<config dir>/policy.yaml` for a person, then telling a running hub to re-read it.
//!
//! A change that loosens the policy takes effect once a person confirmed it. When the caller
//! knows a person made the change (`confirmed`: an interactive terminal), it is recorded as
//! confirmed in the hub's database beside the file; otherwise the file is written and a
//! loosening waits for a confirmation (`capa policy confirm`, or "Confirm" in the app).

use std::path::PathBuf;

use capa_config::{
    ConfigError, PolicyDecision, PolicyRule, load_policy_file, reset_all_policy_rules,
    reset_policy_rule, set_policy_rule,
};
use capa_core::{HubPaths, confirm_policy_rule, confirm_policy_rule_removed, confirm_policy_rules};

use crate::client::RemoteHub;
use crate::running::{ClientError, RunningHub};
use crate::store::open_store;

/// Why a policy change was not made.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum PolicyEditError {
    /// The file could not be read or written, or is invalid (nothing was changed).
    #[error(transparent)]
    File(#[from] ConfigError),
    /// The file changed, but the confirmation could not be recorded in the database.
    #[error(transparent)]
    Record(anyhow::Error),
}

fn record(result: anyhow::Result<()>) -> Result<(), PolicyEditError> {
    result.map_err(PolicyEditError::Record)
}

/// The rules of the policy file.
pub fn rules(paths: &HubPaths) -> Result<Vec<PolicyRule>, ConfigError> {
    load_policy_file(&paths.policy_file())
}

/// Sets `rule` (replacing the rule of its pattern and connection); returns the decision it
/// replaced.
pub fn set_rule(
    paths: &HubPaths,
    rule: &PolicyRule,
    confirmed: bool,
) -> Result<Option<PolicyDecision>, PolicyEditError> {
    let previous = set_policy_rule(&paths.policy_file(), rule.clone())?;
    if confirmed {
        record(open_store(paths).and_then(|s| Ok(confirm_policy_rule(&s, rule)?)))?;
    }
    Ok(previous)
}

/// Removes the rule of `pattern` and `connection`; whether there was one.
pub fn reset_rule(
    paths: &HubPaths,
    pattern: &str,
    connection: Option<&str>,
    confirmed: bool,
) -> Result<bool, PolicyEditError> {
    let removed = reset_policy_rule(&paths.policy_file(), pattern, connection)?;
    if removed && confirmed {
        record(
            open_store(paths)
                .and_then(|s| Ok(confirm_policy_rule_removed(&s, pattern, connection)?)),
        )?;
    }
    Ok(removed)
}

/// Removes every rule; how many there were.
pub fn reset_all(paths: &HubPaths, confirmed: bool) -> Result<usize, PolicyEditError> {
    let count = reset_all_policy_rules(&paths.policy_file())?;
    if confirmed {
        record(open_store(paths).and_then(|s| Ok(confirm_policy_rules(&s, &[])?)))?;
    }
    Ok(count)
}

/// A person confirms the file as it is: its rules are in force. Returns how many there are.
pub fn confirm_file(paths: &HubPaths) -> Result<usize, PolicyEditError> {
    let rules = rules(paths)?;
    record(open_store(paths).and_then(|s| Ok(confirm_policy_rules(&s, &rules)?)))?;
    Ok(rules.len())
}

/// What a running hub did when told to re-read the policy.
#[derive(Debug)]
pub enum PolicyReloaded {
    /// No hub runs for this data dir; the next one reads the file.
    NoHub,
    /// The hub took the file; it reads its policy from `file`.
    Reloaded { file: PathBuf },
    /// The file is broken for the hub: it kept its previous policy.
    Kept { reason: Option<String> },
    /// The hub could not be asked.
    Unreachable(ClientError),
}

/// Tells a running hub to re-read the policy file; the change is saved either way.
pub async fn tell_running_hub(paths: &HubPaths) -> PolicyReloaded {
    let Some(running) = RunningHub::find(paths).await else {
        return PolicyReloaded::NoHub;
    };
    match RemoteHub::new(running).reload_policy().await {
        Ok(answer) if answer.ok => PolicyReloaded::Reloaded { file: answer.file },
        Ok(answer) => PolicyReloaded::Kept {
            reason: answer.error.map(|e| e.message),
        },
        Err(e) => PolicyReloaded::Unreachable(e),
    }
}
