//! Connecting a client's user-wide file (see [`crate::user`]) to the global hub, or
//! disconnecting it: the file's status, the planned change and writing it.
//!
//! The global hub's entry is `<absolute capa> mcp` (no `--project`). JSON files are edited in
//! place ([`crate::json_splice`]), so only the `capa` member's bytes change; Codex's TOML goes
//! through [`crate::codex_toml`]. A `capa` entry capa did not write, or one pointing at a project,
//! is replaced only by a plan that says so in its `warning` (the person sees it with the diff);
//! disconnecting takes out only an entry capa wrote. A user's file is never deleted.

use std::io::Read;
use std::path::Path;

use serde::Serialize;
use serde_json::Value;
use toml_edit::{DocumentMut, Item};

use crate::client::FileFormat;
use crate::codex_toml;
use crate::entry::{CLIENT_KEY_ENV, CapaEntry, ENTRY_NAME, Edit, written_by_capa};
use crate::error::InstallError;
use crate::json_splice::{Doc, DocError};
use crate::plan::{Action, write_atomically};
use crate::user::{UserClient, UserFile, UserHome};

/// Larger client files are not read (`~/.claude.json` grows with history, but not this big).
pub const MAX_FILE_BYTES: u64 = 32 * 1024 * 1024;

/// Where a client stands with the global hub.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    /// No sign of the client (no file, directory or program).
    NotInstalled,
    /// Installed, no `capa` entry.
    NotConnected,
    /// The `capa` entry runs this `capa mcp` (or is this hub's HTTP address).
    Connected,
    /// capa's entry runs `capa mcp` from another path; connecting updates it.
    Outdated,
    /// capa's entry points at one project (`capa mcp --project …`).
    Project,
    /// An entry named `capa` that capa did not write.
    Other,
    /// The file could not be read or parsed (see `error`).
    Unreadable,
}

/// How the entry reaches the hub.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    Stdio,
    Http,
}

/// A `capa` entry as found in a file.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct FoundEntry {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub command: Option<String>,
    pub args: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// `env.CAPA_CLIENT_KEY`, a paired client's key: never shown (the hub checks it and says
    /// whether the client is paired).
    #[serde(skip)]
    pub client_key: Option<String>,
}

impl FoundEntry {
    fn ours(&self) -> bool {
        let args: Vec<&str> = self.args.iter().map(String::as_str).collect();
        self.url.is_none() && written_by_capa(self.command.as_deref(), &args)
    }
}

