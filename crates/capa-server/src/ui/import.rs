//! The Import page's API: the MCP servers of another client's file, and a list of well-known
//! servers, added as sources of the global capabilities file (docs/api.md, "Import").
//!
//! Reading the file and turning its entries into sources is `capa-install`'s
//! ([`capa_install::import`]), the same code `capa sources import` uses. A source is added the way
//! the Sources page adds one ([`capa_config::config_edit::add_server`], then the hub starts it);
//! when the person moves its secrets into the keychain, they are stored as fields of the source's
//! connection `default` *before* the file is written, so a keychain failure adds nothing and the
//! source starts with its secrets. Secret values are never in an answer or a log line.
//!
//! Every route but the list of well-known servers reads a file or adds a source: a person's act,
//! so it needs a UI session (the token alone is refused).

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;
use std::sync::Arc;

use axum::Json;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use capa_config::config_edit::{self, NewServer};
use capa_install::import::{self, Found, well_known};
use capa_install::{UserClient, UserHome, user_file};
use capa_secrets::Secret;
use serde::Deserialize;
use serde_json::{Value, json};

use super::sources::{EDITS, global_file, invalid, read_text, write_text};
use super::{UiSession, UiState, fail, ok, person_required};

/// The connection an imported source's secrets are stored under.
pub(crate) const CONNECTION: &str = "default";

type Session = Option<axum::Extension<UiSession>>;

/// The refusal of a request without a UI session.
fn need_person(session: &Session, what: &str) -> Option<Response> {
    session
        .is_none()
        .then(|| person_required(what, "capa sources import <file>"))
}

/// A refusal: status, code, message.
type Refused = (StatusCode, &'static str, String);

fn refused((status, code, message): Refused) -> Response {
    fail(status, code, message)
}

/// Clients whose file import reads (Codex's TOML is not one of them).
fn importable(client: UserClient) -> bool {
    client != UserClient::Codex
}

/// `GET /api/import/clients` (UI session): each client's user-wide file and whether it exists.
pub(crate) async fn clients(session: Session) -> Response {
    if let Some(r) = need_person(&session, "Reading a client's configuration") {
        return r;
    }
    let Some(home) = UserHome::from_env() else {
        return ok(json!({"ok": true, "clients": []}));
    };
    let listed: Vec<Value> = UserClient::ALL
        .into_iter()
        .filter(|c| importable(*c))
        .map(|client| {
            let file = user_file(&home, client);
            json!({
                "client": client.as_str(),
                "name": client.display_name(),
                "path": file.path,
                "exists": file.path.is_file(),
            })
        })
        .collect();
    ok(json!({"ok": true, "clients": listed}))
}

/// Which file: a path (absolute, or `~/…`) or a client's user-wide file.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(super) struct FileChoice {
    #[serde(default)]
    path: Option<String>,
    #[serde(default)]
    client: Option<String>,
}

fn bad(message: impl Into<String>) -> Refused {
    (StatusCode::BAD_REQUEST, "invalid_arguments", message.into())
}

impl FileChoice {
    fn resolve(&self) -> Result<PathBuf, Refused> {
        let home = UserHome::from_env();
        match (self.path.as_deref().map(str::trim), self.client.as_deref()) {
            (Some(path), None) if !path.is_empty() => {
                let path = match (path.strip_prefix("~/"), &home) {
                    (Some(rest), Some(home)) => home.home.join(rest),
                    _ => PathBuf::from(path),
                };
                if path.is_absolute() {
                    Ok(path)
                } else {
                    Err(bad(format!(
                        "`{}` is not an absolute path; give the whole path (or one that starts with ~/)",
                        path.display()
                    )))
                }
            }
            (None, Some(id)) => {
                let client = UserClient::parse(id)
                    .filter(|c| importable(*c))
                    .ok_or_else(|| {
                        bad(format!(
                            "no client `{id}` to import from: use claude-desktop, claude-code, cursor or vscode, or give a path"
                        ))
                    })?;
                let home = home.ok_or_else(|| {
                    bad("the hub has no home directory, so it cannot find the client's file; give a path")
                })?;
                Ok(user_file(&home, client).path)
            }
            _ => Err(bad("give either `path` or `client`")),
        }
    }
}

/// Reads the file on a blocking thread (it may be large).
async fn read(path: PathBuf) -> Result<Found, Refused> {
    let read = tokio::task::spawn_blocking(move || import::read_file(&path)).await;
    match read {
        Ok(Ok(found)) => Ok(found),
        Ok(Err(e)) => Err((StatusCode::BAD_REQUEST, "cannot_import", e.0)),
        Err(e) => Err((StatusCode::INTERNAL_SERVER_ERROR, "internal", e.to_string())),
    }
}

