//! Shared start-up: configuration files, logging, and an in-process hub (capa-host's), with
//! the questions to the person at this terminal about a project file's sources.

use std::sync::Arc;

use anyhow::Context;
use capa_config::{ConfigFiles, HubConfig, ProjectConnections, SourceConfig, SourceTransport};
use capa_core::{Hub, HubPaths, Redactor, STARTUP_LIMIT};
use capa_host::OpenHub;

use crate::cli::GlobalArgs;
use crate::terminal::{printable, printable_arg};

/// The configuration files in force: `--config FILE`, or the global file plus the project file
/// found from the working directory (or `--project DIR`) up.
pub(crate) fn config_files(global: &GlobalArgs, paths: &HubPaths) -> anyhow::Result<ConfigFiles> {
    Ok(capa_host::config_files(
        global.config.as_deref(),
        global.project.as_deref(),
        paths,
    )?)
}

pub(crate) fn load_config(files: &ConfigFiles) -> anyhow::Result<HubConfig> {
    Ok(capa_host::load_config(files)?)
}

/// Refuses a profile `files` do not declare, naming those they do.
pub(crate) fn check_profile(files: &ConfigFiles, name: &str) -> anyhow::Result<()> {
    let config = load_config(files)?;
    if config.profiles.contains_key(name) {
        return Ok(());
    }
    anyhow::bail!(capa_config::no_such_profile(
        name,
        config.profiles.keys().map(String::as_str)
    ))
}

/// Source `source` of `config`, or an error that lists the sources it has.
pub(crate) fn configured_source<'a>(
    config: &'a HubConfig,
    source: &str,
) -> anyhow::Result<&'a capa_config::SourceConfig> {
    config
        .sources
        .iter()
        .find(|s| s.id == source)
        .ok_or_else(|| {
            let known: Vec<&str> = config.sources.iter().map(|s| s.id.as_str()).collect();
            anyhow::anyhow!(
                "no source `{source}` in the configuration{}",
                if known.is_empty() {
                    String::from(" (it declares no sources)")
                } else {
                    format!("; known sources: {}", known.join(", "))
                }
            )
        })
}

/// The running hub that reads the same files, or a hub started here (sources connected or
/// failed before it returns).
pub(crate) async fn open_hub(
    global: &GlobalArgs,
    paths: &HubPaths,
    redactor: Arc<Redactor>,
) -> anyhow::Result<OpenHub> {
    let files = config_files(global, paths)?;
    if let Some(running) = capa_host::matching_hub(paths, &files).await {
        return Ok(OpenHub::remote(running));
    }
    let config = load_config(&files)?;
    let hub = start_hub(config, paths, redactor).await?;
    hub.startup_done().await;
    Ok(OpenHub::local(hub))
}

/// Starts a hub in this process. At an interactive terminal it first asks the person to trust
/// the project file's sources that wait for it ([`ask_project_trust`]).
pub(crate) async fn start_hub(
    config: HubConfig,
    paths: &HubPaths,
    redactor: Arc<Redactor>,
) -> anyhow::Result<Arc<Hub>> {
    start_hub_asking(config, paths, redactor, crate::terminal::interactive()).await
}

/// [`start_hub`], asking about the project file's sources only when `ask` (a person is at this
/// terminal and nothing else reads its input).
pub(crate) async fn start_hub_asking(
    config: HubConfig,
    paths: &HubPaths,
    redactor: Arc<Redactor>,
    ask: bool,
) -> anyhow::Result<Arc<Hub>> {
    let hub = capa_host::start_hub(config, paths, redactor).await?;
    if ask && let Err(e) = ask_project_trust(&hub).await {
        hub.shutdown().await;
        return Err(e);
    }
    Ok(hub)
}

/// At an interactive terminal, [`ask_project_trust`]; elsewhere nothing.
pub(crate) async fn ask_if_person(hub: &Hub) -> anyhow::Result<()> {
    if crate::terminal::interactive() {
        ask_project_trust(hub).await?;
    }
    Ok(())
}

