//! `capa sources import <file> [--yes] [--json]`: the MCP servers of another client's file as
//! sources of the global capabilities file — the reader and the mapping of the app's Import page
//! ([`capa_install::import`]).
//!
//! Secret-looking values go to the OS keychain as fields of the source's connection `default`
//! before the file changes, and the file says `${secret:NAME}`. With a hub running, the hub adds
//! each source (as the Sources page does); without, the file is edited here. A source added this
//! way starts at once only when a person ran the command at an interactive terminal; otherwise it
//! waits for their confirmation (the app, or `capa sources confirm <id>`).

use std::collections::BTreeSet;
use std::io::{BufRead, Write};
use std::path::Path;
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::Context;
use capa_config::ProjectConnections;
use capa_config::config_edit::{self, NewServer};
use capa_core::{HubPaths, Redactor};
use capa_host::Secret;
use capa_host::running::RunningHub;
use capa_install::import::{self, Imported, Transport};
use serde_json::{Value, json};

use crate::cli::GlobalArgs;
use crate::{output, setup};

/// The connection imported secrets are stored under (the app's Import page uses the same).
const CONNECTION: &str = "default";

fn describe(server: &Imported, id: &str) -> Vec<String> {
    let mut lines = vec![format!("{} → source `{id}`", server.key)];
    match &server.transport {
        Transport::Stdio {
            command, args, env, ..
        } => {
            lines.push(format!("  {command} {}", args.join(" ")));
            for var in env {
                lines.push(match &var.secret {
                    Some(s) if s.movable => format!(
                        "  env {} = [secret, {} characters] → keychain, ${{secret:{}}}",
                        var.key, s.length, s.field
                    ),
                    Some(s) => format!(
                        "  env {} = [secret, {} characters] stays in the file",
                        var.key, s.length
                    ),
                    None => format!("  env {}={}", var.key, var.value()),
                });
            }
        }
        Transport::Http { url, headers } => {
            lines.push(format!("  {url}"));
            for var in headers {
                lines.push(match &var.secret {
                    Some(s) => format!(
                        "  header {}: [secret, {} characters]{}",
                        var.key,
                        s.length,
                        if s.movable { " → keychain" } else { "" }
                    ),
                    None => format!("  header {}: {}", var.key, var.value()),
                });
            }
        }
    }
    if !server.ignored.is_empty() {
        lines.push(format!("  ignored: {}", server.ignored.join(", ")));
    }
    lines.extend(server.warnings.iter().map(|w| format!("  note: {w}")));
    lines
}

fn ask(question: &str) -> anyhow::Result<bool> {
    eprint!("{question} [y/N] ");
    std::io::stderr().flush()?;
    let mut answer = String::new();
    std::io::stdin().lock().read_line(&mut answer)?;
    Ok(matches!(answer.trim(), "y" | "Y" | "yes" | "Yes"))
}

/// Runs `capa sources import`.
pub(super) async fn run(
    global: &GlobalArgs,
    paths: &HubPaths,
    redactor: Arc<Redactor>,
    file: &Path,
    yes: bool,
    json: bool,
) -> anyhow::Result<ExitCode> {
    let found = import::read_file(file).map_err(|e| anyhow::anyhow!(e.0))?;
    let files = setup::config_files(global, paths)?;
    let config = setup::load_config(&files, paths)?;
    let mut taken: BTreeSet<String> = config
        .sources
        .iter()
        .chain(&config.off_sources)
        .map(|s| s.id.clone())
        .collect();
    let picked: Vec<(&Imported, String)> = found
        .servers
        .iter()
        .map(|server| {
            let id = import::unique_id(&server.suggested_id, |id| taken.contains(id));
            taken.insert(id.clone());
            (server, id)
        })
        .collect();
    let person = crate::terminal::interactive();
    if json && !yes {
        let servers: Vec<Value> = picked
            .iter()
            .map(|(s, id)| {
                let mut v = json!(s);
                v["id"] = json!(id);
                v
            })
            .collect();
        output::json(
            &json!({"file": file, "format": found.format, "servers": servers, "skipped": found.skipped}),
        )?;
        return Ok(ExitCode::SUCCESS);
    }
    if !json {
        println!("{} ({}):", file.display(), found.format);
        for (server, id) in &picked {
            for line in describe(server, id) {
                println!("{line}");
            }
        }
        for skipped in &found.skipped {
            println!("skipped {}: {}", skipped.name, skipped.reason);
        }
    }
    if picked.is_empty() {
        println!("Nothing to import.");
        return Ok(ExitCode::SUCCESS);
    }
    if !yes {
        if !person {
            println!("Run it again with --yes to import these.");
            return Ok(ExitCode::SUCCESS);
        }
        if !ask(&format!(
            "Import {} source(s) into {}?",
            picked.len(),
            paths.global_config().display()
        ))? {
            println!("Nothing imported.");
            return Ok(ExitCode::SUCCESS);
        }
    }
    let added = add_all(paths, redactor, picked, person, json).await?;
    if json {
        output::json(&json!({"added": added}))?;
    }
    Ok(ExitCode::SUCCESS)
}

