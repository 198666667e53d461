//! What goes into a run and what comes out of it.

use std::sync::Arc;

use futures::future::BoxFuture;
use serde::{Deserialize, Serialize};

use crate::Limits;

/// One tool of a namespace, as the guest sees it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolBinding {
    /// The member name on the namespace object, a JavaScript identifier (`create_issue`).
    pub member: String,
    /// The tool address the host is called with (`github.create-issue`).
    pub address: String,
}

impl ToolBinding {
    /// The tool's name at its source (`create-issue`): `address` after the source's name and
    /// the first `.`. The namespace answers it too (`github["create-issue"]`) when it differs
    /// from `member`, without listing it.
    pub fn remote_name(&self) -> &str {
        self.address
            .split_once('.')
            .map_or(self.address.as_str(), |(_, name)| name)
    }
}

/// A source as the guest sees it: a frozen global object of async functions.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Namespace {
    /// The global's name, a JavaScript identifier (`github`).
    pub global: String,
    /// Its tools.
    pub tools: Vec<ToolBinding>,
    /// Set, to the source's name, when the source's tools are not known yet because it waits
    /// for a person (a first sign-in, a connection): then `tools` is empty and any member `m`
    /// of the global is a call of `<source>.m`, which the host pauses until the person acted.
    /// The replay after that meets the source's real tools.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unlisted_source: Option<String>,
}

/// A tool call the guest made, handed to [`Host::call`] once a concurrency slot is free.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct HostCall {
    /// 0-based order in which the guest issued tool calls in this attempt. Issue order is
    /// deterministic, so a replay of the same code and seed issues the same indices.
    pub index: u32,
    /// The tool address (`github.create_issue`); always one of the run's namespaces.
    pub address: String,
    /// The tool's input (`{}` when the guest passed none).
    pub arguments: serde_json::Value,
    /// The connection picked with `{ connection: "work" }`, if any.
    pub connection: Option<String>,
}

/// An expected failure of a tool call or hub lookup; the guest sees it as a `ToolError`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolFailure {
    /// Machine-readable code (`upstream_timeout`, `not_found`, …).
    pub code: String,
    /// Human-readable message.
    pub message: String,
    /// What the model could do about it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hint: Option<String>,
    /// An HTTP-like status, when the upstream gave one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<u16>,
    /// Whether trying again may succeed.
    #[serde(default)]
    pub retryable: bool,
}

impl ToolFailure {
    /// A failure with a code and message and nothing else.
    pub fn new(code: impl Into<String>, message: impl Into<String>) -> Self {
        ToolFailure {
            code: code.into(),
            message: message.into(),
            hint: None,
            status: None,
            retryable: false,
        }
    }
}

/// Why a host call gave the guest no value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CallStop {
    /// An expected failure: the guest sees a `ToolError` it may catch.
    Failed(ToolFailure),
    /// The call waits for a person (an approval, a connection): the run stops here, without
    /// the guest seeing anything, to be replayed from its journal once they decide.
    Suspend,
    /// The run cannot go on (for example a replay that diverged from its journal): it fails
    /// with this error, which the guest cannot catch.
    Abort(RunError),
}

impl From<ToolFailure> for CallStop {
    fn from(failure: ToolFailure) -> Self {
        CallStop::Failed(failure)
    }
}

/// What the sandbox asks of the hub. The hub's implementation goes through its catalog,
/// connections, policy and journal; tests use a fake.
pub trait Host: Send + Sync + 'static {
    /// Call a tool. Called only when a concurrency slot is free; the sandbox bounds the returned
    /// future by `upstream_timeout_ms` from that moment (the host may time out earlier itself).
    fn call(&self, call: HostCall) -> BoxFuture<'static, Result<serde_json::Value, CallStop>>;
    /// `hub.search(query)`: plain text, as the `search` MCP tool returns it.
    fn search(&self, query: String) -> BoxFuture<'static, Result<String, ToolFailure>>;
    /// `hub.describe(targets)`: TypeScript declarations, as the `describe` MCP tool returns them.
    fn describe(&self, targets: Vec<String>) -> BoxFuture<'static, Result<String, ToolFailure>>;
    /// `hub.read(handle, options)`: a piece of a result an earlier run kept whole
    /// (docs/code-mode.md, "Large results"); `options` is the guest's options object as JSON,
    /// unchecked. A host that keeps no results answers that the handle is unknown.
    fn read(
        &self,
        handle: String,
        options: String,
    ) -> BoxFuture<'static, Result<serde_json::Value, ToolFailure>> {
        let _ = options;
        Box::pin(async move {
            Err(ToolFailure::new(
                "handle_not_found",
                format!("no kept result `{handle}`: this host keeps no results"),
            ))
        })
    }
    /// `hub.resource(uri)`: a resource of the sources, as `resources/read` gives it
    /// (`{ contents: [...] }`, docs/relay.md). A host without sources has none.
    fn resource(&self, uri: String) -> BoxFuture<'static, Result<serde_json::Value, ToolFailure>> {
        Box::pin(async move {
            Err(ToolFailure::new(
                "resource_not_found",
                format!("no resource `{uri}`: this host relays no resources"),
            ))
        })
    }
}

