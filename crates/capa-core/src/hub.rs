//! The hub: sources kept connected, the catalog built from their tools, calls routed and recorded.
//!
//! Every frontend (MCP over stdio or HTTP, the CLI, later the desktop app) drives this one type.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, RwLock};
use std::time::{Duration, Instant};

use capa_config::{ExposureMode, HubConfig, ToolSelection};
use capa_demo::{DEMO_DESCRIPTION, DEMO_SOURCE_ID, Notes};
use capa_secrets::Keychain;
use capa_store::{CallRecord, CallStatus, Store};
use capa_upstream::{
    CallToolResult, ClientAsker, JsonObject, ProgressSink, Upstream, UpstreamEvent,
};
use futures::future::join_all;
use tokio::sync::{mpsc, watch};

use crate::approval::signals::ApprovalSignals;
use crate::authorize::answer::Permit;
use crate::clock::now_ms;
use crate::connections::ConnectionVault;
use crate::error::{CallError, StartError};
use crate::lookup::ToolIndex;
use crate::paths::HubPaths;
use crate::policy::Policy;
use crate::redact::Redactor;
use crate::state_keys::StateKeyRing;
use capa_domain::{Catalog, SharedCatalog, SourceTools, ToolDefinition};

mod abandoned_runs;
mod asking;
mod client_tasks;
mod connection_api;
mod execute;
mod kept_results;
mod lookup;
mod naming;
mod notices;
pub(crate) mod oauth;
mod openapi;
mod pins;
mod policy;
mod profiles;
mod reach;
mod redacting_asker;
mod relay;
mod replicas;
mod runs;
mod runtime;
mod sampling_gate;
mod semantic;
mod sign_in_links;
mod signals;
mod skill_files;
mod skills;
mod source_confirmation;
mod source_def;
mod source_logs;
mod sources;
mod status;
mod switches;
mod tool_text;
mod upstream_errors;

pub use crate::trust::source_digest;
pub use client_tasks::KeptTask;
pub use connection_api::Connections;
pub use naming::Naming;
pub use notices::{SourceNotice, SourceNotices, Subscribed};
pub use pins::{ChangeState, PinError, PinRef, ToolChange, accept_in_store};
pub use policy::{
    ChangedBy, confirm_policy_rule, confirm_policy_rule_removed, confirm_policy_rules,
};
pub use profiles::Profile;
pub use relay::RelayError;
pub use runs::{RunHistory, Runs};
pub use runtime::{SourceChangeError, Sources};
pub use semantic::SemanticStatus;
pub use sign_in_links::SignInLinker;
pub use skill_files::{SKILL_TARGET_PREFIX, SKILL_URI_PREFIX, SkillFile, skill_uri};
use source_def::{Origin, SourceDef, UpstreamKey};
pub use status::SourceStatus;
pub use switches::SourceSwitch;
pub use tool_text::ToolTextError;

/// What the hub needs to start.
#[derive(Debug)]
pub struct HubOptions {
    pub config: HubConfig,
    pub paths: HubPaths,
    pub redactor: Arc<Redactor>,
    pub keychain: Keychain,
    /// The database, opened by the caller (PostgreSQL, for a team hub: capa-host); `None`
    /// opens SQLite in the data dir.
    pub store: Option<Store>,
}

/// Who is calling (the connection is the [`Permit`]'s).
#[derive(Clone, Default)]
pub struct CallContext {
    /// The client's name, for history.
    pub client: Option<String>,
    /// Where the upstream's progress reports go, when the caller wants them.
    pub progress: Option<ProgressSink>,
    /// The client that answers what the source asks it during the call (sampling,
    /// elicitation), when the caller can.
    pub asker: Option<Arc<dyn ClientAsker>>,
}

impl std::fmt::Debug for CallContext {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CallContext")
            .field("client", &self.client)
            .field("progress", &self.progress.is_some())
            .field("asker", &self.asker.as_ref().map(|a| a.key().to_owned()))
            .finish()
    }
}

