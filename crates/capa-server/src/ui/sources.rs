//! `/api/sources`: list, add, replace, remove and restart sources. Changes are written to the
//! global capabilities file by a text-level edit that keeps the user's comments
//! ([`capa_config::config_edit`]), then applied to the running hub. Sources declared in a project
//! file or a `--config` file are read-only here.

use std::collections::BTreeMap;
use std::path::{Path as FsPath, PathBuf};

use axum::Json;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use capa_config::SourceTransport;
use capa_config::config_edit::{self, NewOpenApi, NewServer};
use serde::Deserialize;
use serde_json::json;

use super::{UiSession, UiState, fail, ok};

/// The body of `POST /api/sources` and `PUT /api/sources/<id>`.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(super) struct SourceRequest {
    #[serde(default)]
    pub id: Option<String>,
    #[serde(default)]
    pub description: Option<String>,
    #[serde(default)]
    pub command: Option<String>,
    #[serde(default)]
    pub args: Vec<String>,
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    #[serde(default)]
    pub cwd: Option<String>,
    #[serde(default)]
    pub url: Option<String>,
    #[serde(default)]
    pub headers: BTreeMap<String, String>,
    /// An OpenAPI source's document (path or URL); the source is then `type: openapi`.
    #[serde(default)]
    pub spec: Option<String>,
    #[serde(default)]
    pub base_url: Option<String>,
    /// An OpenAPI source's credential per security scheme.
    #[serde(default)]
    pub auth: BTreeMap<String, String>,
}

impl SourceRequest {
    fn into_server(self, id: String) -> NewServer {
        let blank = |v: Option<String>| v.filter(|s| !s.trim().is_empty());
        NewServer {
            id,
            description: blank(self.description),
            command: blank(self.command),
            args: self.args,
            env: self.env,
            cwd: blank(self.cwd),
            url: blank(self.url),
            headers: self.headers,
            openapi: blank(self.spec).map(|spec| NewOpenApi {
                spec,
                base_url: blank(self.base_url),
                auth: self.auth,
            }),
        }
    }
}

/// `GET /api/sources`: every source with its state and, for configured ones, its definition
/// (`def`) for the edit form. Values of `env` and `headers` are shown as written in the file
/// (`${secret:…}` references), with every known secret value redacted.
pub(crate) async fn list(State(state): State<UiState>) -> Response {
    let hub = &state.hub;
    let redact_all = |values: &BTreeMap<String, String>| -> BTreeMap<String, String> {
        values
            .iter()
            .map(|(k, v)| (k.clone(), hub.redact(v)))
            .collect()
    };
    let listed: Vec<serde_json::Value> = hub
        .sources()
        .list()
        .into_iter()
        .map(|status| {
            let def = hub.sources().config(&status.id).map(|c| match &c.transport {
                SourceTransport::Stdio {
                    command,
                    args,
                    env,
                    cwd,
                } => json!({"command": command, "args": args, "env": redact_all(env), "cwd": cwd}),
                SourceTransport::Http {
                    url,
                    headers,
                    oauth,
                } => {
                    json!({"url": url, "headers": redact_all(headers), "oauth": oauth.is_some()})
                }
                SourceTransport::OpenApi {
                    spec,
                    base_url,
                    headers,
                    auth,
                } => json!({
                    "spec": spec.to_string(),
                    "baseUrl": base_url,
                    "headers": redact_all(headers),
                    "auth": redact_all(auth),
                }),
            });
            let editable = status.file.as_deref() == Some(global_file(&state).as_path());
            let mut value = json!(status);
            if let Some(object) = value.as_object_mut() {
                object.insert("def".to_owned(), def.unwrap_or(serde_json::Value::Null));
                object.insert("editable".to_owned(), json!(editable));
            }
            value
        })
        .collect();
    ok(json!(listed))
}

pub(super) fn global_file(state: &UiState) -> PathBuf {
    state.hub.paths().global_config()
}

