//! On/off switches (docs/policies.md, "Switches"):
//!
//! - `PUT /api/sources/<id>/enabled {enabled}`: writes or removes `disabled: true` in the
//!   source's entry of the global capabilities file, then stops or starts it. Turning a source
//!   on needs a person: with the bearer token alone the file says on, but the source waits in
//!   `needs_confirmation` (`state: "held"`).
//! - `PUT /api/tools/enabled {addresses, enabled}`: a tool off is a `deny` rule for its exact
//!   address in `policy.yaml`; on removes that rule. Removing a deny rule loosens the policy,
//!   so without a person it is held like any other loosening.
//! - `POST /api/sources/<id>/write-tools-off`: one `deny` rule per tool of the source that its
//!   server does not declare read-only (`readOnlyHint: true`). Annotations are untrusted hints,
//!   so "write" means "not declared read-only": a server that annotates nothing has every tool
//!   turned off.

use axum::Json;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use capa_config::config_edit;
use capa_core::{Decision, SourceSwitch};
use serde::Deserialize;
use serde_json::{Value, json};

use super::sources::{EDITS, editable, global_file, invalid, read_text, write_text};
use super::{UiSession, UiState, fail, ok};

/// At most this many addresses in one request.
const MAX_ADDRESSES: usize = 1000;

/// The body of `PUT /api/sources/<id>/enabled`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct SourceEnabled {
    pub enabled: bool,
}

/// `PUT /api/sources/<id>/enabled`.
pub(crate) async fn source_enabled(
    State(state): State<UiState>,
    session: Option<axum::Extension<UiSession>>,
    Path(id): Path<String>,
    Json(request): Json<SourceEnabled>,
) -> Response {
    let _edit = EDITS.lock().await;
    if let Err(refusal) = editable(&state, &id) {
        return refusal.into_response();
    }
    let file = global_file(&state);
    let text = match read_text(&file) {
        Ok(text) => text,
        Err(refusal) => return refusal.into_response(),
    };
    let edited = match config_edit::set_server_disabled(&file, &text, &id, !request.enabled) {
        Ok(edited) => edited,
        Err(e) => return invalid(&e),
    };
    if edited != text
        && let Err(refusal) = write_text(&file, &edited)
    {
        return refusal.into_response();
    }
    let by = UiSession::changed_by(session.as_ref());
    match state.hub.sources().switch(&id, request.enabled, by).await {
        Ok(switch) => {
            let message = match switch {
                SourceSwitch::Off => {
                    format!("{id} is off: it is stopped and none of its tools is served")
                }
                SourceSwitch::On => format!("{id} is on"),
                SourceSwitch::Held => format!(
                    "{id} is on in {}, but turning a source on needs a person: it starts once you confirm it in Capabilities (Sources page), or with `capa sources enable {id}` at a terminal",
                    file.display()
                ),
            };
            ok(json!({"ok": true, "id": id, "state": switch, "message": message}))
        }
        Err(e) => fail(StatusCode::CONFLICT, e.code(), e.to_string()),
    }
}

/// The body of `PUT /api/tools/enabled`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct ToolsEnabled {
    pub addresses: Vec<String>,
    pub enabled: bool,
}

/// `PUT /api/tools/enabled`.
pub(crate) async fn tools_enabled(
    State(state): State<UiState>,
    session: Option<axum::Extension<UiSession>>,
    Json(request): Json<ToolsEnabled>,
) -> Response {
    if request.addresses.is_empty() || request.addresses.len() > MAX_ADDRESSES {
        return fail(
            StatusCode::BAD_REQUEST,
            "invalid_arguments",
            format!("name 1 to {MAX_ADDRESSES} tool addresses in `addresses`"),
        );
    }
    let catalog = state.hub.catalog();
    if let Some(unknown) = request
        .addresses
        .iter()
        .find(|a| !catalog.tools().iter().any(|t| t.address.to_string() == **a))
    {
        return fail(
            StatusCode::NOT_FOUND,
            "unknown_tool",
            format!(
                "no tool `{}` is served now (a source that is off or not started has none)",
                state.hub.redact(unknown)
            ),
        );
    }
    let by = UiSession::changed_by(session.as_ref());
    let held = state.hub.held_policy_changes();
    for address in &request.addresses {
        let done = if request.enabled {
            // The file's exact deny rule, or one a person confirmed that the file lost since
            // (its removal is held): a person's "on" removes both.
            let switched_off = state.hub.policy().rules().iter().any(|r| {
                r.pattern == *address && r.connection.is_none() && r.decision == Decision::Deny
            }) || held.iter().any(|c| {
                c.target == *address && c.connection.is_none() && c.from == Some(Decision::Deny)
            });
            if switched_off {
                state.hub.reset_policy_rule(address, None, by).map(|_| ())
            } else {
                Ok(())
            }
        } else {
            state.hub.set_policy_rule(address, None, Decision::Deny, by)
        };
        if let Err(e) = done {
            return fail(StatusCode::BAD_REQUEST, "invalid_policy", e.to_string());
        }
    }
    ok(json!({"ok": true, "tools": tool_states(&state, &request.addresses)}))
}