/// One client's state, as the Clients page shows it.
#[derive(Debug, Clone, Serialize)]
pub struct ClientStatus {
    pub id: UserClient,
    pub name: &'static str,
    pub path: String,
    pub detected: bool,
    pub status: Status,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mode: Option<Mode>,
    /// The named profile a connected entry serves (`capa mcp --profile NAME`, or the hub's
    /// `/mcp/NAME`); none for the default profile (docs/profiles.md).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub profile: Option<String>,
    /// The `capa` entry in the file, when there is one (never its `env` or `headers`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub entry: Option<FoundEntry>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// The file's text, `None` when it does not exist; refused above [`MAX_FILE_BYTES`].
pub fn read_bounded(path: &Path) -> Result<Option<String>, InstallError> {
    let file = match std::fs::File::open(path) {
        Ok(file) => file,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(source) => {
            return Err(InstallError::Read {
                path: path.to_path_buf(),
                source,
            });
        }
    };
    let mut text = String::new();
    file.take(MAX_FILE_BYTES + 1)
        .read_to_string(&mut text)
        .map_err(|source| InstallError::Read {
            path: path.to_path_buf(),
            source,
        })?;
    if text.len() as u64 > MAX_FILE_BYTES {
        return Err(InstallError::TooLarge {
            path: path.to_path_buf(),
            limit: MAX_FILE_BYTES,
        });
    }
    Ok(Some(text))
}

/// The `capa` entry in `text`, if any.
pub fn find_entry(file: &UserFile, text: &str) -> Result<Option<FoundEntry>, InstallError> {
    let strings = |v: Option<&Value>| -> Vec<String> {
        v.and_then(Value::as_array)
            .map(|a| {
                a.iter()
                    .filter_map(|s| s.as_str().map(str::to_owned))
                    .collect()
            })
            .unwrap_or_default()
    };
    match file.format {
        FileFormat::Json { servers_key, .. } => {
            let (_, root) = parse_json(file, text, String::new)?;
            Ok(root
                .get(servers_key)
                .and_then(|s| s.get(ENTRY_NAME))
                .map(|e| FoundEntry {
                    command: e.get("command").and_then(Value::as_str).map(str::to_owned),
                    args: strings(e.get("args")),
                    url: e.get("url").and_then(Value::as_str).map(str::to_owned),
                    client_key: e
                        .get("env")
                        .and_then(|env| env.get(CLIENT_KEY_ENV))
                        .and_then(Value::as_str)
                        .map(str::to_owned),
                }))
        }
        FileFormat::CodexToml => {
            let doc = parse_toml(file, text)?;
            let entry = doc.get("mcp_servers").and_then(|s| s.get(ENTRY_NAME));
            Ok(entry.map(|e| FoundEntry {
                command: e.get("command").and_then(Item::as_str).map(str::to_owned),
                args: e
                    .get("args")
                    .and_then(Item::as_array)
                    .map(|a| {
                        a.iter()
                            .filter_map(|v| v.as_str().map(str::to_owned))
                            .collect()
                    })
                    .unwrap_or_default(),
                url: e.get("url").and_then(Item::as_str).map(str::to_owned),
                client_key: e
                    .get("env")
                    .and_then(|env| env.get(CLIENT_KEY_ENV))
                    .and_then(Item::as_str)
                    .map(str::to_owned),
            }))
        }
    }
}

/// The paired client's key (`env.CAPA_CLIENT_KEY`) of the `capa` entry in `file`, if it has
/// one; none when the file is missing, unreadable or holds no such entry.
pub fn client_key(file: &UserFile) -> Option<String> {
    let text = read_bounded(&file.path).ok().flatten()?;
    find_entry(file, &text).ok().flatten()?.client_key
}

/// Where `file`'s client stands: `entry` is the global hub's entry, `hub_url` the hub's MCP
/// address (an HTTP entry with it counts as connected).
pub fn status(
    home: &UserHome,
    file: &UserFile,
    entry: &CapaEntry,
    hub_url: Option<&str>,
) -> ClientStatus {
    let mut out = ClientStatus {
        id: file.client,
        name: file.client.display_name(),
        path: file.path.display().to_string(),
        detected: file.detected(home),
        status: Status::NotConnected,
        mode: None,
        profile: None,
        entry: None,
        error: None,
    };
    let found = read_bounded(&file.path).and_then(|text| match text {
        Some(text) => find_entry(file, &text),
        None => Ok(None),
    });
    match found {
        Err(e) => {
            out.status = Status::Unreadable;
            out.error = Some(e.to_string());
        }
        Ok(None) if !out.detected => out.status = Status::NotInstalled,
        Ok(None) => {}
        Ok(Some(found)) => {
            out.status = classify(&found, entry, hub_url);
            out.profile = profile_of(&found, hub_url);
            out.mode = Some(if found.url.is_some() {
                Mode::Http
            } else {
                Mode::Stdio
            });
            out.entry = Some(found);
        }
    }
    out
}

/// The named profile of a `capa` entry: the argument of `--profile`, or the last segment of a
/// URL under this hub's `/mcp/`.
fn profile_of(found: &FoundEntry, hub_url: Option<&str>) -> Option<String> {
    if let Some(url) = &found.url {
        let hub = hub_url?.trim_end_matches('/');
        let rest = url.trim_end_matches('/').strip_prefix(hub)?;
        return rest
            .strip_prefix('/')
            .filter(|name| !name.is_empty() && !name.contains('/'))
            .map(str::to_owned);
    }
    CapaEntry::global_profile_of(&found.args).flatten()
}

fn classify(found: &FoundEntry, entry: &CapaEntry, hub_url: Option<&str>) -> Status {
    if let Some(url) = &found.url {
        let same = hub_url.is_some_and(|hub| {
            hub.trim_end_matches('/') == url.trim_end_matches('/')
                || profile_of(found, Some(hub)).is_some()
        });
        return if same {
            Status::Connected
        } else {
            Status::Other
        };
    }
    if !found.ours() {
        return Status::Other;
    }
    if CapaEntry::global_profile_of(&found.args).is_none() {
        return Status::Project;
    }
    if found.command.as_deref() == Some(entry.command.as_str()) {
        Status::Connected
    } else {
        Status::Outdated
    }
}

/// One user file's planned change.
#[derive(Debug, Clone)]
pub struct UserPlan {
    pub file: UserFile,
    /// The text now; `None` when the file does not exist.
    pub old: Option<String>,
    /// The text after the change.
    pub new: Option<String>,
    pub action: Action,
    /// What a person should know before applying (an entry capa did not write is replaced).
    pub warning: Option<String>,
}

impl UserPlan {
    /// Puts the global hub's `entry` in the file.
    pub fn connect(file: &UserFile, entry: &CapaEntry) -> Result<Self, InstallError> {
        let old = read_bounded(&file.path)?;
        let text = old.as_deref().unwrap_or("");
        let found = if old.is_some() {
            find_entry(file, text)?
        } else {
            None
        };
        let warning = found.as_ref().and_then(|f| replacing(f, entry));
        let new = match file.format {
            FileFormat::Json { servers_key, typed } => {
                let hint = || {
                    format!(
                        "Fix the file, or add this under \"{servers_key}\" yourself: \"{ENTRY_NAME}\": {}",
                        Value::Object(entry.to_json(typed))
                    )
                };
                let (mut doc, root) = parse_json(file, text, hint)?;
                let existing = root.get(servers_key).and_then(|s| s.get(ENTRY_NAME));
                let mut value = entry.to_json(typed);
                // capa's own entry keeps the user's other keys (`env`); another is replaced whole.
                if let (Some(Value::Object(existing)), Some(f)) = (existing, &found)
                    && f.ours()
                {
                    let mut merged = existing.clone();
                    merged.extend(value);
                    value = merged;
                }
                entry.set_client_key_json(&mut value);
                let value = Value::Object(value);
                if existing == Some(&value) {
                    old.clone()
                } else {
                    if !doc.set(servers_key, ENTRY_NAME, &value) {
                        return Err(shape(file, servers_key));
                    }
                    Some(doc.text().to_owned())
                }
            }
            FileFormat::CodexToml => {
                let mut base = text.to_owned();
                if found.as_ref().is_some_and(|f| !f.ours()) {
                    let mut doc = parse_toml(file, text)?;
                    if let Some(servers) =
                        doc.get_mut("mcp_servers").and_then(Item::as_table_like_mut)
                    {
                        servers.remove(ENTRY_NAME);
                    }
                    base = doc.to_string();
                }
                match codex_toml::register(&file.path, Some(&base), entry)? {
                    Edit::Write(text) => Some(text),
                    _ => Some(base),
                }
            }
        };
        let action = match (&old, &new) {
            (a, b) if a == b => Action::UpToDate,
            (None, _) => Action::Created,
            _ => Action::Updated,
        };
        Ok(Self {
            file: file.clone(),
            old,
            new,
            action,
            warning,
        })
    }