/// Adds each picked server: its secrets to the keychain, then the source (through the running
/// hub, or into the file), confirmed when a person runs this.
async fn add_all(
    paths: &HubPaths,
    redactor: Arc<Redactor>,
    picked: Vec<(&Imported, String)>,
    person: bool,
    json: bool,
) -> anyhow::Result<Vec<Value>> {
    let connections = capa_host::open_connections(paths, redactor)?;
    let running = RunningHub::find(paths).await;
    let global_file = paths.global_config();
    let mut added = Vec::new();
    for (server, id) in picked {
        let plan = server.plan(&id, true);
        let text = match std::fs::read_to_string(&global_file) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
            Err(e) => return Err(e).with_context(|| format!("reading {}", global_file.display())),
        };
        let (edited, source) = config_edit::add_server(&global_file, &text, &plan.server)?;
        for (field, value) in &plan.secrets {
            connections
                .set(&source, CONNECTION, Some(field), Secret::new(value.expose()), false)
                .with_context(|| format!("storing `{field}` of `{id}` in the OS keychain (nothing of `{id}` was added)"))?;
        }
        if let Some(running) = &running {
            // The running hub edits its own file, so its edits stay serialised.
            let _: Value = running
                .post("/api/sources", &request(&plan.server))
                .await
                .with_context(|| format!("adding `{id}` in the running hub"))?;
        } else {
            write(&global_file, &edited)?;
        }
        if person {
            // The person at this terminal confirms it as written; a running hub starts it.
            capa_host::sources::confirm_source(paths, &source, ProjectConnections::Own).await?;
        }
        let moved: Vec<&str> = plan.secrets.iter().map(|(f, _)| f.as_str()).collect();
        if !json {
            println!(
                "Added `{id}`{}{}",
                if moved.is_empty() {
                    String::new()
                } else {
                    format!(" ({} in the keychain)", moved.join(", "))
                },
                if person {
                    "."
                } else {
                    "; it starts once you confirm it in the app or with `capa sources confirm` at a terminal."
                }
            );
        }
        added.push(json!({"name": server.key, "id": id, "movedSecrets": moved}));
    }
    Ok(added)
}

/// The body of `POST /api/sources` for `server`.
fn request(server: &NewServer) -> Value {
    json!({
        "id": server.id,
        "description": server.description,
        "command": server.command,
        "args": server.args,
        "env": server.env,
        "cwd": server.cwd,
        "url": server.url,
        "headers": server.headers,
    })
}

fn write(file: &Path, text: &str) -> anyhow::Result<()> {
    if let Some(dir) = file.parent() {
        std::fs::create_dir_all(dir)?;
    }
    let temp = file.with_extension("yaml.tmp");
    std::fs::write(&temp, text).with_context(|| format!("writing {}", temp.display()))?;
    std::fs::rename(&temp, file).with_context(|| format!("writing {}", file.display()))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_request_is_what_the_sources_api_takes() {
        let server = NewServer {
            id: "x".into(),
            command: Some("node".into()),
            env: [("T".to_owned(), "${secret:T}".to_owned())].into(),
            ..NewServer::default()
        };
        let body = request(&server);
        assert_eq!(body["env"]["T"], "${secret:T}");
        assert_eq!(body["command"], "node");
    }
}
