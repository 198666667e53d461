//! The hub as the runner's [`Gateway`]: the runner reaches tools, lookups and pending inputs
//! only through this, never the hub itself. The gateway type is private to this crate, so
//! nothing outside it can turn a question into a permit through it.

use std::collections::BTreeSet;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use capa_domain::{AskingChannel, JsonObject, SharedCatalog, SourceState};
use capa_runner::{CallFailure, Gate, Gateway, Pending, Unready};
use capa_sandbox::ToolFailure;
use capa_store::ApprovalRecord;
use serde_json::Value;

use crate::authorize::{Authorization, Permit, Question};
use crate::hub::{CallContext, Hub, Profile, RelayError};
use crate::lookup::{LookupError, SearchRequest};
use crate::policy::Policy;
use crate::{CallError, CallToolResult};

/// How long a resume waits for the sources its run used to be ready, after the hub's own
/// start-up wait: a source restarting after a crash usually comes back within seconds.
pub(crate) const SOURCE_WAIT: Duration = Duration::from_secs(10);

/// The hub, seen by the runner, through the profile of the client that runs the code.
pub(crate) struct HubGateway {
    hub: Arc<Hub>,
    profile: Option<Profile>,
    /// The policy the run's globals are built from ([`Gateway::listing`]), taken once per
    /// attempt. Calls are decided on the live policy.
    listing: OnceLock<Arc<Policy>>,
}

impl HubGateway {
    pub(crate) fn new(hub: Arc<Hub>, profile: Option<Profile>) -> Self {
        Self {
            hub,
            profile,
            listing: OnceLock::new(),
        }
    }
}

impl Gateway for HubGateway {
    type Permit = Permit;
    type Question = Question;

    fn catalog(&self) -> SharedCatalog {
        self.hub.catalog()
    }

    fn source_ids(&self) -> Vec<String> {
        let policy = self.hub.policy_in(self.profile.as_ref());
        let mut ids = self.hub.source_ids();
        ids.retain(|id| policy.serves_source(id));
        ids
    }

    fn listing(&self) -> Arc<Policy> {
        self.listing
            .get_or_init(|| self.hub.policy_in(self.profile.as_ref()))
            .clone()
    }

    async fn authorize(&self, address: &str, connection: Option<&str>) -> Gate<Permit, Question> {
        match self
            .hub
            .authorize_in(address, connection, self.profile.as_ref())
            .await
        {
            Ok(Authorization::Allowed(permit)) => Gate::Allowed(permit),
            Ok(Authorization::Denied { address, .. }) => {
                Gate::Refused(call_failure(&CallError::Denied { address }))
            }
            Ok(Authorization::NeedsPerson(question)) => Gate::NeedsPerson {
                reason: question.verdict.reason.clone(),
                connection: question.connection.clone(),
                question,
            },
            Err(CallError::NeedsConnection { message, .. }) => Gate::NeedsConnection { message },
            Err(error) => Gate::Refused(call_failure(&error)),
        }
    }

    fn approved(&self, question: Question) -> Permit {
        question.approved()
    }

    async fn call(
        &self,
        permit: Permit,
        arguments: Option<JsonObject>,
        client: Option<String>,
    ) -> Result<Value, CallFailure> {
        let address = permit.tool().address.to_string();
        let context = CallContext {
            client,
            progress: None,
            asker: None,
        };
        match self.hub.call(permit, arguments, &context).await {
            Ok(result) => tool_value(&address, result).map_err(CallFailure::Failed),
            Err(CallError::NeedsConnection { message, .. }) => {
                Err(CallFailure::NeedsConnection { message })
            }
            Err(error) => Err(CallFailure::Failed(call_failure(&error))),
        }
    }

    async fn search(&self, query: String) -> Result<String, ToolFailure> {
        let request = SearchRequest {
            query,
            ..SearchRequest::default()
        };
        self.hub
            .search_in(&request, self.profile.as_ref())
            .await
            .map_err(|e| lookup_failure(&e))
    }