    /// Takes out the `capa` entry if capa wrote it; refuses one it did not.
    pub fn disconnect(file: &UserFile) -> Result<Self, InstallError> {
        let old = read_bounded(&file.path)?;
        let text = old.as_deref().unwrap_or("");
        let found = if old.is_some() {
            find_entry(file, text)?
        } else {
            None
        };
        let new = match (&found, file.format) {
            (None, _) => old.clone(),
            (Some(f), _) if !f.ours() => {
                return Err(InstallError::Refused {
                    path: file.path.clone(),
                    message: format!(
                        "its `{ENTRY_NAME}` entry was not written by capa, so capa leaves it; take it out in {} yourself",
                        file.client.display_name()
                    ),
                });
            }
            (Some(_), FileFormat::Json { servers_key, .. }) => {
                let (mut doc, _) = parse_json(file, text, String::new)?;
                doc.remove(servers_key, ENTRY_NAME);
                Some(doc.text().to_owned())
            }
            (Some(_), FileFormat::CodexToml) => {
                match codex_toml::unregister(&file.path, text, None)? {
                    Edit::Write(text) => Some(text),
                    Edit::Emptied => Some(String::new()),
                    Edit::Unchanged | Edit::NotOurs => old.clone(),
                }
            }
        };
        let action = if new == old {
            Action::UpToDate
        } else {
            Action::Removed
        };
        Ok(Self {
            file: file.clone(),
            old,
            new,
            action,
            warning: None,
        })
    }