/// `POST /api/import/preview {path | client}` (UI session): the servers found, the id each
/// would get (a taken one gets a number), conflicts, secrets offered (names and lengths only),
/// ignored fields, warnings and skipped entries.
pub(crate) async fn preview(
    State(state): State<UiState>,
    session: Session,
    Json(choice): Json<FileChoice>,
) -> Response {
    if let Some(r) = need_person(&session, "Importing sources") {
        return r;
    }
    let path = match choice.resolve() {
        Ok(path) => path,
        Err(r) => return refused(r),
    };
    let found = match read(path.clone()).await {
        Ok(found) => found,
        Err(r) => return refused(r),
    };
    let mut taken: BTreeSet<String> = BTreeSet::new();
    let servers: Vec<Value> = found
        .servers
        .iter()
        .map(|server| {
            let wanted = &server.suggested_id;
            let id = import::unique_id(wanted, |id| {
                state.hub.sources().has(id) || taken.contains(id)
            });
            taken.insert(id.clone());
            let conflict = (id != *wanted).then(|| {
                if state.hub.sources().has(wanted) {
                    format!("a source `{wanted}` exists already; this one would be added as `{id}`")
                } else {
                    format!("another server of this file is `{wanted}` too; this one would be added as `{id}`")
                }
            });
            let mut value = json!(server);
            if let Some(object) = value.as_object_mut() {
                object.insert("id".to_owned(), json!(id));
                object.insert("conflict".to_owned(), json!(conflict));
            }
            value
        })
        .collect();
    ok(json!({
        "ok": true,
        "file": path,
        "format": found.format,
        "servers": servers,
        "skipped": found.skipped,
    }))
}

/// One server of an apply request: its `name` (the preview's `key`), the id to add it as, and
/// whether its secrets go to the keychain.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(super) struct Pick {
    name: String,
    #[serde(default)]
    id: Option<String>,
    #[serde(default = "yes")]
    move_secrets: bool,
}

fn yes() -> bool {
    true
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(super) struct ApplyRequest {
    #[serde(default)]
    path: Option<String>,
    #[serde(default)]
    client: Option<String>,
    servers: Vec<Pick>,
}

/// `POST /api/import/apply {path | client, servers: [{name, id?, moveSecrets?}]}` (UI session):
/// adds each picked server; one that fails does not stop the others. Answers `added` (id, the
/// secret fields moved) and `failed` (the error).
pub(crate) async fn apply(
    State(state): State<UiState>,
    session: Session,
    Json(request): Json<ApplyRequest>,
) -> Response {
    if let Some(r) = need_person(&session, "Importing sources") {
        return r;
    }
    let choice = FileChoice {
        path: request.path,
        client: request.client,
    };
    let path = match choice.resolve() {
        Ok(path) => path,
        Err(r) => return refused(r),
    };
    if request.servers.is_empty() {
        return refused(bad("pick at least one server to import"));
    }
    let found = match read(path.clone()).await {
        Ok(found) => found,
        Err(r) => return refused(r),
    };
    let mut added = Vec::new();
    let mut failed = Vec::new();
    for pick in request.servers {
        let Some(server) = found.servers.iter().find(|s| s.key == pick.name) else {
            failed.push(json!({"name": pick.name, "error": format!("{} has no server `{}` (any more); preview the file again", path.display(), pick.name)}));
            continue;
        };
        let id = pick.id.unwrap_or_else(|| server.suggested_id.clone());
        let plan = server.plan(&id, pick.move_secrets);
        let secrets: Vec<(String, Secret)> = plan
            .secrets
            .into_iter()
            .map(|(field, value)| (field, Secret::new(value.expose())))
            .collect();
        let fields: Vec<String> = secrets.iter().map(|(f, _)| f.clone()).collect();
        match add_source(&state, plan.server, secrets).await {
            Ok(()) => added.push(json!({"name": pick.name, "id": id, "movedSecrets": fields})),
            Err(message) => failed.push(json!({"name": pick.name, "id": id, "error": message})),
        }
    }
    tracing::info!(
        file = %path.display(),
        added = added.len(),
        failed = failed.len(),
        "sources imported from the app"
    );
    ok(json!({"ok": failed.is_empty(), "added": added, "failed": failed}))
}

/// Adds `server` to the global file and starts it, its `secrets` stored first as fields of its
/// connection [`CONNECTION`]. The error is one sentence, without any secret.
async fn add_source(
    state: &UiState,
    server: NewServer,
    secrets: Vec<(String, Secret)>,
) -> Result<(), String> {
    let id = server.id.clone();
    if !capa_config::is_source_id(&id) {
        return Err(format!(
            "`{id}` is not a valid source id: lower-case letters, digits, - and _, starting with a letter"
        ));
    }
    let _edit = EDITS.lock().await;
    if state.hub.sources().has(&id) {
        return Err(format!("a source `{id}` exists already; pick another id"));
    }
    let file = global_file(state);
    let text = match read_text(&file) {
        Ok(text) => text,
        Err(refusal) => return Err(message_of(refusal.into_response()).await),
    };
    let (edited, source) = match config_edit::add_server(&file, &text, &server) {
        Ok(edited) => edited,
        Err(e) => return Err(message_of(invalid(&e)).await),
    };
    if !secrets.is_empty() {
        let hub = Arc::clone(&state.hub);
        let config = source.clone();
        let stored = tokio::task::spawn_blocking(move || {
            for (field, secret) in secrets {
                if let Err(e) =
                    hub.connections()
                        .set(&config, CONNECTION, Some(&field), secret, false)
                {
                    // Nothing is written: take out what this attempt stored.
                    let _ = hub.connections().remove(&config.id, CONNECTION);
                    return Err(hub.redact(&e.to_string()));
                }
            }
            Ok(())
        })
        .await
        .map_err(|e| e.to_string())?;
        stored.map_err(|e| {
            format!("the secret could not go to the keychain, so nothing was added: {e}")
        })?;
    }
    if let Err(refusal) = write_text(&file, &edited) {
        return Err(message_of(refusal.into_response()).await);
    }
    state
        .hub
        .sources()
        .add(source, capa_core::ChangedBy::Person)
        .map_err(|e| e.to_string())?;
    tracing::info!(source = %id, file = %file.display(), "source added from the Import page");
    Ok(())
}

/// The message of an `{ok: false, error}` answer built by the Sources API's helpers.
async fn message_of(response: Response) -> String {
    let status = response.status();
    // The helpers' bodies are small JSON built in process; read back for one sentence.
    axum::body::to_bytes(response.into_body(), 64 * 1024)
        .await
        .ok()
        .and_then(|bytes| serde_json::from_slice::<Value>(&bytes).ok())
        .and_then(|v| v["error"]["message"].as_str().map(str::to_owned))
        .unwrap_or_else(|| format!("the capabilities file could not be changed (HTTP {status})"))
}

/// `GET /api/import/well-known`: the curated list, with the command line as shown.
pub(crate) async fn well_known_list() -> Response {
    let listed: Vec<Value> = well_known::WELL_KNOWN
        .iter()
        .map(|w| {
            let mut value = json!(w);
            if let Some(object) = value.as_object_mut() {
                object.insert("shown".to_owned(), json!(w.shown()));
            }
            value
        })
        .collect();
    ok(json!({"ok": true, "servers": listed}))
}

/// The body of `POST /api/import/well-known`.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(super) struct AddWellKnown {
    key: String,
    #[serde(default)]
    id: Option<String>,
    #[serde(default)]
    values: BTreeMap<String, String>,
    /// Wrapped in [`Secret`]s as soon as they are read; empty ones are left for later.
    #[serde(default)]
    secrets: BTreeMap<String, String>,
}

