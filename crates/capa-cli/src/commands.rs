//! Dispatch to the subcommands, one file each.

mod approvals;
mod call;
mod clients;
mod config;
mod connections;
mod hub;
mod import;
mod init;
mod install;
mod login;
mod lookup;
mod mcp;
mod pairing;
mod policy;
mod profiles;
mod reload_notice;
mod sh;
mod skills;
mod source_logs;
mod sources;
mod switches;
mod tool_changes;
mod tool_text;
mod ui;

use std::process::ExitCode;

use capa_core::{HubPaths, Redactor};

use crate::cli::{Cli, Command};

pub(crate) async fn run(cli: Cli) -> anyhow::Result<ExitCode> {
    let paths = HubPaths::from_env();
    let redactor = Redactor::new();
    let default_level = match cli.command {
        Command::Hub(_) => "info,rmcp=warn",
        // Install reports each server's failure itself, once.
        Command::Install(_) => "error",
        _ => "warn",
    };
    capa_host::init_logging(&redactor, default_level);
    match cli.command {
        Command::Init(args) => init::run(args),
        Command::Hub(command) => hub::run(&cli.global, &paths, redactor, command).await,
        Command::Mcp(args) => mcp::run(&cli.global, &args, &paths, redactor).await,
        Command::Profiles(command) => profiles::run(&cli.global, &paths, redactor, command).await,
        Command::Sources(command) => sources::sources(&cli.global, &paths, redactor, command).await,
        Command::Tools(command) => sources::tools(&cli.global, &paths, redactor, command).await,
        Command::Skills(command) => skills::run(&cli.global, &paths, redactor, command).await,
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
        Command::Clients(command) => clients::run(&cli.global, &paths, command),
    }
}
