//! `capabilities hub pending|approve|deny`: a person's decisions from a terminal.
//!
//! Decisions need a person: these commands refuse without an interactive terminal. The hub's
//! HTTP API takes no decision for the bearer token alone (any process that reads the token file
//! could approve its own calls), so the terminal writes the decision where pending inputs live —
//! the database, through the same `decide_in_store` as the hub — and then tells a running hub to
//! look (`POST /api/approvals/changed`, which grants nothing by itself). An in-process hub
//! (`capa mcp` without `capa hub serve`) sees it when its client resumes the run.

use std::process::ExitCode;

use anyhow::{Context, anyhow};
use capa_config::{PolicyDecision, PolicyRule, set_policy_rule};
use capa_core::{Choice, HubPaths, PendingInput, confirm_policy_rule, decide_in_store};
use capa_store::Store;
use serde_json::{Value, json};

use crate::output;
use crate::running::RunningHub;
pub(crate) use capa_core::clock::now_ms;

pub async fn pending(paths: &HubPaths, as_json: bool) -> anyhow::Result<ExitCode> {
    let pending: Vec<Value> = match RunningHub::find(paths).await {
        Some(hub) => {
            let answer = hub.get("/api/approvals").await?;
            api_result(&answer)?;
            answer
                .get("pending")
                .and_then(Value::as_array)
                .cloned()
                .unwrap_or_default()
        }
        None => {
            let store = open_store(paths)?;
            let records = store.pending_approvals(now_ms())?;
            records
                .iter()
                .map(|r| serde_json::to_value(PendingInput::from_record(r)))
                .collect::<Result<_, _>>()?
        }
    };
    if as_json {
        output::json(&json!({ "pending": pending }))?;
        return Ok(ExitCode::SUCCESS);
    }
    if pending.is_empty() {
        println!("Nothing is waiting for you.");
        return Ok(ExitCode::SUCCESS);
    }
    for item in &pending {
        let text = |key: &str| item.get(key).and_then(Value::as_str).unwrap_or_default();
        let connection = match text("connection") {
            "" => String::new(),
            c => format!(" (connection {c})"),
        };
        println!(
            "{}  {}  {}{connection}",
            text("runId"),
            text("kind"),
            text("address")
        );
        println!("  why: {}", text("reason"));
        if text("kind") == "approval" {
            let preview = item.get("preview").cloned().unwrap_or(Value::Null);
            for line in serde_json::to_string_pretty(&preview)?.lines() {
                println!("  {line}");
            }
            println!(
                "  approve: capabilities hub approve {}   deny: capabilities hub deny {}",
                text("runId"),
                text("runId")
            );
        } else {
            println!(
                "  add the connection: capa connections set {}",
                text("source")
            );
        }
        println!();
    }
    Ok(ExitCode::SUCCESS)
}

pub async fn decide(
    paths: &HubPaths,
    id: &str,
    choice: Choice,
    as_json: bool,
) -> anyhow::Result<ExitCode> {
    let decided = decide_at_terminal(paths, id, choice).await?;
    if as_json {
        output::json(&json!({"ok": true, "decided": decided, "choice": choice.as_str()}))?;
    } else {
        let what = match choice {
            Choice::Once => "Approved once",
            Choice::Run => "Approved for the rest of the run",
            Choice::Always => "Approved, and allowed from now on",
            Choice::Deny => "Denied",
        };
        let calls = if decided == 1 { "call" } else { "calls" };
        let next = if id.starts_with("call_") || id.starts_with("apr_") {
            "The waiting call goes on."
        } else {
            "The client continues with execute({ resume })."
        };
        println!("{what}: {decided} {calls} of {id}. {next}");
    }
    Ok(ExitCode::SUCCESS)
}

/// A person's decision at this terminal on `id` (a run, a direct call or one approval): stored
/// with the hub's own decide code, the allow rule written for `--always`, and a running hub told.
pub(crate) async fn decide_at_terminal(
    paths: &HubPaths,
    id: &str,
    choice: Choice,
) -> anyhow::Result<usize> {
    crate::terminal::require_person("Deciding an approval")?;
    let decided = decide_in_database(paths, id, choice)?;
    if let Some(hub) = RunningHub::find(paths).await
        && let Err(e) = hub.post("/api/approvals/changed", &json!({})).await
    {
        // The decision is stored; the hub sees it at its next look (within a second).
        tracing::warn!(error = %e, "could not tell the running hub about the decision");
    }
    Ok(decided)
}

/// Decides in the database, and writes the allow rule for `--always` to the policy file
/// (the hub re-reads it when told, a hub started later reads it).
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

pub(crate) fn open_store(paths: &HubPaths) -> anyhow::Result<Store> {
    paths.ensure_private_data_dir()?;
    let db = paths
        .private_database()
        .with_context(|| format!("preparing {}", paths.database().display()))?;
    Store::open(&db).with_context(|| format!("opening {}", db.display()))
}

/// The API's `{ok: false, error}` as an error.
fn api_result(answer: &Value) -> anyhow::Result<()> {
    if answer.get("ok").and_then(Value::as_bool) == Some(false) {
        let message = answer
            .pointer("/error/message")
            .and_then(Value::as_str)
            .unwrap_or("the hub refused");
        return Err(anyhow!("{message}"));
    }
    Ok(())
}
