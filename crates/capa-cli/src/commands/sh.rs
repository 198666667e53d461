//! `capa sh <group> <tool> [--arg k=v]… [--json ARGS]`: one tool from the shell, through the
//! running hub (or one in this process), decided by the hub's authorizer like every call: a
//! denied tool is refused, a tool that asks is confirmed at an interactive terminal (`--yes`
//! skips the prompt, and also needs one) or waits for a decision in the app. This is how tools
//! run in `toolExposure: none` projects. Exit status 1 on any tool error.

use std::process::ExitCode;
use std::sync::Arc;

use anyhow::{Context, bail};
use capa_core::{HubPaths, Redactor};
use serde_json::{Map, Value};

use super::call::Approve;
use crate::cli::{CallArgs, GlobalArgs, ShArgs};

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

pub(super) async fn run(
    global: &GlobalArgs,
    paths: &HubPaths,
    redactor: Arc<Redactor>,
    args: ShArgs,
) -> anyhow::Result<ExitCode> {
    let address = format!("{}.{}", args.group, args.tool);
    let arguments = arguments(&args)?;
    let call = CallArgs {
        address,
        arguments: Some(Value::Object(arguments).to_string()),
        connection: args.connection,
        raw: args.output_json,
        full: args.full,
    };
    let approve = if args.yes { Approve::Yes } else { Approve::Ask };
    super::call::run_asking(global, paths, redactor, call, approve).await
}
