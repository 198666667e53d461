//! `capa call <namespace.tool> [--json ARGS]`.

use std::process::ExitCode;
use std::sync::Arc;

use anyhow::{Context, bail};
use capa_core::{Choice, HubPaths, Redactor};
use capa_server::http::{CallRequest, MAX_APPROVAL_WAIT};
use serde_json::Value;

use super::approvals::now_ms;
use crate::cli::{CallArgs, GlobalArgs};
use crate::commands::HubAccess;
use crate::output;

pub async fn run(
    global: &GlobalArgs,
    paths: &HubPaths,
    redactor: Arc<Redactor>,
    args: CallArgs,
) -> anyhow::Result<ExitCode> {
    run_asking(global, paths, redactor, args, Approve::Ask).await
}

/// How a call that needs a person gets its answer at this terminal.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Approve {
    /// Prompt at an interactive terminal; without one, wait for a decision in the app.
    Ask,
    /// `--yes`: approve without a prompt, which also needs an interactive terminal.
    Yes,
}

/// Runs a call through the hub's authorizer. A call that needs a person is asked here at an
/// interactive terminal; without one the command says where to decide and waits for the
/// decision (up to the approval's expiry).
pub async fn run_asking(
    global: &GlobalArgs,
    paths: &HubPaths,
    redactor: Arc<Redactor>,
    args: CallArgs,
    approve: Approve,
) -> anyhow::Result<ExitCode> {
    if approve == Approve::Yes {
        crate::terminal::require_person("--yes")?;
    }
    let arguments = match &args.arguments {
        None => None,
        Some(text) => match serde_json::from_str::<Value>(text)
            .context("--json is not valid JSON")?
        {
            Value::Object(map) => Some(map),
            other => bail!("--json must be a JSON object like '{{\"text\": \"hi\"}}', not {other}"),
        },
    };
    let access = HubAccess::open(global, paths, redactor).await?;
    let request = || CallRequest {
        address: args.address.clone(),
        arguments: arguments.clone(),
        connection: args.connection.clone(),
        full: args.full,
        ..CallRequest::default()
    };
    let answer = match access.call(request()).await {
        Ok(answer) if error_code(&answer) == Some("approval_required") => {
            get_decision(paths, &access, answer, request, approve).await
        }
        other => other,
    };
    access.close().await;
    let answer = answer?;
    let ok = answer["ok"].as_bool() == Some(true);
    if args.raw {
        output::json(&answer)?;
    } else if let Some(error) = answer.get("error") {
        eprintln!(
            "error: {}{}",
            error["message"].as_str().unwrap_or("call failed"),
            if error["retryable"].as_bool() == Some(true) {
                " (retryable)"
            } else {
                ""
            }
        );
    } else {
        print_result(&answer["result"]);
        if answer["cut"].as_bool() == Some(true) {
            eprintln!("capa: the result was cut to the inline limit; --full prints all of it");
        }
    }
    Ok(if ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}

fn error_code(answer: &Value) -> Option<&str> {
    answer.pointer("/error/code").and_then(Value::as_str)
}

/// Gets a person's decision on the call `first` says needs one, then the call's answer.
async fn get_decision(
    paths: &HubPaths,
    access: &HubAccess,
    first: Value,
    request: impl Fn() -> CallRequest,
    approve: Approve,
) -> anyhow::Result<Value> {
    let approval = &first["approval"];
    let Some(id) = approval["id"].as_str() else {
        return Ok(first);
    };
    let address = approval["address"].as_str().unwrap_or("the tool");
    if crate::terminal::interactive() {
        let yes = match approve {
            Approve::Yes => true,
            Approve::Ask => {
                eprintln!("{}", describe(approval));
                crate::terminal::confirm("Run it?")?
            }
        };
        let choice = if yes { Choice::Once } else { Choice::Deny };
        super::approvals::decide_at_terminal(paths, id, choice).await?;
        if !yes {
            eprintln!("Not run.");
        }
        return access
            .call(CallRequest {
                approval: Some(id.to_owned()),
                ..request()
            })
            .await;
    }
    let give_up = now_ms() + WAIT_FOR_PERSON.as_millis() as i64;
    let expires_at = approval["expiresAtMs"].as_i64().unwrap_or(0).min(give_up);
    eprintln!(
        "{address} needs your approval: approve it in the Capabilities app, or run `capabilities hub approve {id}` in a terminal. Waiting for the decision (up to {} minutes)…",
        WAIT_FOR_PERSON.as_secs() / 60
    );
    loop {
        let left = (expires_at - now_ms()).max(0) as u64;
        let answer = access
            .call(CallRequest {
                approval: Some(id.to_owned()),
                wait_ms: Some(left.min(MAX_APPROVAL_WAIT.as_millis() as u64)),
                abandon: left == 0,
                ..request()
            })
            .await?;
        if error_code(&answer) != Some("approval_pending") || left == 0 {
            return Ok(answer);
        }
    }
}

/// How long a command without a terminal waits for a person's decision before it gives up (the
/// pending call then ends, and the popup stops asking).
const WAIT_FOR_PERSON: std::time::Duration = std::time::Duration::from_secs(10 * 60);

/// What a person reads before deciding: the call, its connection, why, and the preview.
fn describe(approval: &Value) -> String {
    let text = |key: &str| approval[key].as_str().unwrap_or_default();
    let connection = match text("connection") {
        "" => String::new(),
        c => format!(" with connection `{c}`"),
    };
    let preview = serde_json::to_string_pretty(&approval["preview"]).unwrap_or_default();
    format!(
        "{}{connection} needs your approval.\nWhy: {}\nArguments:\n{preview}",
        text("address"),
        text("reason")
    )
}

/// Text blocks as text; everything else (and structured content) as JSON.
fn print_result(result: &Value) {
    let is_error = result["isError"].as_bool() == Some(true);
    let blocks = result["content"].as_array().cloned().unwrap_or_default();
    for block in &blocks {
        match block["text"].as_str() {
            Some(text) if is_error => eprintln!("{text}"),
            Some(text) => println!("{text}"),
            None => println!(
                "{}",
                serde_json::to_string_pretty(block).unwrap_or_default()
            ),
        }
    }
    if blocks.is_empty()
        && let Some(structured) = result.get("structuredContent")
    {
        println!(
            "{}",
            serde_json::to_string_pretty(structured).unwrap_or_default()
        );
    }
}
