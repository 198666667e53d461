//! `capa profiles list`: the hub's own profile and each named one (docs/profiles.md), from the
//! running hub or a hub in this process.

use std::process::ExitCode;
use std::sync::Arc;

use capa_core::{HubPaths, Redactor};
use capa_host::HubClient;
use capa_server::http::ProfileListing;

use crate::cli::{GlobalArgs, ProfilesCommand};
use crate::output;
use crate::setup::open_hub;

pub(super) async fn run(
    global: &GlobalArgs,
    paths: &HubPaths,
    redactor: Arc<Redactor>,
    command: ProfilesCommand,
) -> anyhow::Result<ExitCode> {
    let ProfilesCommand::List { json } = command;
    let access = open_hub(global, paths, redactor).await?;
    let profiles = access.profiles().await;
    access.close().await;
    let profiles = profiles?;
    if json {
        output::json(&profiles)?;
        return Ok(ExitCode::SUCCESS);
    }
    let rows: Vec<Vec<String>> = profiles.iter().map(row).collect();
    output::table(
        &["PROFILE", "MODE", "SOURCES", "SKILLS", "STDIO", "HTTP"],
        &rows,
    );
    if profiles.len() == 1 {
        println!(
            "Only the default profile. Declare others under `profiles:` in a capabilities file (docs/profiles.md)."
        );
    }
    Ok(ExitCode::SUCCESS)
}

fn row(profile: &ProfileListing) -> Vec<String> {
    let all = |list: &Option<Vec<String>>| match list {
        None => "all".to_owned(),
        Some(names) if names.is_empty() => "none".to_owned(),
        Some(names) => names.join(", "),
    };
    let mode = if profile.mode == profile.exposure {
        profile.mode.clone()
    } else {
        format!("{} ({})", profile.mode, profile.exposure)
    };
    vec![
        crate::terminal::printable(&profile.name),
        mode,
        crate::terminal::printable(&all(&profile.sources)),
        crate::terminal::printable(&all(&profile.skills)),
        format!("capa {}", profile.stdio_args.join(" ")),
        profile.path.clone(),
    ]
}
