//! `capa tools changes`, `capa tools accept <address>` and `capa tools block <address>`: the
//! review of tool definitions that changed since the person approved them (docs/pinning.md).
//!
//! Accepting can loosen a verdict, so it needs a person at an interactive terminal (like
//! `capa policy confirm`): the command prints the change it accepts, records the new definition
//! in the store and tells a running hub to re-read its pins. Blocking only tightens.

use std::process::ExitCode;
use std::sync::Arc;

use anyhow::bail;
use capa_core::{ChangeState, HubPaths, Redactor, ToolChange};
use capa_host::OpenHub;
use serde::Deserialize;
use serde_json::json;

use crate::cli::GlobalArgs;
use crate::setup::open_hub;
use crate::terminal::printable;

mod diff;

/// The API's answer with the changes.
#[derive(Debug, Deserialize)]
struct Changes {
    changes: Vec<ToolChange>,
}

/// The mark `capa tools list` puts after a tool's address, when it waits for review.
pub(super) fn mark(review: Option<ChangeState>) -> &'static str {
    match review {
        Some(ChangeState::Changed) => " [changed]",
        Some(ChangeState::New) => " [new]",
        Some(ChangeState::Blocked) => " [blocked]",
        None => "",
    }
}

async fn list(access: &OpenHub) -> anyhow::Result<Vec<ToolChange>> {
    Ok(match access {
        OpenHub::Running(remote) => {
            let answer: Changes = remote.running().get("/api/tools/changes").await?;
            answer.changes
        }
        OpenHub::Local(local) => local.hub().tool_changes(),
    })
}

/// `capa tools changes [--json]`.
pub(super) async fn changes(
    global: &GlobalArgs,
    paths: &HubPaths,
    redactor: Arc<Redactor>,
    json: bool,
) -> anyhow::Result<ExitCode> {
    let access = open_hub(global, paths, redactor).await?;
    let changes = list(&access).await;
    access.close().await;
    let changes = changes?;
    if json {
        crate::output::json(&changes)?;
        return Ok(ExitCode::SUCCESS);
    }
    if changes.is_empty() {
        println!("Every tool is as you approved it.");
    }
    for change in &changes {
        diff::print(change);
    }
    Ok(ExitCode::SUCCESS)
}

/// `capa tools accept <address>`.
pub(super) async fn accept(
    global: &GlobalArgs,
    paths: &HubPaths,
    redactor: Arc<Redactor>,
    address: &str,
) -> anyhow::Result<ExitCode> {
    crate::terminal::require_person("Accepting a tool's changed definition")?;
    let access = open_hub(global, paths, redactor).await?;
    let outcome = accept_in(&access, paths, address).await;
    access.close().await;
    outcome
}

async fn accept_in(access: &OpenHub, paths: &HubPaths, address: &str) -> anyhow::Result<ExitCode> {
    let changes = list(access).await?;
    let Some(change) = changes.into_iter().find(|c| c.address == address) else {
        bail!(
            "`{}` has no change to review; `capa tools changes` lists the tools that have one",
            printable(address)
        );
    };
    // The person typed the command at a terminal: that is the decision, as with
    // `capa policy confirm`. What they accept is printed first, so it is on their screen.
    diff::print(&change);
    match access {
        OpenHub::Running(remote) => {
            let store = capa_host::store::open_store(paths)?;
            capa_core::accept_in_store(&store, &change)?;
            let _: serde_json::Value = remote
                .running()
                .post("/api/tools/changes/reload", &json!({}))
                .await?;
        }
        OpenHub::Local(local) => {
            local.hub().accept_tool_change(address)?;
        }
    }
    println!(
        "Accepted: {} is judged by this definition from now on.",
        printable(address)
    );
    Ok(ExitCode::SUCCESS)
}

/// `capa tools block <address>`.
pub(super) async fn block(
    global: &GlobalArgs,
    paths: &HubPaths,
    redactor: Arc<Redactor>,
    address: &str,
) -> anyhow::Result<ExitCode> {
    let access = open_hub(global, paths, redactor).await?;
    let outcome = match &access {
        OpenHub::Running(remote) => remote
            .running()
            .post::<serde_json::Value>("/api/tools/block", &json!({"address": address}))
            .await
            .map(|_| ())
            .map_err(anyhow::Error::from),
        OpenHub::Local(local) => local.hub().block_tool(address).map_err(anyhow::Error::from),
    };
    access.close().await;
    outcome?;
    println!(
        "Blocked: {} is hidden and every call is refused until you accept it (`capa tools accept {}`).",
        printable(address),
        printable(address)
    );
    Ok(ExitCode::SUCCESS)
}
