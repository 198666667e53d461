//! `capa ui [--print]`: asks the running hub for a one-time login link to its web UI and opens
//! it in the browser (`CAPA_BROWSER`, `$BROWSER`, else the platform's opener).

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
    let answer = hub
        .post("/api/ui/link", &json!({}))
        .await
        .context("asking the running hub for a login link")?;
    let Some(url) = answer["url"].as_str() else {
        bail!("the running hub gave no login link: {answer}");
    };
    let no_browser = std::env::var("CAPA_NO_BROWSER").is_ok_and(|v| v == "1");
    if args.print || no_browser {
        println!("{url}");
        if !args.print {
            eprintln!(
                "CAPA_NO_BROWSER=1: open the link above yourself (it works once, for ten minutes)."
            );
        }
        return Ok(ExitCode::SUCCESS);
    }
    match capa_server::open_in_browser(url) {
        Ok(()) => {
            eprintln!("Opened Capabilities in your browser.");
            Ok(ExitCode::SUCCESS)
        }
        Err(e) => {
            eprintln!(
                "Could not start a browser ({e}). Open this link (it works once, for ten minutes):"
            );
            println!("{url}");
            Ok(ExitCode::SUCCESS)
        }
    }
}