/// The running hub.
pub struct Hub {
    config: HubConfig,
    paths: HubPaths,
    store: Arc<Store>,
    connections: ConnectionVault,
    redactor: Arc<Redactor>,
    /// The sources served now; the API adds, replaces and removes them at run time.
    sources: RwLock<Vec<SourceDef>>,
    /// Capabilities files sources were added from at run time (see [`Hub::files`]).
    added_files: Mutex<Vec<std::path::PathBuf>>,
    notes: Notes,
    upstreams: Mutex<BTreeMap<UpstreamKey, Arc<Upstream>>>,
    problems: Mutex<BTreeMap<String, source_def::SourceProblem>>,
    /// Each source's log: its child's stderr and the hub's lines about it (in memory).
    source_logs: source_logs::SourceLogs,
    catalog: watch::Sender<SharedCatalog>,
    events: mpsc::UnboundedSender<UpstreamEvent>,
    event_task: Mutex<Option<tokio::task::JoinHandle<()>>>,
    /// Becomes true once every source has connected or failed for the first time (or
    /// [`STARTUP_LIMIT`] passed), so that a client's first `tools/list` sees every source.
    started: watch::Sender<bool>,
    /// allow / ask / deny per tool: the user's policy file, replaced when it changes.
    policy: policy::PolicyState,
    /// The tool definitions a person approved, and the tools that differ from them.
    pins: pins::PinBook,
    /// The search index of the latest catalog it was asked for.
    tool_index: tokio::sync::Mutex<Option<Arc<ToolIndex>>>,
    /// The flags of the tools' text, judged once per listing of the sources (docs/tool-text.md).
    text_flags: tool_text::FlagsCache,
    /// The sentence model and the state of the tools' vectors (search by meaning).
    semantic: Arc<semantic::SemanticState>,
    /// Runs in memory: decisions, pending count, the pause, the approval page opener.
    pub(crate) approval_signals: ApprovalSignals,
    /// Sign and open the `requestState` handed to clients.
    state_keys: StateKeyRing,
    /// Run locks and attempt slots (the runner's), and this process as runs record it.
    slots: Arc<capa_runner::RunSlots>,
    /// The recent runs' sandbox globals (made once per catalog and policy).
    namespaces: Arc<capa_runner::NamespaceCache>,
    /// Which channel asks a person about which pending input now.
    asking: Arc<crate::approval::asking::AskingRegistry>,
    /// Sign-ins a person started from the app, by source.
    sign_ins: oauth::SignIns,
    /// What makes one-time links to the hub's sign-in page (the HTTP server installs it).
    sign_in_links: sign_in_links::LinkerSlot,
    /// What the sources say that the hub passes on to its clients, and the resources it
    /// subscribed to for them.
    notices: notices::Notices,
}

/// How long the first listing may wait for sources that are still starting.
pub const STARTUP_LIMIT: Duration = Duration::from_secs(20);

impl std::fmt::Debug for Hub {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Hub")
            .field("sources", &self.source_defs().len())
            .finish_non_exhaustive()
    }
}

