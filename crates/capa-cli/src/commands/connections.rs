//! `capa connections set|list|remove`: secrets to the OS keychain, names to the database.

use std::io::{IsTerminal, Read};
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::{Context, bail};
use capa_core::{HubPaths, Redactor};
use capa_host::Secret;
use serde::Serialize;

use crate::cli::{ConnectionsCommand, GlobalArgs};
use crate::{output, setup};

/// A connection as `capa connections list --json` prints it.
#[derive(Serialize)]
struct Listed<'a> {
    source: &'a str,
    name: &'a str,
    default: bool,
    fields: &'a [String],
}

pub(super) async fn run(
    global: &GlobalArgs,
    paths: &HubPaths,
    redactor: Arc<Redactor>,
    command: ConnectionsCommand,
) -> anyhow::Result<ExitCode> {
    let connections = capa_host::open_connections(paths, redactor)?;
    match command {
        ConnectionsCommand::Set {
            source,
            name,
            field,
            default,
        } => {
            let files = setup::config_files(global, paths)?;
            let config = setup::load_config(&files, paths)?;
            let source_config = setup::configured_source(&config, &source)?;
            let secret = read_secret(&source, &name)?;
            let record =
                connections.set(source_config, &name, field.as_deref(), secret, default)?;
            println!(
                "Saved connection `{}` of `{source}` in the OS keychain{}.",
                record.name,
                if record.is_default { " (default)" } else { "" }
            );
            super::reload_notice::notify_running_hub(paths).await;
        }
        ConnectionsCommand::List { json } => {
            let list = connections.list()?;
            if json {
                let items: Vec<_> = list
                    .iter()
                    .map(|c| Listed {
                        source: &c.source,
                        name: &c.name,
                        default: c.is_default,
                        fields: &c.fields,
                    })
                    .collect();
                output::json(&items)?;
            } else if list.is_empty() {
                println!("No connections. Add one with `capa connections set <source> <name>`.");
            } else {
                let rows: Vec<Vec<String>> = list
                    .iter()
                    .map(|c| {
                        vec![
                            c.source.clone(),
                            if c.is_default {
                                format!("{}*", c.name)
                            } else {
                                c.name.clone()
                            },
                            c.fields.join(", "),
                        ]
                    })
                    .collect();
                output::table(&["SOURCE", "CONNECTION", "SECRETS"], &rows);
            }
        }
        ConnectionsCommand::Remove { source, name } => {
            // A source of the configuration in force (in a project: the project's own
            // connection); else the key as `capa connections list` shows it.
            let config = setup::config_files(global, paths)
                .ok()
                .and_then(|files| setup::load_config(&files, paths).ok());
            let configured = config
                .as_ref()
                .and_then(|c| c.sources.iter().find(|s| s.id == source));
            let removed = match configured {
                Some(source_config) => connections.remove_of(source_config, &name)?,
                None => connections.remove(&source, &name)?,
            };
            println!(
                "Removed connection `{name}` of `{}` and its secrets.",
                removed.source
            );
            super::reload_notice::notify_running_hub(paths).await;
        }
        ConnectionsCommand::Login {
            source,
            connection,
            no_browser,
        } => {
            return super::login::run(global, paths, &connections, &source, connection, no_browser)
                .await;
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// Reads the secret from stdin when it is piped, else from a prompt that does not echo.
fn read_secret(source: &str, name: &str) -> anyhow::Result<Secret> {
    let value = if std::io::stdin().is_terminal() {
        rpassword::prompt_password(format!(
            "Secret for connection `{name}` of `{source}` (input hidden): "
        ))
        .context("reading the secret from the terminal")?
    } else {
        let mut text = String::new();
        std::io::stdin()
            .read_to_string(&mut text)
            .context("reading the secret from stdin")?;
        text.trim_end_matches(['\n', '\r']).to_owned()
    };
    if value.is_empty() {
        bail!(
            "no secret given: pipe it on stdin (`printf %s \"$TOKEN\" | capa connections set {source} {name}`) or type it at the prompt"
        );
    }
    Ok(Secret::new(value))
}
