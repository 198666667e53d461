//! Flagged tool text at a terminal (docs/tool-text.md): the warnings under `capa tools list`,
//! and `capa tools accept-text <address>`.

use std::process::ExitCode;
use std::sync::Arc;

use anyhow::bail;
use capa_core::tool_text::visible_line;
use capa_core::{HubPaths, Redactor};
use capa_host::HubClient;
use capa_host::api::ToolListing;

use crate::cli::GlobalArgs;
use crate::setup::open_hub;

/// `[flagged: rule, rule]` after a flagged tool's address; nothing for clean or accepted text.
pub(super) fn mark(tool: &ToolListing) -> String {
    match &tool.text_review {
        Some(review) if !review.accepted => format!(" [flagged: {}]", review.codes()),
        _ => String::new(),
    }
}

/// Each flagged tool's warnings, and how to block or accept it, after the table.
pub(super) fn print_warnings(tools: &[&ToolListing]) {
    let flagged: Vec<_> = tools
        .iter()
        .filter_map(|t| Some((t, t.text_review.as_ref().filter(|r| !r.accepted)?)))
        .collect();
    if flagged.is_empty() {
        return;
    }
    println!(
        "\n{} tool{} flagged: check the text before a model reads it (docs/tool-text.md).",
        flagged.len(),
        if flagged.len() == 1 { " is" } else { "s are" }
    );
    for (tool, review) in flagged {
        println!("  {}", visible_line(&tool.address));
        for flag in &review.flags {
            println!("    {}: {}", flag.rule.code(), visible_line(&flag.message));
        }
    }
    println!(
        "Block one with `capa tools disable <address>`, or accept its text as it reads now with `capa tools accept-text <address>`."
    );
}

/// Under `capa sources list`: how many tools of each source are flagged, and where to look.
pub(super) fn print_flagged_by_source(tools: &[ToolListing]) {
    let mut counts: std::collections::BTreeMap<&str, usize> = std::collections::BTreeMap::new();
    for tool in tools {
        if tool.text_review.as_ref().is_some_and(|r| !r.accepted) {
            *counts.entry(tool.source.as_str()).or_default() += 1;
        }
    }
    for (source, count) in counts {
        println!(
            "{}: {count} tool{} flagged for {} text; `capa tools list` shows why (docs/tool-text.md).",
            visible_line(source),
            if count == 1 { "" } else { "s" },
            if count == 1 { "its" } else { "their" }
        );
    }
}

/// `capa tools accept-text <address>`: a person at this terminal accepts the text the hub
/// lists now for the tool.
pub(super) async fn accept(
    global: &GlobalArgs,
    paths: &HubPaths,
    redactor: Arc<Redactor>,
    address: &str,
) -> anyhow::Result<ExitCode> {
    crate::terminal::require_person("Accepting a flagged tool")?;
    let access = open_hub(global, paths, redactor).await?;
    let tools = access.tools().await;
    access.close().await;
    let tools = tools?;
    let Some(tool) = tools.iter().find(|t| t.address == address) else {
        bail!(
            "no tool `{}` is served now; `capa tools list` shows the tools",
            visible_line(address)
        );
    };
    let Some(review) = &tool.text_review else {
        bail!("`{address}` is not flagged: there is nothing to accept");
    };
    eprintln!("The text of {} is flagged:", visible_line(address));
    for flag in &review.flags {
        eprintln!("  {}: {}", flag.rule.code(), visible_line(&flag.message));
    }
    if !crate::terminal::confirm("Accept it as it reads now (a change to it flags it again)?")? {
        println!("Nothing changed: {address} stays flagged.");
        return Ok(ExitCode::FAILURE);
    }
    // The person saw this listing's text: the Accept names its digest, and the store keeps it
    // for any hub on this database (a running one reads it at its next listing).
    let store = capa_host::store::open_store(paths)?;
    store.accept_tool_text(address, &review.digest, capa_core::clock::now_ms())?;
    println!("{address} is accepted as it reads now; a change to its text flags it again.");
    Ok(ExitCode::SUCCESS)
}
