//! Import: the MCP servers of another client's file as sources of the hub's global capabilities
//! file. One reader for the app's Import page (`/api/import/*`) and `capa sources import`.
//!
//! Every format is read as JSON with comments ([`jsonc`]): Claude Desktop's
//! `claude_desktop_config.json`, Claude Code's `.mcp.json` and `~/.claude.json` (its top-level
//! `mcpServers` and each project's), Cursor's `mcp.json` (all `mcpServers`), VS Code's `mcp.json`
//! (`servers`, entries with `type: stdio|http|sse`) and VS Code's `settings.json` (`mcp.servers`).
//! The file is bounded ([`MAX_FILE_BYTES`]), read once, never written.
//!
//! Each entry becomes an [`Imported`]: its stdio (`command`, `args`, `env`, `cwd`) or HTTP (`url`,
//! `headers`) definition, the fields capa ignores, warnings, and the values that look like
//! secrets ([`entries`]), which the person may move into the OS keychain: the written source
//! then says `${secret:NAME}`. A secret's value is private to this module's types: it is left out
//! of their `Serialize` and `Debug`, so a preview or a log line cannot carry it.

mod entries;
mod ids;
mod jsonc;
pub mod well_known;

use std::io::Read;
use std::path::Path;

use serde::Serialize;
use serde_json::{Map, Value};

pub use entries::{Imported, Planned, SecretOffer, SecretValue, Transport, Var};
pub use ids::{source_id_for, unique_id};

/// Largest client file read: `~/.claude.json` keeps project history and grows to megabytes.
pub const MAX_FILE_BYTES: u64 = 16 * 1024 * 1024;
/// Most servers read from one file; the rest are reported, not read.
pub const MAX_SERVERS: usize = 500;

/// Why a file cannot be imported from: one sentence with the fix.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct ImportError(pub String);

/// An entry that is not imported, and why (capa's own entry, an entry that is not an object, …).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Skipped {
    pub name: String,
    pub reason: String,
}

/// What one client file holds.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Found {
    /// The format it was read as, for people ("Claude Desktop / Claude Code / Cursor", "VS Code").
    pub format: &'static str,
    pub servers: Vec<Imported>,
    pub skipped: Vec<Skipped>,
}

/// Reads `path` (at most [`MAX_FILE_BYTES`]) and its servers.
pub fn read_file(path: &Path) -> Result<Found, ImportError> {
    let shown = path.display();
    let missing = |e: std::io::Error| {
        ImportError(match e.kind() {
            std::io::ErrorKind::NotFound => format!("{shown} does not exist; check the path"),
            _ => format!("cannot read {shown}: {e}"),
        })
    };
    // Before opening: a FIFO or a device would block or never end.
    let meta = std::fs::metadata(path).map_err(missing)?;
    if meta.is_dir() {
        return Err(ImportError(format!(
            "{shown} is a directory; give the path of the client's JSON file"
        )));
    }
    if !meta.is_file() {
        return Err(ImportError(format!(
            "{shown} is not a regular file; give the path of the client's JSON file"
        )));
    }
    let file = std::fs::File::open(path).map_err(missing)?;
    let mut bytes = Vec::new();
    file.take(MAX_FILE_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| ImportError(format!("cannot read {shown}: {e}")))?;
    if bytes.len() as u64 > MAX_FILE_BYTES {
        return Err(ImportError(format!(
            "{shown} is larger than {} MiB, more than any client's MCP configuration; give the file that holds `mcpServers` or `servers`",
            MAX_FILE_BYTES / (1024 * 1024)
        )));
    }
    let text = String::from_utf8(bytes)
        .map_err(|_| ImportError(format!("{shown} is not UTF-8 text; is it the right file?")))?;
    let label = path
        .file_name()
        .map_or_else(|| shown.to_string(), |n| n.to_string_lossy().into_owned());
    read_text(&text, &label).map_err(|e| ImportError(format!("{shown}: {e}")))
}

/// Reads the servers of a client file's text; `label` (the file's name) goes into each source's
/// description.
pub fn read_text(text: &str, label: &str) -> Result<Found, ImportError> {
    let root = jsonc::parse(text).map_err(|e| ImportError(e.0))?;
    let Value::Object(root) = root else {
        return Err(ImportError(
            "the file is not a JSON object, so it holds no MCP servers".to_owned(),
        ));
    };
    let mut lists: Vec<(Option<String>, &Map<String, Value>)> = Vec::new();
    let mut format = "Claude Desktop / Claude Code / Cursor";
    if let Some(servers) = root.get("mcpServers") {
        lists.push((None, object_of(servers, "mcpServers")?));
    }
    if let Some(Value::Object(projects)) = root.get("projects") {
        // ~/.claude.json: servers Claude Code added for one project ("local" scope).
        for (project, settings) in projects {
            if let Some(servers) = settings.get("mcpServers") {
                lists.push((
                    Some(project.clone()),
                    object_of(servers, "projects.…mcpServers")?,
                ));
            }
        }
    }
    if lists.is_empty() {
        let vscode = root
            .get("servers")
            .map(|s| object_of(s, "servers"))
            .or_else(|| {
                root.get("mcp")
                    .and_then(|m| m.get("servers"))
                    .map(|s| object_of(s, "mcp.servers"))
            });
        if let Some(servers) = vscode {
            format = "VS Code";
            lists.push((None, servers?));
        }
    }
    if lists.is_empty() {
        return Err(ImportError(
            "the file has no `mcpServers` (Claude, Cursor) or `servers` (VS Code) object; give the client's MCP configuration file".to_owned(),
        ));
    }
    let mut found = Found {
        format,
        servers: Vec::new(),
        skipped: Vec::new(),
    };
    let description = format!("Imported from {label}");
    for (project, servers) in lists {
        for (name, entry) in servers {
            let key = match &project {
                Some(project) => format!("{project}::{name}"),
                None => name.clone(),
            };
            if found.servers.len() + found.skipped.len() >= MAX_SERVERS {
                found.skipped.push(Skipped {
                    name: key,
                    reason: format!("the file has more than {MAX_SERVERS} servers; only the first {MAX_SERVERS} are read"),
                });
                break;
            }
            match entries::read_entry(&key, name, project.as_deref(), entry, &description) {
                Ok(Some(imported)) => found.servers.push(imported),
                Ok(None) => found.skipped.push(Skipped {
                    name: key,
                    reason: "this is capa's own entry (the client reaches the hub through it)"
                        .to_owned(),
                }),
                Err(reason) => found.skipped.push(Skipped { name: key, reason }),
            }
        }
    }
    Ok(found)
}

fn object_of<'a>(value: &'a Value, key: &str) -> Result<&'a Map<String, Value>, ImportError> {
    value.as_object().ok_or_else(|| {
        ImportError(format!(
            "`{key}` is not a JSON object of servers; fix the file in its client first"
        ))
    })
}

#[cfg(test)]
mod tests;
