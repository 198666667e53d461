//! The `capa` / `capabilities` command line: a thin layer over the hub's crates. Parsing is in
//! [`cli`], each subcommand in `commands/`, and what asks the person at the terminal in
//! [`setup`] and [`terminal`]. Starting, hosting and talking to a hub are capa-host's.

mod cli;
mod commands;
mod output;
mod setup;
mod terminal;
mod trust_prompt;

use std::process::ExitCode;

use clap::Parser;

/// Parses the command line, runs the command, prints errors as `error: …` with their causes.
/// The program's whole `main`: nothing may start a thread before it.
pub fn main() -> ExitCode {
    // SAFETY: this is the first thing the program does; no other thread has started.
    #[expect(
        unsafe_code,
        reason = "sets an environment variable, sound only before any thread starts"
    )]
    unsafe {
        capa_embed::prepare_process();
    }
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
