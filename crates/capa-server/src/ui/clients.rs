//! The Clients page's API: each MCP client's user-wide file, connecting it to this hub with a
//! diff shown first, and undoing the last change (docs/api.md, "Clients").
//!
//! What goes into which file is `capa-install`'s ([`capa_install::user_plan`]), the same code
//! `capa install` uses. The home directory is the hub's own (`HOME`, `XDG_CONFIG_HOME`,
//! `APPDATA`, `CODEX_HOME`, `CLAUDE_CONFIG_DIR`), read on every request. Writing a client's
//! configuration is a person's act: preview, apply and undo need a UI session, not the token.
//!
//! A preview keeps its plan in memory under a random id; apply writes it only when the file still
//! holds the text the preview was made from. The last apply per client is kept in memory for
//! undo, which puts the exact previous bytes back when the file still holds what apply wrote.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use axum::Json;
use axum::extract::{Path as UrlPath, State};
use axum::http::StatusCode;
use axum::response::Response;
use capa_core::NewPairing;
use capa_install::program::this_capa_program;
use capa_install::user_plan::{self, restore};
use capa_install::{
    CapaEntry, InstallError, UserClient, UserHome, UserPlan, user_file, user_files,
};
use serde::Deserialize;
use serde_json::{Value, json};

use super::{UiSession, UiState, fail, ok, person_required};

/// How long a preview can be applied.
const PLAN_TTL: Duration = Duration::from_mins(10);
/// Previews kept at once (older ones are dropped).
const MAX_PLANS: usize = 32;

/// What a client's last apply wrote, for undo.
#[derive(Debug, Clone)]
struct Applied {
    path: PathBuf,
    before: Option<String>,
    after: Option<String>,
    /// The pairing that apply made (undo unpairs it).
    paired: Option<String>,
}

/// A previewed change, waiting for apply: the plan, and the pairing whose key it writes (made
/// when the client had no working key; stored only when the person applies).
#[derive(Debug)]
struct Planned {
    client: UserClient,
    plan: UserPlan,
    pairing: Option<NewPairing>,
    /// The pairing whose key a disconnect takes out of the file (it ends with it).
    unpairs: Option<String>,
    at: Instant,
}

/// Previews waiting for apply and the last apply per client.
#[derive(Debug, Default)]
pub(crate) struct ClientsMemory {
    inner: Mutex<Memory>,
}

#[derive(Debug, Default)]
struct Memory {
    plans: HashMap<String, Planned>,
    applied: HashMap<UserClient, Applied>,
}

impl ClientsMemory {
    fn lock(&self) -> std::sync::MutexGuard<'_, Memory> {
        self.inner
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Keeps a preview for apply, dropping expired ones and, past [`MAX_PLANS`], the oldest.
    fn keep(&self, plan_id: String, planned: Planned) {
        let mut memory = self.lock();
        memory.plans.retain(|_, p| p.at.elapsed() < PLAN_TTL);
        while memory.plans.len() >= MAX_PLANS {
            let oldest = memory
                .plans
                .iter()
                .min_by_key(|(_, p)| p.at)
                .map(|(k, _)| k.clone());
            match oldest {
                Some(key) => memory.plans.remove(&key),
                None => break,
            };
        }
        memory.plans.insert(plan_id, planned);
    }
}

fn no_home() -> Response {
    fail(
        StatusCode::SERVICE_UNAVAILABLE,
        "no_home",
        "the hub has no home directory (HOME is not set), so it cannot find the clients' files",
    )
}

fn no_program() -> Response {
    fail(
        StatusCode::SERVICE_UNAVAILABLE,
        "no_capa_program",
        "no `capa` program found beside the hub or in /usr/bin: install the package, or build it with `cargo build -p capa-cli`",
    )
}