impl Hub {
    /// Opens the store, loads secrets into the redactor and starts every source in the background.
    #[expect(
        clippy::unused_async,
        reason = "start-up is async in the API (every frontend awaits it) though its waits now run in the background"
    )]
    pub async fn start(options: HubOptions) -> Result<Arc<Self>, StartError> {
        let HubOptions {
            mut config,
            paths,
            redactor,
            keychain,
            store,
        } = options;
        paths.ensure_private_data_dir()?;
        for warning in reach::warnings(&config.sources, &paths) {
            tracing::warn!("{warning}");
            config.warnings.push(warning);
        }
        let store = Arc::new(if let Some(store) = store {
            store
        } else {
            let db = paths.private_database().map_err(|e| StartError::Store {
                path: paths.database(),
                source: capa_store::StoreError::File(e),
            })?;
            Store::open(&db).map_err(|source| StartError::Store { path: db, source })?
        });
        let connections = ConnectionVault::new(store.clone(), keychain, redactor.clone());
        if let Err(e) = connections.load_into_redactor() {
            tracing::warn!(error = %e, "could not read stored connections; sources that need them will report it");
        }
        let sources = initial_sources(&config);
        let policy = policy::PolicyState::load(paths.policy_file(), store.clone())
            .map_err(StartError::Policy)?;
        let (events, events_rx) = mpsc::unbounded_channel();
        let (catalog, _) = watch::channel(Arc::new(Catalog::default()));
        let state_keys = StateKeyRing::new(&store, &paths.state_key());
        let slots = Arc::new(capa_runner::RunSlots::new());
        let asking = Arc::new(crate::approval::asking::AskingRegistry::new(
            store.clone(),
            slots.owner(),
        ));
        let semantic = Arc::new(semantic::SemanticState::new(&config, &paths.data_dir));
        let hub = Arc::new(Self {
            config,
            paths: paths.clone(),
            store,
            connections,
            redactor,
            sources: RwLock::new(sources),
            added_files: Mutex::new(Vec::new()),
            notes: Notes::persistent(paths.demo_notes()),
            upstreams: Mutex::new(BTreeMap::new()),
            problems: Mutex::new(BTreeMap::new()),
            source_logs: source_logs::SourceLogs::default(),
            catalog,
            events,
            event_task: Mutex::new(None),
            started: watch::channel(false).0,
            policy,
            pins: pins::PinBook::default(),
            tool_index: tokio::sync::Mutex::new(None),
            text_flags: tool_text::FlagsCache::default(),
            semantic,
            approval_signals: ApprovalSignals::new(paths.approvals_paused()),
            state_keys,
            slots,
            namespaces: Arc::default(),
            asking,
            sign_ins: oauth::SignIns::default(),
            sign_in_links: sign_in_links::LinkerSlot::default(),
            notices: notices::Notices::default(),
        });
        // The hub's own secrets are secrets too: a filesystem source rooted above the data dir
        // must not hand the token or the state key to a model.
        for key in hub.state_keys.get().keys() {
            hub.redactor.add_bytes(&key);
        }
        if let Ok(token) = std::fs::read_to_string(paths.token()) {
            hub.redactor.add(token.trim());
        }
        capa_runner::interrupt_orphans(&hub.store, hub.slots.holder(), now_ms());
        hub.follow_decisions_elsewhere();
        hub.begin_source_confirmations(&hub.config.sources);
        hub.forget_confirmations_of_off_sources();
        for source in &hub.source_defs() {
            hub.start_default(source);
        }
        let task = tokio::spawn(watch_events(Arc::downgrade(&hub), events_rx));
        if let Ok(mut slot) = hub.event_task.lock() {
            *slot = Some(task);
        }
        let starting = hub.clone();
        tokio::spawn(async move {
            starting.settled(STARTUP_LIMIT).await;
            starting.started.send_replace(true);
        });
        tokio::spawn(replicas::renew_leases_regularly(Arc::downgrade(&hub)));
        tokio::spawn(abandoned_runs::end_abandoned_runs_regularly(
            Arc::downgrade(&hub),
        ));
        if hub.config.exposure.mode == ExposureMode::Code {
            hub.prune_tool_vectors();
            tokio::spawn(lookup::keep_index_warm(Arc::downgrade(&hub)));
        }
        Ok(hub)
    }

    pub fn config(&self) -> &HubConfig {
        &self.config
    }

    /// Where the hub keeps its files (the global capabilities file among them).
    pub fn paths(&self) -> &HubPaths {
        &self.paths
    }

    pub(crate) fn redactor(&self) -> &Arc<Redactor> {
        &self.redactor
    }

    /// The policy in force now (a snapshot: it may change while the hub runs).
    pub fn policy(&self) -> Arc<Policy> {
        self.pins
            .applied_to(self.policy.snapshot(|| self.catalog()))
    }

    pub(crate) fn store(&self) -> &Arc<Store> {
        &self.store
    }

    /// The current catalog.
    pub fn catalog(&self) -> SharedCatalog {
        self.catalog.borrow().clone()
    }

    /// Notified whenever the catalog changes.
    pub fn watch_catalog(&self) -> watch::Receiver<SharedCatalog> {
        self.catalog.subscribe()
    }

    /// Waits until every source has connected or failed, at most `limit`, then rebuilds the
    /// catalog so that it reflects them.
    pub async fn settled(&self, limit: Duration) {
        let upstreams: Vec<Arc<Upstream>> = self.lock_upstreams().values().cloned().collect();
        join_all(upstreams.iter().map(|u| u.settled(limit))).await;
        self.rebuild_catalog();
    }

    /// Waits until the first start of every source is over (connected or failed), at most
    /// [`STARTUP_LIMIT`] after the hub started; returns at once afterwards.
    pub async fn startup_done(&self) {
        let mut started = self.started.subscribe();
        let _ = started.wait_for(|done| *done).await;
    }

    /// Runs the call a [`Permit`] allows (get one from [`Hub::authorize`]): routed to the
    /// source's upstream for the permit's connection, redacted where the result enters the
    /// core, and recorded.
    pub async fn call(
        &self,
        permit: Permit,
        arguments: Option<JsonObject>,
        context: &CallContext,
    ) -> Result<CallToolResult, CallError> {
        let tool = permit.tool();
        // Counted, not written out: the history needs the sizes only.
        let request_bytes = arguments
            .as_ref()
            .map_or(0, capa_domain::json_size::json_len);
        let started_at_ms = now_ms();
        let started = Instant::now();
        let upstream = self.upstream_for(&tool.address, permit.connection());
        let connection = match &upstream {
            Ok(upstream) => upstream.spec().connection.clone(),
            Err(_) => permit.connection().map(str::to_owned),
        };
        let outcome = match upstream {
            Ok(upstream) => upstream
                .call_asking(
                    &tool.remote_name,
                    arguments,
                    self.redacting_progress(context.progress.clone()),
                    context
                        .asker
                        .clone()
                        .map(|a| self.source_asker(a, &tool.address.namespace)),
                )
                .await
                .map_err(CallError::from),
            Err(e) => Err(e),
        };
        let outcome = outcome.map(|result| self.redact_result(result));
        let (status, response_bytes, error_code, error_message) = match &outcome {
            Ok(result) => (
                if result.is_error == Some(true) {
                    CallStatus::ToolError
                } else {
                    CallStatus::Ok
                },
                capa_domain::json_size::json_len(result),
                None,
                None,
            ),
            Err(e) => (
                CallStatus::Failed,
                0,
                Some(e.code().to_owned()),
                Some(self.redactor.redact(&e.to_string())),
            ),
        };
        let record = CallRecord {
            address: tool.address.to_string(),
            connection,
            client: context.client.clone(),
            started_at_ms,
            duration_ms: i64::try_from(started.elapsed().as_millis()).unwrap_or(i64::MAX),
            status,
            error_code,
            error_message,
            request_bytes: i64::try_from(request_bytes).unwrap_or(i64::MAX),
            response_bytes: i64::try_from(response_bytes).unwrap_or(i64::MAX),
        };
        self.log_call_outcome(&tool.address.namespace, &record);
        // History waits for the next group commit: nothing reads it before the next query,
        // which commits it first.
        self.store.defer_call_record(record);
        outcome.map_err(|e| match e {
            CallError::Upstream(u) => {
                CallError::Upstream(upstream_errors::redacted(&self.redactor, u))
            }
            other => other,
        })
    }

    fn redact_result(&self, result: CallToolResult) -> CallToolResult {
        if self.redactor.is_empty() {
            return result;
        }
        // JSON escapes a string character by character, and the redactor knows each secret's
        // escaped form: a secret anywhere in the result shows in its text. The text is the
        // quick look; the walk over a tree of values is only for a result that holds one.
        if serde_json::to_string(&result).is_ok_and(|text| !self.redactor.contains_secret(&text)) {
            return result;
        }
        let Ok(mut value) = serde_json::to_value(&result) else {
            return result;
        };
        self.redactor.redact_json(&mut value);
        serde_json::from_value(value).unwrap_or(result)
    }

    /// Stops every source (children included) and the event task.
    pub async fn shutdown(&self) {
        self.semantic.stop();
        let upstreams: Vec<Arc<Upstream>> = std::mem::take(&mut *self.lock_upstreams())
            .into_values()
            .collect();
        join_all(upstreams.iter().map(|u| u.shutdown())).await;
        let task = self.event_task.lock().ok().and_then(|mut t| t.take());
        if let Some(task) = task {
            task.abort();
        }
        // The process may end without dropping the store: what waits for its group commit
        // (history, read-only calls' journal entries) is written now.
        if let Err(e) = self.store.flush() {
            tracing::error!(error = %e, "could not write the last records at shutdown");
        }
    }

    fn lock_upstreams(&self) -> std::sync::MutexGuard<'_, BTreeMap<UpstreamKey, Arc<Upstream>>> {
        self.upstreams
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    fn rebuild_catalog(&self) {
        let upstreams = self.lock_upstreams().clone();
        let defs = self.source_defs();
        let tools: Vec<(&SourceDef, Vec<ToolDefinition>)> = defs
            .iter()
            .filter_map(|d| upstreams.get(&(d.id.clone(), None)).map(|u| (d, u.tools())))
            .map(|(d, tools)| (d, self.definitions(&tools)))
            .collect();
        let catalog = Catalog::build_with_skills(
            tools.iter().map(|(def, tools)| SourceTools {
                source_id: &def.id,
                selection: &def.selection,
                tools,
            }),
            self.catalog_skills(),
        );
        self.pin_listings(&tools, &catalog);
        self.catalog.send_if_modified(|current| {
            if **current == catalog {
                false
            } else {
                *current = Arc::new(catalog);
                true
            }
        });
    }
}

