//! A person's decisions from a terminal, and what waits for them.
//!
//! The hub's HTTP API takes no decision for the bearer token alone (any process that reads the
//! token file could approve its own calls), so a terminal writes the decision where pending
//! inputs live — the database, through the same `decide_in_store` as the hub — and then tells a
//! running hub to look (`POST /api/approvals/changed`, which grants nothing by itself). An
//! in-process hub (`capa mcp` without `capa hub serve`) sees it when its client resumes the run.
//! The caller checks that a person is at the terminal before [`decide`].

use anyhow::{Context, anyhow};
use capa_config::{PolicyDecision, PolicyRule, set_policy_rule};
use capa_core::clock::now_ms;
use capa_core::{Choice, HubPaths, PendingInput, confirm_policy_rule, decide_in_store};

use crate::api::PendingView;
use crate::client::RemoteHub;
use crate::running::RunningHub;
use crate::store::open_store;

/// What waits for a person: the running hub's list, else the database's.
pub async fn pending(paths: &HubPaths) -> anyhow::Result<Vec<PendingView>> {
    if let Some(running) = RunningHub::find(paths).await {
        return Ok(RemoteHub::new(running).pending().await?.pending);
    }
    let store = open_store(paths)?;
    let records = store.pending_approvals(now_ms())?;
    records
        .iter()
        .map(|r| {
            serde_json::to_value(PendingInput::from_record(r)).and_then(serde_json::from_value)
        })
        .collect::<Result<_, _>>()
        .map_err(Into::into)
}

/// A person's decision on `id` (a run, a direct call or one approval): stored with the hub's
/// own decide code, the allow rule written for `Always`, and a running hub told. Returns how
/// many approvals it decided.
pub async fn decide(paths: &HubPaths, id: &str, choice: Choice) -> anyhow::Result<usize> {
    let decided = decide_in_database(paths, id, choice)?;
    if let Some(running) = RunningHub::find(paths).await
        && let Err(e) = RemoteHub::new(running).approvals_changed().await
    {
        // The decision is stored; the hub sees it at its next look (within a second).
        tracing::warn!(error = %e, "could not tell the running hub about the decision");
    }
    Ok(decided)
}

/// Decides in the database, and writes the allow rule for `Always` to the policy file (the hub
/// re-reads it when told, a hub started later reads it).
fn decide_in_database(paths: &HubPaths, id: &str, choice: Choice) -> anyhow::Result<usize> {
    let store = open_store(paths)?;
    let ids: Vec<String> = if id.starts_with("apr_") {
        vec![id.to_owned()]
    } else {
        store
            .pending_approvals(now_ms())?
            .into_iter()
            .filter(|a| a.run_id == id && a.kind == capa_store::InputKind::Approval)
            .map(|a| a.id)
            .collect()
    };
    if ids.is_empty() {
        return Err(anyhow!(
            "nothing of `{id}` is waiting for approval (see `capabilities hub pending`)"
        ));
    }
    for approval in &ids {
        let record = decide_in_store(&store, approval, choice, "terminal")?;
        if choice == Choice::Always {
            let rule = PolicyRule {
                pattern: record.address.clone(),
                connection: None,
                decision: PolicyDecision::Allow,
            };
            set_policy_rule(&paths.policy_file(), rule.clone())
                .with_context(|| format!("writing {}", paths.policy_file().display()))?;
            // A person decided at this terminal: the rule is confirmed, not held back.
            confirm_policy_rule(&store, &rule)?;
        }
    }
    Ok(ids.len())
}
