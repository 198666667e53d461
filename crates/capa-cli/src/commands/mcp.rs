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
    // A project file waits for the person's trust. Only a person running `capa mcp` at a
    // terminal is asked (first, so that a profile of the project is known once trusted); a
    // client that runs it (stdin and stdout are its pipes) is served the person's own
    // configuration, the project's sources as `needs_confirmation` (whose reason names `capa
    // sources confirm` and the app), its other items held.
    if crate::terminal::interactive() && std::io::stdout().is_terminal() {
        crate::trust_prompt::ask_project_trust(&files, paths).await?;
    }
    // An unknown profile is refused before anything starts or connects.
    if let Some(name) = &args.profile {
        setup::check_profile(&files, paths, name)?;
    }
    let start_local = async || {
        let config = setup::load_config(&files, paths)?;
        setup::start_hub(config, paths, redactor).await
    };
    capa_host::serve_stdio(paths, &files, args.profile.as_deref(), start_local).await?;
    Ok(ExitCode::SUCCESS)
}