    /// Whether applying changes the file.
    pub fn changes(&self) -> bool {
        self.action != Action::UpToDate
    }

    /// The unified diff, the file named by its full path.
    pub fn diff(&self) -> String {
        crate::review::diff_texts(
            self.old.as_deref(),
            self.new.as_deref(),
            &self.file.path.display().to_string(),
        )
    }

    /// Writes the new text, unless the file no longer holds the text this plan was made from.
    pub fn apply(&self) -> Result<(), InstallError> {
        if read_bounded(&self.file.path)? != self.old {
            return Err(InstallError::Changed {
                path: self.file.path.clone(),
            });
        }
        match (&self.new, self.changes()) {
            (Some(text), true) => {
                write_atomically(&self.file.path, text).map_err(|source| InstallError::Write {
                    path: self.file.path.clone(),
                    source,
                })
            }
            _ => Ok(()),
        }
    }
}

/// Puts `text` back in `path` when the file still holds `expected` (undoing an apply; `text`
/// `None` removes a file the apply created).
pub fn restore(
    path: &Path,
    expected: Option<&str>,
    text: Option<&str>,
) -> Result<(), InstallError> {
    if read_bounded(path)?.as_deref() != expected {
        return Err(InstallError::Changed {
            path: path.to_path_buf(),
        });
    }
    let result = match text {
        Some(text) => write_atomically(path, text),
        None => std::fs::remove_file(path),
    };
    result.map_err(|source| InstallError::Write {
        path: path.to_path_buf(),
        source,
    })
}

fn replacing(found: &FoundEntry, entry: &CapaEntry) -> Option<String> {
    let what = match (&found.url, &found.command) {
        (Some(url), _) => url.clone(),
        (None, Some(command)) => std::iter::once(command.as_str())
            .chain(found.args.iter().map(String::as_str))
            .collect::<Vec<_>>()
            .join(" "),
        (None, None) => "nothing".to_owned(),
    };
    // The global hub's entry, for the default profile or a named one: switching profiles, or
    // the same entry again, is no replacement.
    if found.ours() && CapaEntry::global_profile_of(&found.args).is_some() {
        return (found.command.as_deref() != Some(entry.command.as_str()))
            .then(|| format!("updates capa's entry, which runs `{what}`"));
    }
    Some(if found.ours() {
        format!("replaces capa's entry for one project (`{what}`) with the global hub's")
    } else {
        format!("replaces a `{ENTRY_NAME}` entry capa did not write (`{what}`)")
    })
}

fn parse_json(
    file: &UserFile,
    text: &str,
    hint: impl FnOnce() -> String,
) -> Result<(Doc, Value), InstallError> {
    Doc::parse(text).map_err(|e| match e {
        DocError::Syntax(detail) => InstallError::NotJson {
            path: file.path.clone(),
            detail,
            hint: hint(),
        },
        DocError::NotAnObject => InstallError::Shape {
            path: file.path.clone(),
            message: "the file is not a JSON object".into(),
        },
    })
}

fn parse_toml(file: &UserFile, text: &str) -> Result<DocumentMut, InstallError> {
    text.parse()
        .map_err(|e: toml_edit::TomlError| InstallError::NotToml {
            path: file.path.clone(),
            detail: e.message().to_owned(),
        })
}

fn shape(file: &UserFile, servers_key: &str) -> InstallError {
    InstallError::Shape {
        path: file.path.clone(),
        message: format!("`{servers_key}` is not a JSON object, so capa cannot add its entry"),
    }
}
