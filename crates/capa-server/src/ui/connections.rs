//! `/api/connections`: names and fields of stored connections, and setting or removing their
//! secrets. A secret is write-only: it goes to the OS keychain and is never returned or logged.

use std::sync::Arc;

use axum::Json;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::Response;
use capa_secrets::Secret;
use capa_store::ConnectionRecord;
use serde::Deserialize;
use serde_json::{Value, json};

use super::{UiState, fail, ok};

fn listed(record: &ConnectionRecord) -> Value {
    json!({
        "source": record.source,
        "name": record.name,
        "fields": record.fields,
        "default": record.is_default,
        "createdAtMs": record.created_at_ms,
        "updatedAtMs": record.updated_at_ms,
    })
}

/// `GET /api/connections`: every connection (names and field names, never values).
pub(crate) async fn list(State(state): State<UiState>) -> Response {
    match state.hub.connections().list() {
        Ok(records) => ok(json!({
            "ok": true,
            "connections": records.iter().map(listed).collect::<Vec<_>>(),
        })),
        Err(e) => fail(StatusCode::INTERNAL_SERVER_ERROR, "store", e.to_string()),
    }
}

/// The body of `PUT /api/connections`.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(super) struct SetConnection {
    pub source: String,
    pub name: String,
    #[serde(default)]
    pub field: Option<String>,
    /// Wrapped in a [`Secret`] as soon as it is read.
    pub secret: String,
    #[serde(default)]
    pub default: bool,
}

impl std::fmt::Debug for SetConnection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SetConnection")
            .field("source", &self.source)
            .field("name", &self.name)
            .field("field", &self.field)
            .field("secret", &"[secret]")
            .field("default", &self.default)
            .finish()
    }
}

/// `PUT /api/connections {source, name, field?, secret, default?}`: stores the secret in the
/// keychain, then restarts the sources that use secrets.
pub(crate) async fn set(
    State(state): State<UiState>,
    Json(request): Json<SetConnection>,
) -> Response {
    let SetConnection {
        source,
        name,
        field,
        secret,
        default,
    } = request;
    let secret = Secret::new(secret);
    let Some(config) = state.hub.sources().config(&source) else {
        return fail(
            StatusCode::NOT_FOUND,
            "not_found",
            format!("no configured source `{source}`"),
        );
    };
    let warning = field.as_deref().and_then(|f| unreferenced(&config, f));
    let hub = Arc::clone(&state.hub);
    let stored = tokio::task::spawn_blocking(move || {
        hub.connections()
            .set(&config, &name, field.as_deref(), secret, default)
    })
    .await;
    let record = match stored {
        Ok(Ok(record)) => record,
        Ok(Err(capa_core::ConnectionError::Invalid(message))) => {
            return fail(StatusCode::BAD_REQUEST, "invalid_arguments", message);
        }
        Ok(Err(e)) => {
            // Keychain errors never carry the value; redact anyway.
            let message = state.hub.redact(&e.to_string());
            return fail(StatusCode::SERVICE_UNAVAILABLE, "keychain", message);
        }
        Err(e) => return fail(StatusCode::INTERNAL_SERVER_ERROR, "internal", e.to_string()),
    };
    state.hub.connections().reload().await;
    ok(json!({"ok": true, "connection": listed(&record), "warning": warning}))
}

/// The warning for a field the source's definition does not refer to: stored, but not used.
fn unreferenced(config: &capa_config::SourceConfig, field: &str) -> Option<String> {
    let names = config.secret_names();
    if names.contains(field) {
        return None;
    }
    let place = match config.transport {
        capa_config::SourceTransport::Stdio { .. } => "its Environment (`NAME=${secret:…}`)",
        capa_config::SourceTransport::Http { .. } => "its Headers (`Name: Bearer ${secret:…}`)",
        capa_config::SourceTransport::OpenApi { .. } => {
            "its `auth:` (`scheme: ${secret:…}`) in the capabilities file"
        }
    };
    let uses = if names.is_empty() {
        "it refers to no secret".to_owned()
    } else {
        let list: Vec<String> = names.iter().map(|n| format!("${{secret:{n}}}")).collect();
        format!("it refers to {}", list.join(", "))
    };
    Some(format!(
        "Saved, but source `{}` does not use it ({uses}): write `${{secret:{field}}}` in {place} on the Sources page, or in {}.",
        config.id,
        config.file.display()
    ))
}

/// `DELETE /api/connections/<source>/<name>`: deletes its secrets and its record.
pub(crate) async fn remove(
    State(state): State<UiState>,
    Path((source, name)): Path<(String, String)>,
) -> Response {
    let hub = Arc::clone(&state.hub);
    let removed =
        tokio::task::spawn_blocking(move || hub.connections().remove(&source, &name)).await;
    match removed {
        Ok(Ok(record)) => {
            state.hub.connections().reload().await;
            ok(json!({"ok": true, "connection": listed(&record)}))
        }
        Ok(Err(capa_core::ConnectionError::Invalid(message))) => {
            fail(StatusCode::NOT_FOUND, "not_found", message)
        }
        Ok(Err(e)) => fail(StatusCode::SERVICE_UNAVAILABLE, "keychain", e.to_string()),
        Err(e) => fail(StatusCode::INTERNAL_SERVER_ERROR, "internal", e.to_string()),
    }
}