fn install_error(error: &InstallError) -> Response {
    let (status, code) = match error {
        InstallError::Changed { .. } => (StatusCode::CONFLICT, "changed"),
        InstallError::Refused { .. } => (StatusCode::CONFLICT, "not_ours"),
        InstallError::Read { .. } | InstallError::Write { .. } => {
            (StatusCode::INTERNAL_SERVER_ERROR, "io")
        }
        _ => (StatusCode::UNPROCESSABLE_ENTITY, "unreadable"),
    };
    let mut message = error.to_string();
    if let Some(cause) = std::error::Error::source(error) {
        message.push_str(&format!(": {cause}"));
    }
    fail(status, code, message)
}

fn client_of(id: &str) -> Option<UserClient> {
    UserClient::parse(id)
}

fn unknown_client(id: &str) -> Response {
    fail(
        StatusCode::NOT_FOUND,
        "unknown_client",
        format!("no client `{id}`: use one of claude-code, claude-desktop, cursor, vscode, codex"),
    )
}

fn mcp_url(state: &UiState) -> String {
    format!("{}/mcp", state.access.origin())
}

fn one_status(state: &UiState, home: &UserHome, client: UserClient, entry: &CapaEntry) -> Value {
    status_of(state, home, &user_file(home, client), entry)
}

/// A client's status; an entry for a profile this hub does not declare (any more) needs an
/// update: `capa mcp --profile` of an unknown name exits with an error.
fn status_of(
    state: &UiState,
    home: &UserHome,
    file: &capa_install::UserFile,
    entry: &CapaEntry,
) -> Value {
    let mut status = user_plan::status(home, file, entry, Some(&mcp_url(state)));
    if status.status == user_plan::Status::Connected
        && let Some(name) = &status.profile
        && state.hub.profile(name).is_none()
    {
        status.status = user_plan::Status::Outdated;
    }
    // Whether the entry carries the key of a client paired with this hub (its own forms may
    // then answer approvals; docs/security.md, "Who may say yes").
    let paired = (status.mode == Some(user_plan::Mode::Stdio)).then(|| {
        status
            .entry
            .as_ref()
            .and_then(|e| e.client_key.as_deref())
            .and_then(|key| state.hub.pairings().owner_of(key))
    });
    let mut value = json!(status);
    if let Some(paired) = paired {
        value["paired"] = json!(paired.is_some());
        if let Some(client) = paired {
            value["pairedId"] = json!(client.id);
        }
    }
    value
}

/// The paired client whose key `file`'s `capa` entry holds, with the key.
fn paired_in_file(
    state: &UiState,
    file: &capa_install::UserFile,
) -> Option<(String, capa_core::PairedClient)> {
    let key = user_plan::client_key(file)?;
    let owner = state.hub.pairings().owner_of(&key)?;
    Some((key, owner))
}

/// The key a change of `client`'s file concerns, the pairing a connect makes (stored when the
/// change is applied) and the one a disconnect ends. Connecting pairs the client: its entry
/// carries its own key, the one the file already holds when it belongs to a client paired with
/// this hub (reconnecting keeps the pairing), else a new one. A disconnect takes the key out.
struct KeyChange {
    key: Option<String>,
    pairing: Option<NewPairing>,
    unpairs: Option<String>,
}

fn key_change(
    state: &UiState,
    file: &capa_install::UserFile,
    client: UserClient,
    connect: bool,
) -> Result<KeyChange, capa_core::PairingError> {
    let found = paired_in_file(state, file);
    if !connect {
        return Ok(KeyChange {
            key: found.as_ref().map(|(key, _)| key.clone()),
            pairing: None,
            unpairs: found.map(|(_, owner)| owner.id),
        });
    }
    if let Some((key, _)) = found {
        return Ok(KeyChange {
            key: Some(key),
            pairing: None,
            unpairs: None,
        });
    }
    let new = NewPairing::prepare(client.display_name())?;
    Ok(KeyChange {
        key: Some(new.key.clone()),
        pairing: Some(new),
        unpairs: None,
    })
}

