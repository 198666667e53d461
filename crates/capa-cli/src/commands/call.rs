//! `capa call <namespace.tool> [--json ARGS]`.

use std::process::ExitCode;
use std::sync::Arc;

use anyhow::{Context, bail};
use capa_core::{HubPaths, Redactor};
use capa_server::http::CallRequest;
use serde_json::Value;

use crate::cli::{CallArgs, GlobalArgs};
use crate::commands::HubAccess;
use crate::output;

pub async fn run(
    global: &GlobalArgs,
    paths: &HubPaths,
    redactor: Arc<Redactor>,
    args: CallArgs,
) -> anyhow::Result<ExitCode> {
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
    let answer = access
        .call(CallRequest {
            address: args.address.clone(),
            arguments,
            connection: args.connection.clone(),
        })
        .await;
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
    }
    Ok(if ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
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
