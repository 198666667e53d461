//! Dispatch, and [`HubAccess`]: the running hub when there is one, else a hub in this process.

mod approvals;
mod call;
mod config;
mod connections;
mod hub;
mod init;
mod install;
mod lookup;
mod mcp;
mod policy;
mod sh;
mod sources;
mod ui;

use std::process::ExitCode;
use std::sync::Arc;

use capa_core::{Hub, HubPaths, Redactor};
use capa_server::http::{
    CallRequest, DescribeApiRequest, SearchApiRequest, ToolListing, call_json, describe_json,
    search_json, tool_listings,
};
use serde_json::Value;

use crate::cli::{Cli, Command};
use crate::running::{RunningHub, matching_hub};
use crate::setup;

pub async fn run(cli: Cli) -> anyhow::Result<ExitCode> {
    let paths = HubPaths::from_env();
    let redactor = Redactor::new();
    let default_level = match cli.command {
        Command::Hub(_) => "info,rmcp=warn",
        // Install reports each server's failure itself, once.
        Command::Install(_) => "error",
        _ => "warn",
    };
    setup::init_tracing(&redactor, default_level);
    match cli.command {
        Command::Init(args) => init::run(args),
        Command::Hub(command) => hub::run(&cli.global, &paths, redactor, command).await,
        Command::Mcp => mcp::run(&cli.global, &paths, redactor).await,
        Command::Sources(command) => sources::sources(&cli.global, &paths, redactor, command).await,
        Command::Tools(command) => sources::tools(&cli.global, &paths, redactor, command).await,
        Command::Call(args) => call::run(&cli.global, &paths, redactor, args).await,
        Command::Sh(args) => sh::run(&cli.global, &paths, redactor, args).await,
        Command::Search(args) => lookup::search(&cli.global, &paths, redactor, args).await,
        Command::Describe(args) => lookup::describe(&cli.global, &paths, redactor, args).await,
        Command::Connections(command) => {
            connections::run(&cli.global, &paths, redactor, command).await
        }
        Command::Config(command) => config::run(&cli.global, &paths, command).await,
        Command::Policy(command) => policy::run(&paths, command).await,
        Command::Install(args) => install::run(&cli.global, &paths, redactor, args).await,
        Command::Ui(args) => ui::run(&paths, args).await,
    }
}

/// Where a one-shot command gets its answers.
pub enum HubAccess {
    Running(RunningHub),
    Local(Arc<Hub>),
}

impl HubAccess {
    /// The running hub that reads the same files, or a hub started here (sources connected or
    /// failed before it returns).
    pub async fn open(
        global: &crate::cli::GlobalArgs,
        paths: &HubPaths,
        redactor: Arc<Redactor>,
    ) -> anyhow::Result<Self> {
        let files = setup::config_files(global, paths)?;
        if let Some(running) = matching_hub(paths, &files).await {
            return Ok(Self::Running(running));
        }
        let config = setup::load_config(&files)?;
        let hub = setup::start_hub(config, paths, redactor).await?;
        hub.startup_done().await;
        Ok(Self::Local(hub))
    }

    pub async fn sources(&self) -> anyhow::Result<Value> {
        match self {
            Self::Running(r) => r.get("/api/sources").await,
            Self::Local(hub) => Ok(serde_json::to_value(hub.sources())?),
        }
    }

    pub async fn tools(&self) -> anyhow::Result<Vec<ToolListing>> {
        match self {
            Self::Running(r) => Ok(serde_json::from_value(r.get("/api/tools").await?)?),
            Self::Local(hub) => Ok(tool_listings(hub)),
        }
    }

    pub async fn call(&self, request: CallRequest) -> anyhow::Result<Value> {
        match self {
            Self::Running(r) => r.post("/api/call", &request).await,
            Self::Local(hub) => Ok(call_json(hub, request, "capa-cli").await),
        }
    }

    pub async fn search(&self, request: SearchApiRequest) -> anyhow::Result<Value> {
        match self {
            Self::Running(r) => r.post("/api/search", &request).await,
            Self::Local(hub) => Ok(search_json(hub, request).await),
        }
    }

    pub async fn describe(&self, request: DescribeApiRequest) -> anyhow::Result<Value> {
        match self {
            Self::Running(r) => r.post("/api/describe", &request).await,
            Self::Local(hub) => Ok(describe_json(hub, request).await),
        }
    }

    pub async fn close(self) {
        if let Self::Local(hub) = self {
            hub.shutdown().await;
        }
    }
}
