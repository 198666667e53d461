//! `capa sources list` and `capa tools list`.

use std::process::ExitCode;
use std::sync::Arc;

use capa_core::{HubPaths, Redactor};
use serde_json::Value;

use crate::cli::{GlobalArgs, SourcesCommand, ToolsCommand};
use crate::commands::HubAccess;
use crate::output;

pub async fn sources(
    global: &GlobalArgs,
    paths: &HubPaths,
    redactor: Arc<Redactor>,
    command: SourcesCommand,
) -> anyhow::Result<ExitCode> {
    let SourcesCommand::List { json } = command;
    let access = HubAccess::open(global, paths, redactor).await?;
    let sources = access.sources().await;
    access.close().await;
    let sources = sources?;
    if json {
        output::json(&sources)?;
    } else {
        print_sources(&sources);
    }
    Ok(ExitCode::SUCCESS)
}

pub fn print_sources(sources: &Value) {
    let text = |v: &Value| v.as_str().unwrap_or("").to_owned();
    let rows: Vec<Vec<String>> = sources
        .as_array()
        .map(|a| {
            a.iter()
                .map(|s| {
                    let connections: Vec<String> = s["connections"]
                        .as_array()
                        .map(|c| c.iter().map(text).collect())
                        .unwrap_or_default();
                    let mut state = text(&s["state"]);
                    if let Some(error) = s["last_error"].as_str() {
                        state = format!("{state}: {error}");
                    }
                    vec![
                        text(&s["id"]),
                        s["tools"].to_string(),
                        connections.join(", "),
                        text(&s["target"]),
                        state,
                    ]
                })
                .collect()
        })
        .unwrap_or_default();
    output::table(
        &["SOURCE", "TOOLS", "CONNECTIONS", "TARGET", "STATE"],
        &rows,
    );
}

pub async fn tools(
    global: &GlobalArgs,
    paths: &HubPaths,
    redactor: Arc<Redactor>,
    command: ToolsCommand,
) -> anyhow::Result<ExitCode> {
    let ToolsCommand::List { json } = command;
    let access = HubAccess::open(global, paths, redactor).await?;
    let tools = access.tools().await;
    access.close().await;
    let tools = tools?;
    if json {
        output::json(&tools)?;
    } else {
        let hidden = tools.iter().filter(|t| t.policy == "deny").count();
        let rows: Vec<Vec<String>> = tools
            .iter()
            .filter(|t| t.policy != "deny")
            .map(|t| {
                let description = t
                    .description
                    .as_deref()
                    .unwrap_or("")
                    .lines()
                    .next()
                    .unwrap_or("")
                    .to_owned();
                let address = if t.policy == "ask" {
                    format!("{} [asks]", t.address)
                } else {
                    t.address.clone()
                };
                vec![address, description]
            })
            .collect();
        output::table(&["TOOL", "DESCRIPTION"], &rows);
        if hidden > 0 {
            println!("\n{hidden} more hidden by your policy (`capa policy list`).");
        }
    }
    Ok(ExitCode::SUCCESS)
}