    async fn describe(&self, targets: Vec<String>) -> Result<String, ToolFailure> {
        self.hub
            .describe_in(&targets, self.profile.as_ref())
            .await
            .map_err(|e| lookup_failure(&e))
    }

    /// Read like `resources/read` through the same profile, not journaled: like
    /// `hub.search`, a replay reads it again.
    async fn resource(&self, uri: String) -> Result<Value, ToolFailure> {
        self.hub.startup_done().await;
        let read = self
            .hub
            .read_resource_in(self.profile.as_ref(), &uri, None)
            .await;
        match read {
            Ok(read) => serde_json::to_value(read.contents)
                .map(|contents| serde_json::json!({ "contents": contents }))
                .map_err(|e| failure("internal", e.to_string(), false)),
            Err(RelayError::Upstream(e)) => {
                Err(failure("upstream_error", e.to_string(), e.retryable()))
            }
            Err(e) => Err(failure("resource_not_found", e.to_string(), false)),
        }
    }

    fn approvals_paused(&self) -> bool {
        self.hub.approvals().paused()
    }

    fn input_recorded(
        &self,
        record: Option<&ApprovalRecord>,
        asked_in: Option<&AskingChannel>,
        claim_ms: u64,
    ) {
        if let (Some(record), Some(channel)) = (record, asked_in)
            && record.kind == capa_store::InputKind::Approval
            && let Some(claim) = self.hub.approvals().claim(
                &record.id,
                channel.clone(),
                Some(Duration::from_millis(claim_ms)),
            )
        {
            claim.keep_until_deadline();
        }
        if let Some(record) = record {
            self.hub.remember_definition(record);
        }
        self.hub.approvals().refresh_pending();
    }

    fn pending_of_run(&self, run_id: &str) -> Result<Vec<Pending>, String> {
        let pending = self
            .hub
            .approvals()
            .pending_of(run_id)
            .map_err(|e| e.to_string())?;
        Ok(pending
            .iter()
            .map(|p| Pending {
                kind: p.kind,
                item: p.envelope_item(run_id),
            })
            .collect())
    }

    async fn startup_done(&self) {
        self.hub.startup_done().await;
    }

    async fn wait_for_sources(&self, sources: BTreeSet<String>) -> Vec<Unready> {
        self.hub.wait_for_sources(&sources).await
    }
}

impl Hub {
    /// Waits, at most [`SOURCE_WAIT`], until every source in `needed` has tools in the catalog;
    /// returns the ones that still have none.
    async fn wait_for_sources(&self, needed: &BTreeSet<String>) -> Vec<Unready> {
        let mut catalog = self.watch_catalog();
        let missing = |hub: &Hub| -> Vec<String> {
            let catalog = hub.catalog();
            needed
                .iter()
                .filter(|source| {
                    !catalog
                        .tools()
                        .iter()
                        .any(|t| &t.address.namespace == *source)
                })
                .cloned()
                .collect()
        };
        let deadline = tokio::time::Instant::now() + SOURCE_WAIT;
        loop {
            let now_missing = missing(self);
            if now_missing.is_empty() {
                return Vec::new();
            }
            // A source that is not served, or waits for a person (a connection, a
            // confirmation), will not become ready by waiting.
            let statuses = self.sources().list();
            let may_come = now_missing.iter().any(|source| {
                statuses
                    .iter()
                    .any(|s| &s.id == source && s.state.may_come())
            });
            if !may_come {
                return self.unready(&now_missing);
            }
            match tokio::time::timeout_at(deadline, catalog.changed()).await {
                Ok(Ok(())) => {}
                Ok(Err(_)) | Err(_) => return self.unready(&missing(self)),
            }
        }
    }

