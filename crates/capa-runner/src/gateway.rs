//! The runner's one way out: what it asks of the hub. The hub implements [`Gateway`]; the runner
//! never holds the hub, its store handle for runs aside (runs, journals and inputs are the
//! runner's records).
//!
//! A call is authorized before it runs and the permit it gets is the hub's own type, which only
//! the hub's authorizer makes: the runner passes it on and cannot forge one.

use std::collections::BTreeSet;
use std::future::Future;
use std::sync::Arc;

use capa_domain::{AskingChannel, JsonObject, Policy, SharedCatalog};
use capa_sandbox::ToolFailure;
use capa_store::{ApprovalRecord, InputKind};
use serde_json::Value;

/// The authorizer's answer for one call.
#[derive(Debug)]
pub enum Gate<P, Q> {
    Allowed(P),
    /// Refused; the failure says why (a denying rule, an unknown tool).
    Refused(ToolFailure),
    /// A person decides. `reason` is why they are asked; `connection` the one the policy was
    /// applied to (the requested one, else the source's default), as a person is shown it.
    NeedsPerson {
        question: Q,
        reason: String,
        connection: Option<String>,
    },
    /// The tool's source waits for a person to connect it (a first sign-in), so its tools,
    /// this one among them, are not known yet: the run waits for the connection. `message`
    /// says what the person is to do.
    NeedsConnection {
        message: String,
    },
}

/// Why a call did not give a result.
#[derive(Debug)]
pub enum CallFailure {
    /// The source has no connection (credentials) set: the run waits for one.
    NeedsConnection { message: String },
    /// Any other failure, as the guest sees it.
    Failed(ToolFailure),
}

/// A pending input of a run, for its envelope.
#[derive(Debug, Clone, PartialEq)]
pub struct Pending {
    pub kind: InputKind,
    /// The envelope's `pending` item.
    pub item: Value,
}

/// A source a run needs that the hub cannot serve now.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unready {
    pub source: String,
    /// Why, in words: "is starting", "is down: …", "is not served by this hub".
    pub why: String,
    /// It waits for a person to connect it (a first sign-in, a secret): its tools are known
    /// once they did, so a run that calls it waits for that instead of failing.
    pub needs_connection: bool,
}

/// What the runner asks of the hub.
pub trait Gateway: Send + Sync + 'static {
    /// Leave to run one call of one tool with one connection.
    type Permit: Send + 'static;
    /// A call that needs a person; a "yes" turns it into a permit.
    type Question: Send + 'static;

    /// The tools now.
    fn catalog(&self) -> SharedCatalog;

    /// The ids of the sources this hub is configured with, whether they have tools now or not.
    fn source_ids(&self) -> Vec<String>;

    /// The policy a run's globals are listed by: a tool it hides is no sandbox global.
    fn listing(&self) -> Arc<Policy>;

    /// Whether a call of `address` with `connection` may run.
    fn authorize(
        &self,
        address: &str,
        connection: Option<&str>,
    ) -> impl Future<Output = Gate<Self::Permit, Self::Question>> + Send;

    /// The permit a person's "yes" (recorded for this call, or for the tool in this run) makes
    /// of `question`.
    fn approved(&self, question: Self::Question) -> Self::Permit;

    /// Performs a permitted call; the result as the guest receives it.
    fn call(
        &self,
        permit: Self::Permit,
        arguments: Option<JsonObject>,
        client: Option<String>,
    ) -> impl Future<Output = Result<Value, CallFailure>> + Send;

    /// `hub.search(query)` in the guest.
    fn search(&self, query: String) -> impl Future<Output = Result<String, ToolFailure>> + Send;

    /// `hub.describe(targets)` in the guest.
    fn describe(
        &self,
        targets: Vec<String>,
    ) -> impl Future<Output = Result<String, ToolFailure>> + Send;

    /// `hub.resource(uri)` in the guest: a resource of the sources, `{ contents: [...] }`.
    /// A hub without sources has none.
    fn resource(&self, uri: String) -> impl Future<Output = Result<Value, ToolFailure>> + Send {
        std::future::ready(Err(ToolFailure::new(
            "resource_not_found",
            format!("no resource `{uri}`: this hub relays no resources"),
        )))
    }

    /// Whether a person paused approvals: calls that would ask are refused instead.
    fn approvals_paused(&self) -> bool;

    /// A pending input of a run was recorded (`record`; `None` when storing or reading it back
    /// failed, and it may be stored all the same): the people who decide hear of it; when the
    /// client shows its own forms (`asked_in`), a recorded approval is claimed for that client
    /// for `claim_ms`.
    fn input_recorded(
        &self,
        record: Option<&ApprovalRecord>,
        asked_in: Option<&AskingChannel>,
        claim_ms: u64,
    );

    /// The pending inputs of `run_id`, oldest first.
    fn pending_of_run(&self, run_id: &str) -> Result<Vec<Pending>, String>;

    /// Resolves once every source has connected or failed for the first time.
    fn startup_done(&self) -> impl Future<Output = ()> + Send;

    /// Waits a bounded time for `sources` to be ready; the ones that are not.
    fn wait_for_sources(
        &self,
        sources: BTreeSet<String>,
    ) -> impl Future<Output = Vec<Unready>> + Send;
}
