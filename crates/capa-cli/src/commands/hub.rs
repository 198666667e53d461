//! `capa hub serve` and `capa hub status`.

use std::process::ExitCode;
use std::sync::Arc;

use capa_core::{Choice, HubPaths, Redactor};
use serde_json::json;

use crate::cli::{GlobalArgs, HubCommand};
use crate::running::RunningHub;
use crate::{output, setup};

pub async fn run(
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
    if let Some(other) = RunningHub::find(paths).await {
        anyhow::bail!(
            "a hub is already running at {} for this data dir ({}); stop it first, or set CAPA_DATA_DIR for a second one",
            other.base_url,
            paths.data_dir.display()
        );
    }
    let files = setup::config_files(global, paths)?;
    let config = setup::load_config(&files)?;
    let decided_by = config.exposure.decided_by.clone();
    let mode = config.exposure.mode;
    let hub = setup::start_hub(config, paths, redactor).await?;
    let token = match capa_server::token::rotate(&paths.token()) {
        Ok(token) => token,
        Err(e) => {
            hub.shutdown().await;
            return Err(anyhow::Error::new(e).context(format!(
                "creating the access token {}",
                paths.token().display()
            )));
        }
    };
    let server = match capa_server::serve(hub.clone(), addr, token).await {
        Ok(server) => server,
        Err(e) => {
            hub.shutdown().await;
            return Err(e.into());
        }
    };
    if let Err(e) = server.publish(paths) {
        server.shutdown().await;
        hub.shutdown().await;
        return Err(anyhow::Error::new(e).context(format!(
            "writing the discovery file {}",
            paths.discovery().display()
        )));
    }
    tracing::info!(url = %server.mcp_url(), token_file = %paths.token().display(), %mode, %decided_by, "hub listening");
    eprintln!(
        "capa hub: MCP endpoint {} ({mode} mode; bearer token in {})",
        server.mcp_url(),
        paths.token().display()
    );
    for file in &hub.config().files {
        eprintln!("capa hub: configuration {}", file.display());
    }
    shutdown_signal().await;
    eprintln!("capa hub: stopping");
    server.shutdown().await;
    hub.shutdown().await;
    Ok(ExitCode::SUCCESS)
}

async fn shutdown_signal() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        match signal(SignalKind::terminate()) {
            Ok(mut term) => {
                tokio::select! {
                    _ = tokio::signal::ctrl_c() => {}
                    _ = term.recv() => {}
                }
            }
            Err(_) => {
                let _ = tokio::signal::ctrl_c().await;
            }
        }
    }
    #[cfg(not(unix))]
    {
        let _ = tokio::signal::ctrl_c().await;
    }
}

async fn status(paths: &HubPaths, as_json: bool) -> anyhow::Result<ExitCode> {
    let Some(hub) = RunningHub::find(paths).await else {
        if as_json {
            output::json(&json!({"running": false}))?;
        } else {
            println!(
                "No hub is running for {}. Start one with `capa hub serve`.",
                paths.data_dir.display()
            );
        }
        return Ok(ExitCode::from(3));
    };
    let config = hub.get("/api/config").await?;
    let sources = hub.get("/api/sources").await?;
    if as_json {
        output::json(
            &json!({"running": true, "url": hub.mcp_url(), "config": config, "sources": sources}),
        )?;
    } else {
        println!("Hub running at {}", hub.mcp_url());
        println!(
            "Exposure: {} ({})",
            config["toolExposure"].as_str().unwrap_or("?"),
            config["decidedBy"].as_str().unwrap_or("?")
        );
        super::sources::print_sources(&sources);
    }
    Ok(ExitCode::SUCCESS)
}