/// A refusal, answered as `{ok: false, error}`.
pub(super) struct Refusal(StatusCode, &'static str, String);

impl IntoResponse for Refusal {
    fn into_response(self) -> Response {
        fail(self.0, self.1, self.2)
    }
}

/// Refuses a change to a source the API may not edit: the demo, or one from another file.
pub(super) fn editable(state: &UiState, id: &str) -> Result<(), Refusal> {
    if !state.hub.sources().has(id) {
        return Err(Refusal(
            StatusCode::NOT_FOUND,
            "not_found",
            format!("no source `{id}`"),
        ));
    }
    let Some(config) = state.hub.sources().config(id) else {
        return Err(Refusal(
            StatusCode::CONFLICT,
            "read_only",
            "the demo source is built in: turn it off with `options.demo: false`".to_owned(),
        ));
    };
    if config.file != global_file(state) {
        return Err(Refusal(
            StatusCode::CONFLICT,
            "read_only",
            format!(
                "source `{id}` is declared in {}; edit that file (the app edits only {})",
                config.file.display(),
                global_file(state).display()
            ),
        ));
    }
    Ok(())
}

pub(super) fn read_text(file: &FsPath) -> Result<String, Refusal> {
    match std::fs::read_to_string(file) {
        Ok(text) => Ok(text),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(String::new()),
        Err(e) => Err(Refusal(
            StatusCode::INTERNAL_SERVER_ERROR,
            "io",
            format!("cannot read {}: {e}", file.display()),
        )),
    }
}

pub(super) fn write_text(file: &FsPath, text: &str) -> Result<(), Refusal> {
    let io = |e: std::io::Error| {
        Refusal(
            StatusCode::INTERNAL_SERVER_ERROR,
            "io",
            format!("cannot write {}: {e}", file.display()),
        )
    };
    if let Some(dir) = file.parent() {
        std::fs::create_dir_all(dir).map_err(io)?;
    }
    // Write beside, then rename: a crash never leaves half a file.
    let temp = file.with_extension("yaml.tmp");
    std::fs::write(&temp, text).map_err(io)?;
    std::fs::rename(&temp, file).map_err(io)
}

pub(super) fn invalid(e: &capa_config::ConfigError) -> Response {
    fail(StatusCode::BAD_REQUEST, "invalid_config", e.to_string())
}

/// `POST /api/sources/<id>/confirm` (the UI's session only): the person confirms the source as
/// it is configured now, and it starts.
pub(crate) async fn confirm(
    State(state): State<UiState>,
    session: Option<axum::Extension<UiSession>>,
    Path(id): Path<String>,
) -> Response {
    if session.is_none() {
        return super::person_required("Confirming a source", "capa sources confirm <id>");
    }
    match state.hub.sources().confirm(&id).await {
        Ok(()) => ok(json!({"ok": true, "id": id})),
        Err(e) => fail(StatusCode::NOT_FOUND, e.code(), e.to_string()),
    }
}

/// Serialises edits of the global file (two quick requests must not lose one).
pub(super) static EDITS: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

/// `POST /api/sources`: adds a source to the global file and starts it.
pub(crate) async fn add(
    State(state): State<UiState>,
    session: Option<axum::Extension<UiSession>>,
    Json(request): Json<SourceRequest>,
) -> Response {
    let Some(id) = request.id.clone().filter(|i| !i.is_empty()) else {
        return fail(
            StatusCode::BAD_REQUEST,
            "invalid_arguments",
            "`id` is required",
        );
    };
    let _edit = EDITS.lock().await;
    if state.hub.sources().has(&id) {
        return fail(
            StatusCode::CONFLICT,
            "already_exists",
            format!("a source `{id}` exists already"),
        );
    }
    let file = global_file(&state);
    let text = match read_text(&file) {
        Ok(text) => text,
        Err(refusal) => return refusal.into_response(),
    };
    let (edited, source) = match config_edit::add_server(&file, &text, &request.into_server(id)) {
        Ok(edited) => edited,
        Err(e) => return invalid(&e),
    };
    if let Err(refusal) = write_text(&file, &edited) {
        return refusal.into_response();
    }
    let id = source.id.clone();
    if let Err(e) = state
        .hub
        .sources()
        .add(source, UiSession::changed_by(session.as_ref()))
    {
        return fail(StatusCode::CONFLICT, e.code(), e.to_string());
    }
    tracing::info!(source = %id, file = %file.display(), "source added from the app");
    ok(json!({"ok": true, "id": id, "file": file}))
}

/// `PUT /api/sources/<id>`: replaces a source of the global file (same place) and restarts it.
pub(crate) async fn replace(
    State(state): State<UiState>,
    session: Option<axum::Extension<UiSession>>,
    Path(id): Path<String>,
    Json(request): Json<SourceRequest>,
) -> Response {
    if request.id.as_ref().is_some_and(|given| *given != id) {
        return fail(
            StatusCode::BAD_REQUEST,
            "invalid_arguments",
            "the body's `id` differs from the path's; remove and add to rename a source",
        );
    }
    let _edit = EDITS.lock().await;
    if let Err(refusal) = editable(&state, &id) {
        return refusal.into_response();
    }
    let file = global_file(&state);
    let text = match read_text(&file) {
        Ok(text) => text,
        Err(refusal) => return refusal.into_response(),
    };
    let mut request = request;
    if let Some(current) = state.hub.sources().config(&id) {
        keep_redacted_values(&mut request, &current.transport, |v| state.hub.redact(v));
    }
    let (edited, source) =
        match config_edit::replace_server(&file, &text, &request.into_server(id.clone())) {
            Ok(edited) => edited,
            Err(e) => return invalid(&e),
        };
    if let Err(refusal) = write_text(&file, &edited) {
        return refusal.into_response();
    }
    if let Err(e) = state
        .hub
        .sources()
        .replace(source, UiSession::changed_by(session.as_ref()))
        .await
    {
        return fail(StatusCode::CONFLICT, e.code(), e.to_string());
    }
    ok(json!({"ok": true, "id": id, "file": file}))
}

/// The edit form got `env` and `headers` values with known secrets redacted (see `list`); a
/// value sent back unchanged must keep the real value it stands for, not become the text
/// `[redacted]`.
fn keep_redacted_values(
    request: &mut SourceRequest,
    current: &SourceTransport,
    redact: impl Fn(&str) -> String,
) {
    let restore = |sent: &mut BTreeMap<String, String>, stored: &BTreeMap<String, String>| {
        for (key, value) in sent.iter_mut() {
            if let Some(real) = stored.get(key)
                && value.contains(capa_core::redact::REDACTED)
                && redact(real) == *value
            {
                value.clone_from(real);
            }
        }
    };
    match current {
        SourceTransport::Stdio { env, .. } => restore(&mut request.env, env),
        SourceTransport::Http { headers, .. } => restore(&mut request.headers, headers),
        SourceTransport::OpenApi { headers, auth, .. } => {
            restore(&mut request.headers, headers);
            restore(&mut request.auth, auth);
        }
    }
}

/// `DELETE /api/sources/<id>`: removes a source from the global file and stops it.
pub(crate) async fn remove(State(state): State<UiState>, Path(id): Path<String>) -> Response {
    let _edit = EDITS.lock().await;
    if let Err(refusal) = editable(&state, &id) {
        return refusal.into_response();
    }
    let file = global_file(&state);
    let text = match read_text(&file) {
        Ok(text) => text,
        Err(refusal) => return refusal.into_response(),
    };
    let edited = match config_edit::remove_server(&file, &text, &id) {
        Ok(edited) => edited,
        Err(e) => return invalid(&e),
    };
    if let Err(refusal) = write_text(&file, &edited) {
        return refusal.into_response();
    }
    if let Err(e) = state.hub.sources().remove(&id).await {
        return fail(StatusCode::CONFLICT, e.code(), e.to_string());
    }
    ok(json!({"ok": true, "id": id, "file": file}))
}

/// `POST /api/sources/<id>/restart`: stops the source's servers and starts them again.
pub(crate) async fn restart(State(state): State<UiState>, Path(id): Path<String>) -> Response {
    match state.hub.sources().restart(&id).await {
        Ok(()) => ok(json!({"ok": true, "id": id})),
        Err(e) => fail(StatusCode::NOT_FOUND, e.code(), e.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_redacted_value_sent_back_keeps_the_real_one() {
        let redactor = capa_core::Redactor::new();
        redactor.add("s3cr3t-value");
        let stored: BTreeMap<String, String> = [
            ("TOKEN".to_owned(), "Bearer s3cr3t-value".to_owned()),
            ("MODE".to_owned(), "fast".to_owned()),
        ]
        .into();
        let current = SourceTransport::Stdio {
            command: "node".into(),
            args: Vec::new(),
            env: stored,
            cwd: None,
        };
        let mut request = SourceRequest {
            id: None,
            description: None,
            command: Some("node".into()),
            args: Vec::new(),
            env: [
                ("TOKEN".to_owned(), "Bearer [redacted]".to_owned()),
                ("MODE".to_owned(), "slow".to_owned()),
            ]
            .into(),
            cwd: None,
            url: None,
            headers: BTreeMap::new(),
            spec: None,
            base_url: None,
            auth: BTreeMap::new(),
        };
        keep_redacted_values(&mut request, &current, |v| redactor.redact(v));
        assert_eq!(request.env["TOKEN"], "Bearer s3cr3t-value");
        assert_eq!(request.env["MODE"], "slow", "a real edit is kept");
    }
}
