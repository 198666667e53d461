//! The one question a person at this terminal is asked about a project file found from the
//! working directory up (perhaps a cloned repository), as `direnv allow` asks: every source it
//! runs (command line, environment as written, directory) and everything else it changes in
//! what the person's hub serves (skills, profiles, options, sources replacing the person's
//! own), with control and bidirectional characters shown escaped. Asked before a hub starts for
//! the file, so that a yes applies at once; a no leaves the person's own configuration as it is.

use capa_config::{ConfigFiles, ProjectConnections, SourceConfig, SourceTransport};
use capa_core::{HubPaths, ProjectTrustQuestion};
use capa_host::RunningHubTrust;

use crate::terminal::{printable, printable_arg};

/// Asks the person at this terminal, once, to trust what of the project file of `files` waits
/// for it; a yes records it (per file: each source by how it starts, the settings by their
/// digest). A source that replaces a global one gets that source's connections only on a
/// second, explicit yes. Returns whether anything was asked.
pub(crate) async fn ask_project_trust(
    files: &ConfigFiles,
    paths: &HubPaths,
) -> anyhow::Result<bool> {
    // Read without logging its warnings: those about what is held are this question's.
    let config = capa_host::read_config(files, paths)?;
    let Some(question) = capa_host::project_trust_question(paths, &config)? else {
        return Ok(false);
    };
    print_question(&question);
    if !crate::terminal::confirm(
        "Trust it? Its commands run as you, with your files and network, and its skills and options change what your clients see",
    )? {
        eprintln!(
            "Not trusted: its sources stay off, and your own skills, profiles, options and sources stay as they are. Trust it later with `capa config trust` in this project."
        );
        return Ok(true);
    }
    let mut grants = Vec::new();
    for untrusted in &question.sources {
        let id = &untrusted.source.id;
        grants.push((
            id.clone(),
            ask_global_connections(untrusted.may_use_global_connections(), id)?,
        ));
    }
    let running = capa_host::record_project_trust(paths, files, &question, &grants).await?;
    if running == RunningHubTrust::RestartForSettings {
        eprintln!(
            "Trusted. The hub already running for this file applies its skills, profiles, options and replaced sources when it starts again (quit and reopen Capabilities, or restart `capa hub serve`); its other sources start now."
        );
    }
    Ok(true)
}

fn print_question(question: &ProjectTrustQuestion) {
    eprintln!("This project file wants to change what your hub runs and serves:");
    eprintln!("  {}", printable(&question.file.display().to_string()));
    if !question.sources.is_empty() {
        eprintln!("  It runs:");
    }
    for untrusted in &question.sources {
        let mut notes = Vec::new();
        if untrusted.before.is_some() {
            notes.push("changed since you trusted it");
        }
        if untrusted.source.scope.replaces_global() {
            notes.push("in place of your own source with this id");
        }
        let notes = if notes.is_empty() {
            String::new()
        } else {
            format!(" ({})", notes.join("; "))
        };
        eprintln!("    {}{notes}:", untrusted.source.id);
        for line in describe_start(&untrusted.source) {
            eprintln!("      {line}");
        }
    }
    if let Some(settings) = &question.settings {
        eprintln!("  It changes:");
        for item in &settings.items {
            eprintln!("    {}", printable(&item.to_string()));
        }
    }
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
