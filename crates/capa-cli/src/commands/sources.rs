//! `capa sources list` and `capa tools list`.

use std::process::ExitCode;
use std::sync::Arc;

use anyhow::bail;
use capa_config::ProjectConnections;
use capa_core::{Decision, HubPaths, Redactor};
use capa_host::HubClient;
use capa_host::api::{SourceView, ToolListing};

use crate::cli::{GlobalArgs, SourcesCommand, ToolsCommand};
use crate::setup::open_hub;
use crate::terminal::printable;
use crate::{output, setup};

pub(super) async fn sources(
    global: &GlobalArgs,
    paths: &HubPaths,
    redactor: Arc<Redactor>,
    command: SourcesCommand,
) -> anyhow::Result<ExitCode> {
    let json = match command {
        SourcesCommand::List { json } => json,
        SourcesCommand::Confirm { id } => return confirm(global, paths, &id).await,
        SourcesCommand::Import { file, yes, json } => {
            return super::import::run(global, paths, redactor, &file, yes, json).await;
        }
        SourcesCommand::Disable { id } => {
            return super::switches::source(global, paths, &id, false).await;
        }
        SourcesCommand::Enable { id } => {
            return super::switches::source(global, paths, &id, true).await;
        }
        SourcesCommand::Logs { id, follow, json } => {
            return super::source_logs::run(global, paths, redactor, &id, follow, json).await;
        }
        SourcesCommand::AllowSampling { id } => return sampling(paths, &id, true),
        SourcesCommand::DenySampling { id } => return sampling(paths, &id, false),
    };
    let access = open_hub(global, paths, redactor).await?;
    let sources = access.sources().await;
    // For the flagged tools of each source (docs/tool-text.md); the list stands without them.
    let tools = if json {
        None
    } else {
        access.tools().await.ok()
    };
    access.close().await;
    let sources = sources?;
    if json {
        output::json(&sources)?;
    } else {
        print_sources(&sources);
        super::tool_text::print_flagged_by_source(tools.as_deref().unwrap_or_default());
    }
    Ok(ExitCode::SUCCESS)
}

/// `capa sources confirm <id>`: a person at this terminal confirms the source as its file says
/// now (for a project file's source: trusts it, and says whether it may use the connections of
/// the global source it replaces); a running hub restarts it (and so starts it).
async fn confirm(global: &GlobalArgs, paths: &HubPaths, id: &str) -> anyhow::Result<ExitCode> {
    crate::terminal::require_person("Confirming a source")?;
    let files = setup::config_files(global, paths)?;
    let config = setup::load_config(&files, paths)?;
    if let Some(settings) = config.project.as_ref().filter(|p| !p.trusted)
        && settings.replacing.iter().any(|s| s.id == id)
    {
        bail!(
            "source `{id}` of {} would replace your global source `{id}`, which is part of trusting that project file as a whole: run `capa config trust` to see all it brings and decide",
            settings.file.display()
        );
    }
    let Some(source) = config.sources.iter().find(|s| s.id == id) else {
        bail!("no source `{id}` in the capabilities files in use (`capa config show` lists them)");
    };
    let project = source.scope.is_project();
    let connections = if project {
        eprintln!(
            "Source `{id}` of the project file {}:",
            source.file.display()
        );
        for line in crate::trust_prompt::describe_start(source) {
            eprintln!("  {line}");
        }
        let replaces = source.scope.replaces_global();
        crate::trust_prompt::ask_global_connections(
            replaces && !source.secret_names().is_empty(),
            id,
        )?
    } else {
        ProjectConnections::Own
    };
    capa_host::sources::confirm_source(paths, source, connections).await?;
    println!(
        "{} source `{id}` from {}: it starts now.",
        if project { "Trusted" } else { "Confirmed" },
        source.file.display()
    );
    // Its tools are known once it lists them; their text is checked then (docs/tool-text.md).
    println!(
        "Its tools' text is checked as they are listed: `capa sources list` says how many are flagged, `capa tools list` why."
    );
    Ok(ExitCode::SUCCESS)
}

