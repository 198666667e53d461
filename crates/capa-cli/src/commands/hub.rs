//! `capa hub serve` and `capa hub status`.

use std::process::ExitCode;
use std::sync::Arc;

use capa_core::{Choice, HubPaths, Redactor};
use capa_host::{HostError, HostOptions, HubClient, RemoteHub, RunningHub};
use serde::Serialize;

use crate::cli::{GlobalArgs, HubCommand};
use crate::{output, setup};

pub(super) async fn run(
    global: &GlobalArgs,
    paths: &HubPaths,
    redactor: Arc<Redactor>,
    command: HubCommand,
) -> anyhow::Result<ExitCode> {
    match command {
        HubCommand::Serve { http } => serve(global, paths, redactor, http).await,
        HubCommand::Status { json } => status(paths, json).await,
        HubCommand::Pending { json } => super::approvals::pending(paths, json).await,
        HubCommand::Approve {
            id,
            always,
            run,
            json,
        } => {
            let choice = if always {
                Choice::Always
            } else if run {
                Choice::Run
            } else {
                Choice::Once
            };
            super::approvals::decide(paths, &id, choice, json).await
        }
        HubCommand::Deny { id, json } => {
            super::approvals::decide(paths, &id, Choice::Deny, json).await
        }
    }
}

async fn serve(
    global: &GlobalArgs,
    paths: &HubPaths,
    redactor: Arc<Redactor>,
    addr: std::net::SocketAddr,
) -> anyhow::Result<ExitCode> {
    let options = HostOptions {
        paths: paths.clone(),
        http: addr,
        config: global.config.clone(),
        project: global.project.clone(),
        ui_dir: None,
        check_port_first: false,
    };
    let ask = async |hub: Arc<capa_core::Hub>| setup::ask_if_person(&hub).await;
    let hosted = match capa_host::serve_then(options, redactor, ask).await {
        Ok(hosted) => hosted,
        Err(HostError::AlreadyRunning { url, data_dir }) => anyhow::bail!(
            "a hub is already running at {url} for this data dir ({}); stop it first, or set CAPA_DATA_DIR for a second one",
            data_dir.display()
        ),
        Err(e) => return Err(e.into()),
    };
    eprintln!(
        "capa hub: MCP endpoint {} ({} mode; bearer token in {})",
        hosted.mcp_url,
        hosted.mode,
        hosted.token_file.display()
    );
    for file in hosted.files() {
        eprintln!("capa hub: configuration {}", file.display());
    }
    capa_host::shutdown_signal().await;
    eprintln!("capa hub: stopping");
    hosted.shutdown().await;
    Ok(ExitCode::SUCCESS)
}

async fn status(paths: &HubPaths, as_json: bool) -> anyhow::Result<ExitCode> {
    let Some(hub) = RunningHub::find(paths).await.map(RemoteHub::new) else {
        if as_json {
            output::json(&Status::NotRunning { running: false })?;
        } else {
            println!(
                "No hub is running for {}. Start one with `capa hub serve`.",
                paths.data_dir.display()
            );
        }
        return Ok(ExitCode::from(3));
    };
    let config = hub.config().await?;
    let sources = hub.sources().await?;
    if as_json {
        output::json(&Status::Running {
            running: true,
            url: hub.mcp_url(),
            config: Box::new(config),
            sources,
        })?;
    } else {
        println!("Hub running at {}", hub.mcp_url());
        println!("Exposure: {} ({})", config.tool_exposure, config.decided_by);
        if let Some(search) = &config.search {
            println!("Search: {}", search.line());
        }
        super::sources::print_sources(&sources);
    }
    Ok(ExitCode::SUCCESS)
}

/// `capa hub status --json`.
#[derive(Serialize)]
#[serde(untagged)]
enum Status {
    NotRunning {
        running: bool,
    },
    Running {
        running: bool,
        url: String,
        config: Box<capa_host::api::ConfigView>,
        sources: Vec<capa_host::api::SourceView>,
    },
}