/// `GET /api/clients`: the `capa` program and token file snippets should name, and each client
/// with its file and status.
pub(crate) async fn list(State(state): State<UiState>) -> Response {
    let program = this_capa_program();
    let token = std::path::absolute(state.hub.paths().token())
        .unwrap_or_else(|_| state.hub.paths().token());
    let home = UserHome::from_env();
    let undo: Vec<&'static str> = {
        let memory = state.clients.lock();
        UserClient::ALL
            .into_iter()
            .filter(|c| memory.applied.contains_key(c))
            .map(UserClient::as_str)
            .collect()
    };
    let clients: Vec<Value> = match (&home, &program) {
        (Some(home), Some(program)) => {
            let entry = CapaEntry::global(program);
            user_files(home)
                .into_iter()
                .map(|f| {
                    let mut status = status_of(&state, home, &f, &entry);
                    status["undo"] = json!(undo.contains(&f.client.as_str()));
                    status
                })
                .collect()
        }
        _ => Vec::new(),
    };
    ok(json!({
        "ok": true,
        "capaCommand": program,
        "tokenFile": token,
        "mcpUrl": mcp_url(&state),
        "entryName": capa_install::entry::ENTRY_NAME,
        "profiles": state.hub.profiles().iter().map(|p| p.name().to_owned()).collect::<Vec<_>>(),
        "home": home.map(|h| h.home),
        "clients": clients,
    }))
}

/// `POST /api/clients/<id>/preview {action}`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct PreviewRequest {
    action: String,
    /// For `connect`: the named profile the entry serves (`capa mcp --profile NAME`); none for
    /// the default profile.
    #[serde(default)]
    profile: Option<String>,
}

/// `POST /api/clients/<id>/apply {planId}`.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(crate) struct ApplyRequest {
    plan_id: String,
}

/// `POST /api/clients/<id>/preview {action: connect|disconnect}`: the change as a unified diff,
/// and a plan id to apply it with. Writes nothing.
pub(crate) async fn preview(
    State(state): State<UiState>,
    session: Option<axum::Extension<UiSession>>,
    UrlPath(id): UrlPath<String>,
    Json(request): Json<PreviewRequest>,
) -> Response {
    if session.is_none() {
        return person_required("Connecting a client", "capa install");
    }
    let Some(client) = client_of(&id) else {
        return unknown_client(&id);
    };
    let Some(home) = UserHome::from_env() else {
        return no_home();
    };
    let Some(program) = this_capa_program() else {
        return no_program();
    };
    if let Some(name) = &request.profile
        && state.hub.profile(name).is_none()
    {
        return fail(
            StatusCode::BAD_REQUEST,
            "unknown_profile",
            format!(
                "no profile named `{name}`: connect with one of the profiles `capa profiles list` names, or without one for the default"
            ),
        );
    }
    let file = user_file(&home, client);
    let connect = request.action == "connect";
    let KeyChange {
        key,
        pairing,
        unpairs,
    } = match key_change(&state, &file, client, connect) {
        Ok(change) => change,
        Err(e) => {
            return fail(
                StatusCode::SERVICE_UNAVAILABLE,
                "no_randomness",
                e.to_string(),
            );
        }
    };
    let mut entry = CapaEntry::global_profile(&program, request.profile.as_deref());
    if let (true, Some(key)) = (connect, &key) {
        entry = entry.with_client_key(key.clone());
    }
    let planned = match request.action.as_str() {
        "connect" => UserPlan::connect(&file, &entry),
        "disconnect" => UserPlan::disconnect(&file),
        _ => {
            return fail(
                StatusCode::BAD_REQUEST,
                "invalid_arguments",
                "`action` must be connect or disconnect",
            );
        }
    };
    let plan = match planned {
        Ok(plan) => plan,
        Err(e) => return install_error(&e),
    };
    let Some(plan_id) = capa_core::digest::random_hex(16) else {
        return fail(
            StatusCode::INTERNAL_SERVER_ERROR,
            "no_randomness",
            "the system gave no randomness for a plan id",
        );
    };
    let answer = json!({
        "ok": true,
        "planId": plan_id,
        "client": client.as_str(),
        "path": file.path,
        "changes": plan.changes(),
        "action": plan.action,
        "diff": capa_core::mask_client_key(&plan.diff(), key.as_deref()),
        "pairs": pairing.is_some(),
        "warning": plan.warning,
    });
    state.clients.keep(
        plan_id,
        Planned {
            client,
            plan,
            pairing,
            unpairs,
            at: Instant::now(),
        },
    );
    ok(answer)
}

