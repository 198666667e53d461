//! `capa sources logs <id> [--follow] [--json]`: a source's log (its server's stderr and the
//! hub's lines about it), from the running hub's memory (`GET /api/sources/<id>/logs`); without
//! a running hub, from a hub started here (then only what this start logged).

use std::io::Write;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, bail};
use capa_core::{HubPaths, Redactor};
use capa_host::OpenHub;
use serde_json::Value;

use crate::cli::GlobalArgs;
use crate::setup::open_hub;

const FOLLOW_EVERY: Duration = Duration::from_secs(1);

/// The lines after `after`, as the API answers them.
async fn page(hub: &OpenHub, id: &str, after: u64) -> anyhow::Result<Value> {
    match hub {
        OpenHub::Running(remote) => remote
            .running()
            .get::<Value>(&format!("/api/sources/{id}/logs?after={after}"))
            .await
            .with_context(|| format!("could not read the log of `{id}`")),
        OpenHub::Local(local) => match local.hub().sources().log_after(id, after) {
            Some(page) => Ok(serde_json::to_value(page)?),
            None => bail!("no source `{id}`: `capa sources list` shows them"),
        },
    }
}

/// `HH:MM:SS` (UTC) of milliseconds since the epoch.
fn clock(ms: i64) -> String {
    let secs = ms.div_euclid(1000).rem_euclid(86_400);
    format!(
        "{:02}:{:02}:{:02}Z",
        secs / 3600,
        secs % 3600 / 60,
        secs % 60
    )
}

/// Prints the page's lines; a closed stdout (`| head`) is an error of kind `BrokenPipe`.
fn print_page(page: &Value, json: bool) -> std::io::Result<()> {
    let mut out = std::io::stdout().lock();
    let lines = page["lines"].as_array().cloned().unwrap_or_default();
    for line in &lines {
        if json {
            writeln!(out, "{line}")?;
            continue;
        }
        let level = line["level"].as_str().unwrap_or("info");
        writeln!(
            out,
            "{} {:<6} {}{}",
            clock(line["at"].as_i64().unwrap_or(0)),
            line["stream"].as_str().unwrap_or("hub"),
            if level == "info" {
                String::new()
            } else {
                format!("{level}: ")
            },
            crate::terminal::printable(line["text"].as_str().unwrap_or_default())
        )?;
    }
    out.flush()
}

/// Whether printing should stop: the reader went away (not a failure), or another error.
fn printed(result: std::io::Result<()>) -> anyhow::Result<bool> {
    match result {
        Ok(()) => Ok(true),
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(false),
        Err(e) => Err(e.into()),
    }
}

pub(super) async fn run(
    global: &GlobalArgs,
    paths: &HubPaths,
    redactor: Arc<Redactor>,
    id: &str,
    follow: bool,
    json: bool,
) -> anyhow::Result<ExitCode> {
    let hub = open_hub(global, paths, redactor).await?;
    let first = match page(&hub, id, 0).await {
        Ok(first) => first,
        Err(e) => {
            hub.close().await;
            return Err(e);
        }
    };
    let dropped = first["dropped"].as_u64().unwrap_or(0);
    if dropped > 0 && !json {
        eprintln!("({dropped} older lines were dropped: the hub keeps the last 500 per source)");
    }
    let mut open = printed(print_page(&first, json))?;
    let mut next = first["next"].as_u64().unwrap_or(0);
    while follow && open {
        tokio::select! {
            () = capa_host::shutdown_signal() => break,
            () = tokio::time::sleep(FOLLOW_EVERY) => {}
        }
        let more = page(&hub, id, next).await?;
        let seen = more["next"].as_u64().unwrap_or(next);
        // A hub that restarted numbers from 1 again.
        let more = if seen < next {
            page(&hub, id, 0).await?
        } else {
            more
        };
        open = printed(print_page(&more, json))?;
        next = more["next"].as_u64().unwrap_or(next);
    }
    hub.close().await;
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    #[test]
    fn clock_is_utc_time_of_day() {
        assert_eq!(super::clock(0), "00:00:00Z");
        assert_eq!(super::clock(86_400_000 + 3_723_000), "01:02:03Z");
    }
}
