//! `capa ui [--print]`: opens the running hub's web UI. The hub opens a one-time login link in
//! the browser itself (`CAPA_BROWSER`, `$BROWSER`, else the platform's opener); the link never
//! passes through this command, since any process that holds the token could run it.
//! `--print` (or `CAPA_NO_BROWSER=1`) prints a link instead, and only to a person at an
//! interactive terminal: this command makes the link's secret and hands it to the hub through a
//! private file in the data dir (capa-server's `ui::handoff`).

use std::process::ExitCode;

use anyhow::{Context, bail};
use capa_core::HubPaths;
use serde_json::json;

use crate::cli::UiArgs;
use crate::running::RunningHub;

pub async fn run(paths: &HubPaths, args: UiArgs) -> anyhow::Result<ExitCode> {
    let Some(hub) = RunningHub::find(paths).await else {
        bail!(
            "no hub is running for {}: start it with `capa hub serve` or the desktop app",
            paths.data_dir.display()
        );
    };
    let no_browser = std::env::var("CAPA_NO_BROWSER").is_ok_and(|v| v == "1");
    if args.print || no_browser {
        crate::terminal::require_person("Printing a login link")?;
        let url = handed_over_link(paths, &hub).await?;
        println!("{url}");
        eprintln!("Open the link above yourself (it works once, for ten minutes).");
        return Ok(ExitCode::SUCCESS);
    }
    let answer = hub
        .post("/api/ui/link", &json!({}))
        .await
        .context("asking the running hub to open its UI")?;
    if answer["ok"].as_bool() != Some(true) {
        let message = answer
            .pointer("/error/message")
            .and_then(|m| m.as_str())
            .unwrap_or("the hub could not open its UI");
        bail!("{message}");
    }
    eprintln!("Opened Capabilities in your browser.");
    Ok(ExitCode::SUCCESS)
}

/// A login link whose secret this terminal made and handed to the hub.
async fn handed_over_link(paths: &HubPaths, hub: &RunningHub) -> anyhow::Result<String> {
    let secret = random_hex(32)?;
    let name = random_hex(16)?;
    let dir = capa_server::ui::handoff::dir(&paths.data_dir);
    let mut builder = std::fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
    builder
        .create(&dir)
        .with_context(|| format!("creating {}", dir.display()))?;
    let file = dir.join(&name);
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    std::io::Write::write_all(
        &mut options
            .open(&file)
            .with_context(|| format!("writing {}", file.display()))?,
        secret.as_bytes(),
    )?;
    let answer = hub.post("/api/ui/link", &json!({"handoff": name})).await;
    let _ = std::fs::remove_file(&file);
    let answer = answer.context("handing the login link to the running hub")?;
    if answer["ok"].as_bool() != Some(true) {
        bail!("the running hub did not take the login link: {answer}");
    }
    Ok(format!("{}/app/login/{secret}", hub.base_url))
}

fn random_hex(bytes: usize) -> anyhow::Result<String> {
    capa_core::digest::random_hex(bytes)
        .ok_or_else(|| anyhow::anyhow!("the system gave no randomness for a login link"))
}
