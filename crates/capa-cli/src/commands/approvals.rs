//! `capabilities hub pending|approve|deny`: a person's decisions from a terminal. They go to the
//! running hub when there is one (so that its policy and waiting clients see them at once), else
//! straight to the database, which is where paused runs live: an in-process hub (`capa mcp`
//! without `capa hub serve`) picks the decision up when its client resumes the run.

use std::process::ExitCode;

use anyhow::{Context, anyhow};
use capa_config::{PolicyDecision, PolicyRule, set_policy_rule};
use capa_core::{Choice, HubPaths, PendingInput, decide_in_store};
use capa_store::Store;
use serde_json::{Value, json};

use crate::output;
use crate::running::RunningHub;

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
    let body = if id.starts_with("apr_") {
        json!({"approvalId": id, "choice": choice.as_str()})
    } else {
        json!({"runId": id, "choice": choice.as_str()})
    };
    let decided = match RunningHub::find(paths).await {
        Some(hub) => {
            let answer = hub.post("/api/approvals/decide", &body).await?;
            api_result(&answer)?;
            answer.get("decided").and_then(Value::as_u64).unwrap_or(0) as usize
        }
        None => decide_offline(paths, id, choice)?,
    };
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
        println!(
            "{what}: {decided} {calls} of {id}. The client continues with execute({{ resume }})."
        );
    }
    Ok(ExitCode::SUCCESS)
}

/// No hub runs: decide in the database, and write the allow rule for `--always` to the policy
/// file (a hub started later reads it).
fn decide_offline(paths: &HubPaths, id: &str, choice: Choice) -> anyhow::Result<usize> {
    let store = open_store(paths)?;
    let ids: Vec<String> = if id.starts_with("apr_") {
        vec![id.to_owned()]
    } else {
        store
            .pending_approvals(now_ms())?
            .into_iter()
            .filter(|a| a.run_id == id && a.kind == "approval")
            .map(|a| a.id)
            .collect()
    };
    if ids.is_empty() {
        return Err(anyhow!(
            "nothing of `{id}` is waiting for approval (see `capabilities hub pending`)"
        ));
    }
    for approval in &ids {
        let record = decide_in_store(&store, approval, choice, "cli")?;
        if choice == Choice::Always {
            let rule = PolicyRule {
                pattern: record.address.clone(),
                connection: None,
                decision: PolicyDecision::Allow,
            };
            set_policy_rule(&paths.policy_file(), rule)
                .with_context(|| format!("writing {}", paths.policy_file().display()))?;
        }
    }
    Ok(ids.len())
}

fn open_store(paths: &HubPaths) -> anyhow::Result<Store> {
    let db = paths.database();
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

fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0)
}
