//! `capa mcp`: MCP over stdio, forwarded to the running hub or served by a hub in this process
//! (`capa_host::serve_stdio`).

use std::io::IsTerminal;
use std::process::ExitCode;
use std::sync::Arc;

use capa_core::{HubPaths, Redactor};

use crate::cli::{GlobalArgs, McpArgs};
use crate::setup;

pub(super) async fn run(
    global: &GlobalArgs,
    args: &McpArgs,
    paths: &HubPaths,
    redactor: Arc<Redactor>,
) -> anyhow::Result<ExitCode> {
    let files = setup::config_files(global, paths)?;
    // An unknown profile is refused before anything starts or connects.
    if let Some(name) = &args.profile {
        setup::check_profile(&files, name)?;
    }
    let start_local = async || {
        let config = setup::load_config(&files)?;
        // A project file's sources wait for the person's trust. Only a person running `capa
        // mcp` at a terminal is asked; a client that runs it (stdin and stdout are its pipes)
        // is served them as `needs_confirmation`, whose reason names `capa sources confirm`
        // and the app.
        let person = crate::terminal::interactive() && std::io::stdout().is_terminal();
        setup::start_hub_asking(config, paths, redactor, person).await
    };
    capa_host::serve_stdio(paths, &files, args.profile.as_deref(), start_local).await?;
    Ok(ExitCode::SUCCESS)
}