impl Hub {
    /// Tool definitions as they enter the core, redacted: an upstream that puts a secret in a
    /// description, title, parameter name or default leaks it to nobody (search, describe,
    /// listings and the UI all read the catalog).
    fn definitions(&self, tools: &[capa_upstream::Tool]) -> Vec<ToolDefinition> {
        tools
            .iter()
            .map(|tool| {
                // The wire form once: read for secrets, redacted in place, then the definition.
                let Ok(mut value) = serde_json::to_value(tool) else {
                    return crate::tools::definition_of(tool);
                };
                if !self.redactor.is_empty()
                    && serde_json::to_string(&value)
                        .is_ok_and(|text| self.redactor.contains_secret(&text))
                {
                    self.redactor.redact_json(&mut value);
                }
                serde_json::from_value(value).unwrap_or_else(|_| crate::tools::definition_of(tool))
            })
            .map(tool_text::for_model) // no tag characters reach a model (docs/tool-text.md)
            .collect()
    }

    /// Progress reports as they enter the core: messages redacted on the way to the caller's
    /// sink, by a relay that ends with the call.
    fn redacting_progress(&self, sink: Option<ProgressSink>) -> Option<ProgressSink> {
        let sink = sink?;
        let (relay, mut reports) = mpsc::unbounded_channel::<capa_upstream::Progress>();
        let redactor = self.redactor.clone();
        tokio::spawn(async move {
            while let Some(mut report) = reports.recv().await {
                report.message = report.message.map(|m| redactor.redact(&m));
                if sink.send(report).is_err() {
                    break;
                }
            }
        });
        Some(relay)
    }
}

