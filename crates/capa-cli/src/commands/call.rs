//! `capa call <namespace.tool> [--json ARGS]`.

use std::process::ExitCode;
use std::sync::Arc;

use anyhow::{Context, bail};
use capa_core::clock::now_ms;
use capa_core::{Choice, HubPaths, Redactor};
use capa_host::api::{CallAnswer, CallRequest, PendingView};
use capa_host::client::call_when_decided;
use capa_host::{HubClient, OpenHub};
use serde_json::Value;

use crate::cli::{CallArgs, GlobalArgs};
use crate::output;
use crate::setup::open_hub;

pub(super) async fn run(
    global: &GlobalArgs,
    paths: &HubPaths,
    redactor: Arc<Redactor>,
    args: CallArgs,
) -> anyhow::Result<ExitCode> {
    run_asking(global, paths, redactor, args, Approve::Ask).await
}

/// How a call that needs a person gets its answer at this terminal.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Approve {
    /// Prompt at an interactive terminal; without one, wait for a decision in the app.
    Ask,
    /// `--yes`: approve without a prompt, which also needs an interactive terminal.
    Yes,
}

/// Runs a call through the hub's authorizer. A call that needs a person is asked here at an
/// interactive terminal; without one the command says where to decide and waits for the
/// decision (up to the approval's expiry).
pub(super) async fn run_asking(
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
    let access = open_hub(global, paths, redactor).await?;
    let request = || CallRequest {
        address: args.address.clone(),
        arguments: arguments.clone(),
        connection: args.connection.clone(),
        full: args.full,
        ..CallRequest::default()
    };
    let answer = match access.call(request()).await {
        Ok(answer) if answer.error_code() == Some("approval_required") => {
            get_decision(paths, &access, answer, request, approve).await
        }
        other => other.map_err(anyhow::Error::from),
    };
    access.close().await;
    let answer = answer?;
    let ok = answer.ok;
    if args.raw {
        output::json(&answer)?;
    } else if let Some(error) = &answer.error {
        eprintln!(
            "error: {}{}",
            error.message,
            if error.retryable == Some(true) {
                " (retryable)"
            } else {
                ""
            }
        );
    } else {
        print_result(answer.result.as_ref().unwrap_or(&Value::Null));
        if answer.cut == Some(true) {
            eprintln!("capa: the result was cut to the inline limit; --full prints all of it");
        }
    }
    Ok(if ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}

/// Gets a person's decision on the call `first` says needs one, then the call's answer.
async fn get_decision(
    paths: &HubPaths,
    access: &OpenHub,
    first: CallAnswer,
    request: impl Fn() -> CallRequest,
    approve: Approve,
) -> anyhow::Result<CallAnswer> {
    let Some(approval) = first.approval.clone() else {
        return Ok(first);
    };
    let id = approval.id.as_str();
    let address = approval.address.as_str();
    if crate::terminal::interactive() {
        let yes = match approve {
            Approve::Yes => true,
            Approve::Ask => {
                eprintln!("{}", describe(&approval));
                crate::terminal::confirm("Run it?")?
            }
        };
        let choice = if yes { Choice::Once } else { Choice::Deny };
        super::approvals::decide_at_terminal(paths, id, choice).await?;
        if !yes {
            eprintln!("Not run.");
        }
        return Ok(access
            .call(CallRequest {
                approval: Some(id.to_owned()),
                ..request()
            })
            .await?);
    }
    let give_up =
        now_ms().saturating_add(i64::try_from(WAIT_FOR_PERSON.as_millis()).unwrap_or(i64::MAX));
    let expires_at = approval.expires_at_ms.min(give_up);
    eprintln!(
        "{address} needs your approval: approve it in the Capabilities app, or run `capabilities hub approve {id}` in a terminal. Waiting for the decision (up to {} minutes)…",
        WAIT_FOR_PERSON.as_secs() / 60
    );
    Ok(call_when_decided(access, request, id, expires_at).await?)
}

/// How long a command without a terminal waits for a person's decision before it gives up (the
/// pending call then ends, and the popup stops asking).
const WAIT_FOR_PERSON: std::time::Duration = std::time::Duration::from_mins(10);

/// What a person reads before deciding: the call, its connection, why, and the preview.
fn describe(approval: &PendingView) -> String {
    let connection = match approval.connection.as_deref() {
        None | Some("") => String::new(),
        Some(c) => format!(" with connection `{c}`"),
    };
    let preview = serde_json::to_string_pretty(&approval.preview).unwrap_or_default();
    format!(
        "{}{connection} needs your approval.\nWhy: {}\nArguments:\n{preview}",
        approval.address, approval.reason
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
