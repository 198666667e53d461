//! The `capa` / `capabilities` command line: a thin layer over the hub's crates. Parsing is in
//! [`cli`], each subcommand in `commands/`, and what asks the person at the terminal in
//! [`setup`] and [`terminal`]. Starting, hosting and talking to a hub are capa-host's.

mod cli;
mod commands;
mod output;
mod setup;
mod terminal;

use std::process::ExitCode;

use clap::Parser;

/// Parses the command line, runs the command, prints errors as `error: …` with their causes.
pub fn main() -> ExitCode {
    let cli = cli::Cli::parse();
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("error: cannot start the async runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    match runtime.block_on(commands::run(cli)) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::FAILURE
        }
    }
}