/// The sources a hub starts with: the demo (unless turned off), the files' sources, and those
/// turned off.
fn initial_sources(config: &HubConfig) -> Vec<SourceDef> {
    let mut sources = Vec::new();
    if config.demo {
        sources.push(SourceDef {
            id: DEMO_SOURCE_ID.to_owned(),
            description: Some(DEMO_DESCRIPTION.to_owned()),
            selection: ToolSelection::All,
            origin: Origin::Demo,
            off: false,
        });
    }
    sources.extend(config.sources.iter().map(|s| SourceDef {
        id: s.id.clone(),
        description: s.description.clone(),
        selection: s.selection.clone(),
        origin: Origin::Config(s.clone()),
        off: false,
    }));
    sources.extend(switches::off_defs(&config.off_sources));
    sources
}

/// Rebuilds the catalog whenever an upstream reports a change. Holds only a weak reference, so a
/// dropped hub ends the task.
async fn watch_events(
    hub: std::sync::Weak<Hub>,
    mut events: mpsc::UnboundedReceiver<UpstreamEvent>,
) {
    while let Some(event) = events.recv().await {
        let Some(hub) = hub.upgrade() else { break };
        if !matches!(event, UpstreamEvent::Changed { .. }) {
            hub.pass_on(event);
            continue;
        }
        // Coalesce a burst of changes (several sources starting at once) into one rebuild;
        // what else came in the burst is passed on.
        while let Ok(next) = events.try_recv() {
            if !matches!(next, UpstreamEvent::Changed { .. }) {
                hub.pass_on(next);
            }
        }
        hub.rebuild_catalog();
        if hub.holds_anything_at_sources() {
            tokio::spawn(async move { hub.renew_at_sources().await });
        }
    }
}