    fn unready(&self, sources: &[String]) -> Vec<Unready> {
        let statuses = self.sources().list();
        sources
            .iter()
            .map(|source| {
                let why = match statuses.iter().find(|s| &s.id == source) {
                    None => "is not served by this hub".to_owned(),
                    Some(status) => {
                        let state = match status.state {
                            SourceState::Starting => "is still starting".to_owned(),
                            SourceState::NeedsConnection => "needs its connection".to_owned(),
                            SourceState::NeedsConfirmation => format!(
                                "waits for the person to confirm how it starts (`capa sources confirm {source}`)"
                            ),
                            other => format!("is {other}"),
                        };
                        match &status.last_error {
                            Some(error) => format!("{state}: {error}"),
                            None => state,
                        }
                    }
                };
                Unready {
                    source: source.clone(),
                    why,
                    needs_connection: statuses
                        .iter()
                        .any(|s| &s.id == source && s.state == SourceState::NeedsConnection),
                }
            })
            .collect()
    }
}

fn failure(code: &str, message: String, retryable: bool) -> ToolFailure {
    ToolFailure {
        retryable,
        ..ToolFailure::new(code, message)
    }
}

fn call_failure(error: &CallError) -> ToolFailure {
    let hint = match error {
        CallError::UnknownTool { .. } => Some("Use hub.search() to find tools.".to_owned()),
        CallError::Upstream(capa_upstream::UpstreamError::TooLarge { .. }) => Some(
            "Ask for less per call: filter, paginate or pick fields if the tool can.".to_owned(),
        ),
        _ => None,
    };
    ToolFailure {
        hint,
        ..failure(error.code(), error.to_string(), error.retryable())
    }
}

fn lookup_failure(error: &LookupError) -> ToolFailure {
    failure(error.code(), error.to_string(), error.retryable())
}

/// A tool's own error. Its structured content may say more, as OpenAPI sources' errors do:
/// an HTTP `status` (then the code is `http_error`, retryable for 408, 425, 429 and 5xx, with
/// `retryAfterSeconds` told in the hint) or `retryable: true` (a network failure). Nothing
/// else of it is trusted: the hub decides what is retryable from the status.
fn tool_error(message: String, details: Option<&Value>) -> ToolFailure {
    let status = details
        .and_then(|d| d.get("status"))
        .and_then(Value::as_u64)
        .filter(|s| (100..=599).contains(s))
        .and_then(|s| u16::try_from(s).ok());
    let Some(status) = status else {
        let retryable = details
            .and_then(|d| d.get("retryable"))
            .and_then(Value::as_bool)
            == Some(true);
        return failure("tool_error", message, retryable);
    };
    let hint = details
        .and_then(|d| d.get("retryAfterSeconds"))
        .and_then(Value::as_u64)
        .map(|s| {
            format!(
                "The service asks to wait {} s before trying again (Retry-After).",
                s.min(86_400)
            )
        });
    ToolFailure {
        status: Some(status),
        hint,
        ..failure(
            "http_error",
            message,
            matches!(status, 408 | 425 | 429 | 500..=599),
        )
    }
}

/// What a guest receives for a tool's result: its structured content when it has one, else its
/// single text block (parsed as JSON when it is JSON), else its content blocks. A result with
/// `isError` becomes a `ToolError` with the tool's own text as the message.
fn tool_value(address: &str, result: CallToolResult) -> Result<Value, ToolFailure> {
    let texts: Vec<&str> = result
        .content
        .iter()
        .filter_map(|block| block.as_text().map(|t| t.text.as_str()))
        .collect();
    if result.is_error == Some(true) {
        let message = if texts.is_empty() {
            format!("{address} reported an error")
        } else {
            texts.join("\n")
        };
        return Err(tool_error(message, result.structured_content.as_ref()));
    }
    if let Some(structured) = result.structured_content {
        return Ok(structured);
    }
    if let [text] = texts.as_slice()
        && result.content.len() == 1
    {
        return Ok(serde_json::from_str(text).unwrap_or_else(|_| Value::String((*text).to_owned())));
    }
    Ok(serde_json::to_value(&result.content).unwrap_or(Value::Null))
}
