//! `capa ui [--print]`: opens the running hub's web UI. The hub opens a one-time login link in
//! the browser itself (`CAPA_BROWSER`, `$BROWSER`, else the platform's opener); the link never
//! passes through this command, since any process that holds the token could run it.
//! `--print` (or `CAPA_NO_BROWSER=1`) prints a link instead, and only to a person at an
//! interactive terminal; so does a plain `capa ui` at such a terminal when the hub could not
//! open a browser (its opener failed: no display, no browser set). "Opened" is said only when
//! the opener started and did not fail within the hub's 1.5 s watch. A printed link's secret is
//! made here and handed to the hub through a private file in the data dir
//! (`capa_host::ui_link`).

use std::process::ExitCode;

use anyhow::bail;
use capa_core::HubPaths;
use capa_host::{RemoteHub, RunningHub};

use crate::cli::UiArgs;

pub(super) async fn run(paths: &HubPaths, args: UiArgs) -> anyhow::Result<ExitCode> {
    let Some(hub) = RunningHub::find(paths).await.map(RemoteHub::new) else {
        bail!(
            "no hub is running for {}: start it with `capa hub serve` or the desktop app",
            paths.data_dir.display()
        );
    };
    let no_browser = std::env::var("CAPA_NO_BROWSER").is_ok_and(|v| v == "1");
    if args.print || no_browser {
        crate::terminal::require_person("Printing a login link")?;
        let url = capa_host::ui_link::handed_over_link(paths, &hub).await?;
        println!("{url}");
        eprintln!("Open the link above yourself (it works once, for ten minutes).");
        return Ok(ExitCode::SUCCESS);
    }
    match capa_host::ui_link::open_in_browser(&hub).await {
        Ok(()) => eprintln!("Opened Capabilities in your browser."),
        // No browser opened: a person at a terminal gets the link to open instead; anyone else
        // the hub's reason (the link is a secret, printed only to a person).
        Err(e) if crate::terminal::interactive() => {
            let url = capa_host::ui_link::handed_over_link(paths, &hub).await?;
            println!("{url}");
            eprintln!(
                "No browser opened ({e:#}). Open the link above yourself (it works once, for ten minutes)."
            );
        }
        Err(e) => return Err(e),
    }
    Ok(ExitCode::SUCCESS)
}