/// Asks the person at this terminal, once, whether to trust the project file's sources that
/// are new or changed since they trusted them (as `direnv allow` does); a yes records it (per
/// file, source and how it starts) and starts them. A source that replaces a global one gets
/// that source's connections only on a second, explicit yes.
async fn ask_project_trust(hub: &Hub) -> anyhow::Result<()> {
    let waiting = hub.untrusted_project_sources();
    let Some(first) = waiting.first() else {
        return Ok(());
    };
    eprintln!("This project file wants to run:");
    eprintln!("  {}", printable(&first.file().display().to_string()));
    for untrusted in &waiting {
        let changed = if untrusted.before.is_some() {
            " (changed since you trusted it)"
        } else {
            ""
        };
        eprintln!("  {}{changed}:", untrusted.source.id);
        for line in describe_start(&untrusted.source) {
            eprintln!("    {line}");
        }
    }
    if !crate::terminal::confirm("Trust it? Its commands run as you, with your files and network")?
    {
        eprintln!(
            "Not trusted: its sources stay off. Trust them later with `capa sources confirm <id>` in this project."
        );
        return Ok(());
    }
    let mut trusted = Vec::new();
    for untrusted in &waiting {
        let id = &untrusted.source.id;
        trusted.push((
            id.clone(),
            ask_global_connections(untrusted.may_use_global_connections(), id)?,
        ));
    }
    hub.trust_project_sources(&trusted)
        .await
        .context("starting the trusted sources")?;
    hub.settled(STARTUP_LIMIT).await;
    Ok(())
}

/// Asks whether project source `id`, which replaces the global source with that id, may use
/// that source's connections (its secrets); only when `may` (it replaces one and uses secrets).
pub(crate) fn ask_global_connections(may: bool, id: &str) -> anyhow::Result<ProjectConnections> {
    let grant = may
        && crate::terminal::confirm(&format!(
            "Source `{id}` of this project replaces your global source `{id}`. Let it use that source's connections (its secrets)? Without them it gets connections of its own (`capa connections set {id} <name>`)"
        ))?;
    Ok(if grant {
        ProjectConnections::Global
    } else {
        ProjectConnections::Own
    })
}

/// How `source` starts, as lines for a person to judge: command line, environment as written
/// (`${secret:…}` references, never values), working directory; or URL and header names.
pub(crate) fn describe_start(source: &SourceConfig) -> Vec<String> {
    match &source.transport {
        SourceTransport::Stdio {
            command,
            args,
            env,
            cwd,
        } => {
            let mut lines = vec![
                std::iter::once(command.as_str())
                    .chain(args.iter().map(String::as_str))
                    .map(printable_arg)
                    .collect::<Vec<_>>()
                    .join(" "),
            ];
            lines.extend(
                env.iter()
                    .map(|(k, v)| format!("env {}={}", printable(k), printable_arg(v))),
            );
            if let Some(cwd) = cwd {
                lines.push(format!("in {}", printable(&cwd.display().to_string())));
            }
            lines
        }
        SourceTransport::Http {
            url,
            headers,
            oauth,
        } => {
            let mut lines = vec![printable(url)];
            if oauth.is_some() {
                lines.push("signs in with OAuth".to_owned());
            }
            if !headers.is_empty() {
                lines.push(format!(
                    "headers {}",
                    headers
                        .keys()
                        .map(|k| printable(k))
                        .collect::<Vec<_>>()
                        .join(", ")
                ));
            }
            lines
        }
        SourceTransport::OpenApi {
            spec,
            base_url,
            headers,
            auth,
        } => {
            // Where the credentials go matters most: say the address requests are sent to
            // (the document's own `servers:` when `baseUrl` is not set).
            let mut lines = vec![format!("OpenAPI document {}", printable(&spec.to_string()))];
            lines.push(match base_url {
                Some(base) => format!("requests go to {}", printable(base)),
                None => "requests go to the document's first server".to_owned(),
            });
            let names: Vec<String> = auth
                .keys()
                .chain(headers.keys())
                .map(|k| printable(k))
                .collect();
            if !names.is_empty() {
                lines.push(format!("credentials {}", names.join(", ")));
            }
            lines
        }
    }
}