pub(super) fn print_sources(sources: &[SourceView]) {
    let rows: Vec<Vec<String>> = sources
        .iter()
        .map(|s| {
            let state = match &s.last_error {
                Some(error) => format!("{}: {error}", s.state),
                None => s.state.to_string(),
            };
            vec![
                s.id.clone(),
                s.tools.to_string(),
                s.connections.join(", "),
                s.target.clone(),
                state,
            ]
        })
        .collect();
    output::table(
        &["SOURCE", "TOOLS", "CONNECTIONS", "TARGET", "STATE"],
        &rows,
    );
    for source in sources {
        if !source.limited.is_empty() {
            println!("{}: cut by the hub's limits (docs/limits.md):", source.id);
            for cut in &source.limited {
                println!("  {}", crate::terminal::printable(cut));
            }
        }
    }
}

pub(super) async fn tools(
    global: &GlobalArgs,
    paths: &HubPaths,
    redactor: Arc<Redactor>,
    command: ToolsCommand,
) -> anyhow::Result<ExitCode> {
    let json = match command {
        ToolsCommand::List { json } => json,
        ToolsCommand::Disable { address } => {
            return super::switches::tool(paths, &address, false).await;
        }
        ToolsCommand::Enable { address } => {
            return super::switches::tool(paths, &address, true).await;
        }
        ToolsCommand::Changes { json } => {
            return super::tool_changes::changes(global, paths, redactor, json).await;
        }
        ToolsCommand::Accept { address } => {
            return super::tool_changes::accept(global, paths, redactor, &address).await;
        }
        ToolsCommand::Block { address } => {
            return super::tool_changes::block(global, paths, redactor, &address).await;
        }
        ToolsCommand::AcceptText { address } => {
            return super::tool_text::accept(global, paths, redactor, &address).await;
        }
    };
    let access = open_hub(global, paths, redactor).await?;
    let tools = access.tools().await;
    access.close().await;
    let tools = tools?;
    if json {
        output::json(&tools)?;
    } else {
        let hidden = tools.iter().filter(|t| t.policy == Decision::Deny).count();
        let shown: Vec<&ToolListing> = tools
            .iter()
            .filter(|t| t.policy != Decision::Deny)
            .collect();
        let rows: Vec<Vec<String>> = shown
            .iter()
            .map(|t| {
                // Upstream text: what could act on the terminal is shown escaped.
                let description = printable(
                    t.description
                        .as_deref()
                        .unwrap_or("")
                        .lines()
                        .next()
                        .unwrap_or(""),
                );
                let asks = if t.policy == Decision::Ask {
                    " [asks]"
                } else {
                    ""
                };
                let address = format!(
                    "{}{asks}{}{}",
                    printable(&t.address),
                    super::tool_changes::mark(t.review),
                    super::tool_text::mark(t)
                );
                vec![address, description]
            })
            .collect();
        output::table(&["TOOL", "DESCRIPTION"], &rows);
        super::tool_text::print_warnings(&shown);
        if hidden > 0 {
            println!("\n{hidden} more hidden by your policy (`capa policy list`).");
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// `capa sources allow-sampling | deny-sampling <id>`: whether the source's sampling requests
/// reach the client's model (docs/relay.md, "Sampling needs a person's yes"). Allowing is a
/// person's act; denying only takes away. A running hub reads the store at each request.
fn sampling(paths: &HubPaths, id: &str, allow: bool) -> anyhow::Result<ExitCode> {
    if allow {
        crate::terminal::require_person("Letting a source ask your client's model")?;
    }
    let store = capa_host::open_store(paths)?;
    if allow {
        store.allow_sampling(id, capa_core::clock::now_ms())?;
        println!(
            "{id} may now ask your client's model for completions (sampling); each request reaches the model labelled as {id}'s. `capa sources deny-sampling {id}` takes it back."
        );
    } else {
        let had = store.revoke_sampling(id)?;
        println!(
            "{id}'s sampling requests {} refused.",
            if had { "are now" } else { "were already" }
        );
    }
    Ok(ExitCode::SUCCESS)
}