/// `POST /api/clients/<id>/apply {planId}`: writes the previewed change, refused (409
/// `changed`) when the file changed since the preview.
pub(crate) async fn apply(
    State(state): State<UiState>,
    session: Option<axum::Extension<UiSession>>,
    UrlPath(id): UrlPath<String>,
    Json(request): Json<ApplyRequest>,
) -> Response {
    if session.is_none() {
        return person_required("Connecting a client", "capa install");
    }
    let Some(client) = client_of(&id) else {
        return unknown_client(&id);
    };
    let taken = {
        let mut memory = state.clients.lock();
        match memory.plans.remove(&request.plan_id) {
            Some(p) if p.client == client && p.at.elapsed() < PLAN_TTL => Some(p),
            _ => None,
        }
    };
    let Some(Planned {
        plan,
        pairing,
        unpairs,
        ..
    }) = taken
    else {
        return fail(
            StatusCode::NOT_FOUND,
            "no_plan",
            "this preview is unknown or expired: preview the change again",
        );
    };
    // The pairing is stored first, so the key is good the moment the file holds it; a write
    // that fails takes it back.
    let pairs = pairing.filter(|_| plan.changes());
    if let Some(new) = &pairs
        && let Err(e) = state.hub.pairings().record(new)
    {
        return fail(
            StatusCode::SERVICE_UNAVAILABLE,
            "store_unavailable",
            e.to_string(),
        );
    }
    if let Err(e) = plan.apply() {
        if let Some(new) = &pairs {
            let _ = state.hub.pairings().remove(&new.client.id);
        }
        return install_error(&e);
    }
    // The key left the file with the entry: its pairing ends too.
    if let Some(id) = unpairs.filter(|_| plan.changes())
        && let Err(e) = state.hub.pairings().remove(&id)
    {
        tracing::warn!(error = %e, "could not unpair the disconnected client");
    }
    if plan.changes() {
        state.clients.lock().applied.insert(
            client,
            Applied {
                path: plan.file.path.clone(),
                before: plan.old.clone(),
                after: plan.new.clone(),
                paired: pairs.map(|p| p.client.id),
            },
        );
    }
    tracing::info!(client = client.as_str(), action = ?plan.action, "client file changed from the UI");
    answer_status(&state, client, plan.changes())
}

/// `POST /api/clients/<id>/undo`: puts back the file as it was before the last apply, when it
/// still holds what that apply wrote.
pub(crate) async fn undo(
    State(state): State<UiState>,
    session: Option<axum::Extension<UiSession>>,
    UrlPath(id): UrlPath<String>,
) -> Response {
    if session.is_none() {
        return person_required("Undoing a client's change", "capa install");
    }
    let Some(client) = client_of(&id) else {
        return unknown_client(&id);
    };
    let Some(applied) = state.clients.lock().applied.get(&client).cloned() else {
        return fail(
            StatusCode::NOT_FOUND,
            "nothing_to_undo",
            "nothing to undo for this client since the hub started",
        );
    };
    if let Err(e) = restore(
        &applied.path,
        applied.after.as_deref(),
        applied.before.as_deref(),
    ) {
        return install_error(&e);
    }
    state.clients.lock().applied.remove(&client);
    if let Some(id) = &applied.paired
        && let Err(e) = state.hub.pairings().remove(id)
    {
        tracing::warn!(error = %e, "could not unpair the client whose connection was undone");
    }
    answer_status(&state, client, false)
}

fn answer_status(state: &UiState, client: UserClient, undo: bool) -> Response {
    let (Some(home), Some(program)) = (UserHome::from_env(), this_capa_program()) else {
        return ok(json!({"ok": true}));
    };
    let mut status = one_status(state, &home, client, &CapaEntry::global(&program));
    status["undo"] = json!(undo);
    ok(json!({"ok": true, "client": status}))
}
