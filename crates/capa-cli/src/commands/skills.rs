//! `capa skills list`: the skills of the configuration (docs/skills.md), from the running hub or
//! a hub in this process; `capa describe skill:<name>` reads one.

use std::process::ExitCode;
use std::sync::Arc;

use capa_core::{HubPaths, Redactor};
use capa_host::HubClient;

use crate::cli::{GlobalArgs, SkillsCommand};
use crate::output;
use crate::setup::open_hub;

pub(super) async fn run(
    global: &GlobalArgs,
    paths: &HubPaths,
    redactor: Arc<Redactor>,
    command: SkillsCommand,
) -> anyhow::Result<ExitCode> {
    let SkillsCommand::List { json } = command;
    let access = open_hub(global, paths, redactor).await?;
    let skills = access.skills().await;
    access.close().await;
    let skills = skills?;
    if json {
        output::json(&skills)?;
        return Ok(ExitCode::SUCCESS);
    }
    if skills.is_empty() {
        println!(
            "No skills. Write one as skills/<name>/SKILL.md beside your capabilities file (docs/skills.md)."
        );
        return Ok(ExitCode::SUCCESS);
    }
    let rows: Vec<Vec<String>> = skills
        .iter()
        .map(|s| {
            let name = if s.active {
                s.name.clone()
            } else {
                format!("{} [off]", s.name)
            };
            vec![
                crate::terminal::printable(&name),
                s.tools.len().to_string(),
                crate::terminal::printable(&s.description),
            ]
        })
        .collect();
    output::table(&["SKILL", "TOOLS", "DESCRIPTION"], &rows);
    println!("Read one with `capa describe skill:<name>`.");
    Ok(ExitCode::SUCCESS)
}
