//! `capa sh <group> <tool> [--arg k=v]… [--json ARGS]`: one tool from the shell, through the
//! running hub (or one in this process), with the policy applied: a denied tool is refused, a
//! tool that asks is confirmed at the terminal (or with `--yes`). This is how tools run in
//! `toolExposure: none` projects. Exit status 1 on any tool error.

use std::io::{BufRead, IsTerminal, Write};
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::{Context, bail};
use capa_core::{HubPaths, Redactor};
use serde_json::{Map, Value};

use crate::cli::{CallArgs, GlobalArgs, ShArgs};
use crate::commands::HubAccess;

/// The arguments object from `--json` and each `--arg key=value`.
fn arguments(args: &ShArgs) -> anyhow::Result<Map<String, Value>> {
    let mut object = match &args.json_args {
        None => Map::new(),
        Some(text) => match serde_json::from_str::<Value>(text)
            .context("--json is not valid JSON")?
        {
            Value::Object(map) => map,
            other => bail!("--json must be a JSON object like '{{\"text\": \"hi\"}}', not {other}"),
        },
    };
    for pair in &args.args {
        let Some((key, value)) = pair.split_once('=') else {
            bail!("--arg takes key=value, got `{pair}`");
        };
        if key.is_empty() {
            bail!("--arg `{pair}` has no key");
        }
        let value = serde_json::from_str(value).unwrap_or_else(|_| Value::String(value.to_owned()));
        object.insert(key.to_owned(), value);
    }
    Ok(object)
}

pub async fn run(
    global: &GlobalArgs,
    paths: &HubPaths,
    redactor: Arc<Redactor>,
    args: ShArgs,
) -> anyhow::Result<ExitCode> {
    let address = format!("{}.{}", args.group, args.tool);
    let arguments = arguments(&args)?;
    let policy = {
        let access = HubAccess::open(global, paths, redactor.clone()).await?;
        let tools = access.tools().await;
        access.close().await;
        tools?
            .into_iter()
            .find(|t| t.address == address)
            .map(|t| t.policy)
    };
    match policy.as_deref() {
        Some("deny") => {
            eprintln!("error: {address} is denied by your policy (`capa policy list`)");
            return Ok(ExitCode::FAILURE);
        }
        Some("ask") if !args.yes && !confirm(&address)? => {
            eprintln!("Not run.");
            return Ok(ExitCode::FAILURE);
        }
        _ => {}
    }
    let call = CallArgs {
        address,
        arguments: Some(Value::Object(arguments).to_string()),
        connection: args.connection,
        raw: args.output_json,
    };
    super::call::run(global, paths, redactor, call).await
}

/// Asks at the terminal before running a tool the policy asks for; refuses without one.
fn confirm(address: &str) -> anyhow::Result<bool> {
    if !std::io::stdin().is_terminal() {
        bail!("{address} asks for approval by your policy; pass --yes to approve it from here");
    }
    eprint!("{address} asks for approval by your policy. Run it? [y/N] ");
    std::io::stderr().flush()?;
    let mut answer = String::new();
    std::io::stdin().lock().read_line(&mut answer)?;
    Ok(matches!(answer.trim(), "y" | "Y" | "yes"))
}