/// One run attempt.
#[derive(Debug, Clone, PartialEq)]
pub struct RunInput {
    /// Plain JavaScript: the body of an async function (may `await` and `return`). TypeScript
    /// and the forgiving rewrites are the code pipeline's job, before this.
    pub code: String,
    /// The sources, each a frozen global.
    pub namespaces: Arc<[Namespace]>,
    /// Seeds `Math.random`, `crypto.randomUUID` and `crypto.getRandomValues`.
    pub seed: u64,
    /// Origin of the logical clock (`Date`), epoch milliseconds.
    pub clock_start_ms: i64,
    /// Limits; lowered to the spec's defaults if higher.
    pub limits: Limits,
    /// Tool calls made by earlier attempts of the run, counted against `max_calls`.
    pub calls_before: u32,
    /// Keep the whole result and logs when they do not fit inline ([`RunOutput::whole`]), for
    /// a host that hands them out as handles (`hub.read`). Logs are then held up to
    /// [`KEPT_LOG_BYTES`] instead of the inline budget.
    pub keep_whole: bool,
}

/// How many bytes of console lines a run keeps for a logs handle (as the `logs` array
/// serialises them); lines past it are dropped unread, as past the inline budget otherwise.
pub const KEPT_LOG_BYTES: usize = 1024 * 1024;

/// The whole result and logs of a run whose output was shortened to fit inline.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Whole {
    /// The returned value as it was, when the envelope's is shortened.
    pub result: Option<serde_json::Value>,
    /// Every console line held (up to [`KEPT_LOG_BYTES`]), when the envelope's are cut.
    pub logs: Option<Vec<String>>,
}

/// How a run ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RunStatus {
    /// The code returned (or finished without a return value).
    Completed,
    /// The code threw, hit a limit, or could not run.
    Failed,
    /// A call is waiting for a person ([`CallStop::Suspend`]); calls already in flight were let
    /// finish, nothing else ran.
    Suspended,
    /// The caller cancelled the run: queued calls never started, calls in flight were
    /// cancelled, the guest stopped.
    Cancelled,
}

/// Why a run failed. Codes: `code_too_large`, `syntax_error`, `runtime_error`, `compute_limit`,
/// `wall_limit`, `memory_limit`, `stack_overflow`, `max_calls`, `result_not_json`,
/// `never_settled`, `internal`, or the `code` of a `ToolError` that escaped (e.g.
/// `upstream_timeout`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RunError {
    /// Machine-readable code.
    pub code: String,
    /// The error's message.
    pub message: String,
    /// Where it happened in the model's code, or what to do about it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hint: Option<String>,
}

/// One tool call the host was asked to make, in issue order.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CallSummary {
    /// The tool address.
    pub address: String,
    /// Whether it returned a value (false: a failure, a timeout, or cancelled at the run's end).
    pub ok: bool,
    /// Wall milliseconds from leaving the queue to its outcome (real time: the one field of
    /// [`RunOutput`] that is not deterministic; see [`RunOutput::without_timings`]).
    pub ms: u64,
}

/// Which parts of the output were shortened to fit `inline_result_bytes`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct Truncated {
    /// The result was shortened (still valid JSON).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub result: bool,
    /// Log lines were dropped or cut.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub logs: bool,
}

impl Truncated {
    /// Nothing was shortened.
    pub fn is_empty(&self) -> bool {
        !self.result && !self.logs
    }
}

/// The outcome of a run attempt, shaped like the `execute` envelope's fields.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RunOutput {
    /// Completed or failed.
    pub status: RunStatus,
    /// The returned value as JSON; absent when the code returned `undefined` or failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result: Option<serde_json::Value>,
    /// Why it failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<RunError>,
    /// Console output, one entry per call; levels other than `log` prefixed (`[warn] …`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub logs: Vec<String>,
    /// Every tool call the host was asked to make, in issue order.
    #[serde(default)]
    pub calls: Vec<CallSummary>,
    /// What was shortened.
    #[serde(default, skip_serializing_if = "Truncated::is_empty")]
    pub truncated: Truncated,
    /// One line per thing the model should know (truncation, cancelled calls, …).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notices: Vec<String>,
    /// What was shortened, whole, when the input asked to keep it (`keep_whole`); never
    /// serialised: the host keeps it apart (redacted) and names it in the envelope.
    #[serde(skip)]
    pub whole: Whole,
}

impl RunOutput {
    /// A failed output with no logs or calls.
    pub fn failed(
        code: impl Into<String>,
        message: impl Into<String>,
        hint: Option<String>,
    ) -> Self {
        RunOutput {
            status: RunStatus::Failed,
            result: None,
            error: Some(RunError {
                code: code.into(),
                message: message.into(),
                hint,
            }),
            logs: Vec::new(),
            calls: Vec::new(),
            truncated: Truncated::default(),
            notices: Vec::new(),
            whole: Whole::default(),
        }
    }

    /// The same output with every call's `ms` set to 0: what a replay of the same code, seed and
    /// tool results reproduces byte for byte.
    #[must_use]
    pub fn without_timings(&self) -> RunOutput {
        let mut out = self.clone();
        for call in &mut out.calls {
            call.ms = 0;
        }
        out
    }
}