impl std::fmt::Debug for AddWellKnown {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AddWellKnown")
            .field("key", &self.key)
            .field("id", &self.id)
            .field("values", &self.values)
            .field("secrets", &self.secrets.keys().collect::<Vec<_>>())
            .finish()
    }
}

/// `POST /api/import/well-known {key, id?, values, secrets?}` (UI session): adds a server of
/// the list with the person's values; a secret given goes to the keychain first, one left
/// empty makes the source wait for a connection.
pub(crate) async fn well_known_add(
    State(state): State<UiState>,
    session: Session,
    Json(request): Json<AddWellKnown>,
) -> Response {
    if let Some(r) = need_person(&session, "Adding a source") {
        return r;
    }
    let AddWellKnown {
        key,
        id,
        values,
        secrets,
    } = request;
    let secrets: BTreeMap<String, Secret> = secrets
        .into_iter()
        .map(|(k, v)| (k, Secret::new(v)))
        .collect();
    let Some(entry) = well_known::find(&key) else {
        return refused(bad(format!("no well-known server `{key}`")));
    };
    if let Some(unknown) = secrets
        .keys()
        .find(|k| !entry.secrets.iter().any(|s| s.field == k.as_str()))
    {
        return refused(bad(format!("{} needs no secret `{unknown}`", entry.name)));
    }
    let id = id
        .map(|i| i.trim().to_owned())
        .filter(|i| !i.is_empty())
        .unwrap_or_else(|| entry.key.to_owned());
    let server = match entry.fill(&id, &values) {
        Ok(server) => server,
        Err(message) => return refused(bad(message)),
    };
    let secrets: Vec<(String, Secret)> = secrets
        .into_iter()
        .filter(|(_, v)| !v.expose().is_empty())
        .collect();
    let moved: Vec<String> = secrets.iter().map(|(f, _)| f.clone()).collect();
    match add_source(&state, server, secrets).await {
        Ok(()) => ok(json!({"ok": true, "id": id, "movedSecrets": moved})),
        Err(message) => fail(StatusCode::CONFLICT, "not_added", message),
    }
}