/// `POST /api/sources/<id>/write-tools-off`: turns off every tool of the source that is not
/// declared read-only. Tightening only, so in force at once for anyone.
pub(crate) async fn write_tools_off(
    State(state): State<UiState>,
    session: Option<axum::Extension<UiSession>>,
    Path(id): Path<String>,
) -> Response {
    if !state.hub.sources().has(&id) {
        return fail(
            StatusCode::NOT_FOUND,
            "not_found",
            format!("no source `{id}`"),
        );
    }
    let catalog = state.hub.catalog();
    let addresses: Vec<String> = catalog
        .tools()
        .iter()
        .filter(|t| t.address.namespace == id && t.definition.read_only_hint() != Some(true))
        .map(|t| t.address.to_string())
        .collect();
    let by = UiSession::changed_by(session.as_ref());
    for address in &addresses {
        if let Err(e) = state.hub.set_policy_rule(address, None, Decision::Deny, by) {
            return fail(StatusCode::BAD_REQUEST, "invalid_policy", e.to_string());
        }
    }
    ok(json!({"ok": true, "id": id, "off": addresses, "tools": tool_states(&state, &addresses)}))
}

/// Each tool's switch as it stands now: on unless the policy denies it; `held` when the file
/// turned it on but that waits for a person.
fn tool_states(state: &UiState, addresses: &[String]) -> Vec<Value> {
    let catalog = state.hub.catalog();
    let held = state.hub.held_policy_changes();
    addresses
        .iter()
        .filter_map(|address| {
            let tool = catalog
                .tools()
                .iter()
                .find(|t| t.address.to_string() == *address)?;
            let verdict = state.hub.listing_verdict(tool);
            let enabled = verdict.decision != Decision::Deny;
            let waiting = !enabled
                && held
                    .iter()
                    .any(|c| c.target == *address && c.connection.is_none());
            Some(json!({
                "address": address,
                "enabled": enabled,
                "held": waiting,
                "reason": verdict.reason,
            }))
        })
        .collect()
}

/// The body of `PUT /api/sources/<id>/sampling`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct SamplingAllowed {
    pub allowed: bool,
}

/// `PUT /api/sources/<id>/sampling {allowed}`: whether the source may ask the client's model
/// (docs/relay.md, "Sampling needs a person's yes"). Allowing needs the UI session; taking it
/// back, the token too.
pub(crate) async fn source_sampling(
    State(state): State<UiState>,
    session: Option<axum::Extension<UiSession>>,
    Path(id): Path<String>,
    Json(request): Json<SamplingAllowed>,
) -> Response {
    if request.allowed && session.is_none() {
        return super::person_required(
            "Letting a source ask your client's model",
            &format!("capa sources allow-sampling {id}"),
        );
    }
    if !state.hub.sources().list().iter().any(|s| s.id == id) {
        return fail(
            StatusCode::NOT_FOUND,
            "unknown_source",
            format!("no source `{id}`"),
        );
    }
    match state.hub.set_sampling_allowed(&id, request.allowed) {
        Ok(()) => ok(json!({"ok": true, "id": id, "samplingAllowed": request.allowed})),
        Err(e) => fail(
            StatusCode::SERVICE_UNAVAILABLE,
            "store_unavailable",
            e.to_string(),
        ),
    }
}
