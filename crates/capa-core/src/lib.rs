//! The hub core: sources, connections, catalog, calls, redaction and the store, with no transport
//! of its own. The MCP front (`capa-server`), the CLI and the desktop app are frontends of this
//! crate.

pub mod approval;
pub mod authorize;
mod connections;
pub mod digest;
mod error;
pub mod exposure;
mod gateway;
mod hub;
mod log_redaction;
pub mod lookup;
mod pairing;
mod paths;
mod state_keys;
mod tools;
mod trust;

// The domain's modules, under the paths the rest of the workspace has always used.
pub use capa_domain::{catalog, clock, policy, redact, tool_text};
pub use capa_runner::process;

pub use approval::{
    Approvals, AskingChannel, AskingClaim, Choice, DecideError, DirectAnswer, PageOpener,
    PendingInput, decide_in_store,
};
pub use authorize::{Authorization, Permit, Question, Refusal};
pub use capa_domain::{
    Catalog, CatalogTool, SharedCatalog, SourceTools, ToolAddress, ToolDefinition, ToolHints,
};
pub use capa_domain::{Decision, Loosening, Policy, PolicyVerdict, Redactor, Rule};
pub use capa_domain::{DefinitionPart, PinnedDefinition};
pub use capa_domain::{SourceOrigin, SourceState, is_secret_name, preview};
pub use capa_runner::{
    Envelope, EnvelopeStatus, ExecuteOptions, ExecuteRequest, INLINE_CODE_BYTES,
};
/// What a pending input waits for, and where a run stands (stored by `capa-store`).
pub use capa_store::{InputKind, RunState};
pub use capa_store::{PairedClient, Store};
pub use capa_upstream::{
    AskFuture, CallToolResult, ClientAsker, JsonObject, Progress, ProgressRouter, ProgressSink,
    SOURCE_TASK_LIFE, Tool, UpstreamError, Wanted, call_tool_with_progress,
};
pub use connections::{ConnectionVault, ResolvedConnection, is_connection_name};
pub use error::{CallError, ConnectionError, StartError};
pub use hub::oauth::{
    DEFAULT_SIGN_IN_NAME, OAuthConnection, OAuthStatus, SIGN_IN_WAIT, SignInFailure, SignInPhase,
    SignInStarted, SignInState, fill_client_secret, sign_in_request,
};
pub use hub::{
    CallContext, ChangedBy, Connections, Hub, HubOptions, Naming, Profile, RelayError, RunHistory,
    Runs, SKILL_TARGET_PREFIX, SKILL_URI_PREFIX, STARTUP_LIMIT, SemanticStatus, SignInLinker,
    SkillFile, SourceChangeError, SourceNotice, SourceNotices, SourceStatus, SourceSwitch, Sources,
    Subscribed, ToolTextError, confirm_policy_rule, confirm_policy_rule_removed,
    confirm_policy_rules, skill_uri, source_digest,
};
pub use hub::{ChangeState, KeptTask, PinError, PinRef, ToolChange, accept_in_store};
pub use log_redaction::{RedactingMakeWriter, redacting_writer};
pub use lookup::{LookupError, SearchRequest, ToolIndex, ToolMatch};
pub use pairing::{CLIENT_KEY_PREFIX, NewPairing, PairingError, Pairings, mask_client_key};
pub use paths::{
    DataDirError, HubPaths, StoreAt, StoreUrl, ensure_private_file, write_private_file,
};
pub use state_keys::{STATE_KEY_ROTATION, StateKeys};
pub use tools::{definition_of, tool_of};
pub use trust::{
    ProjectTrustQuestion, UntrustedSource, project_trust_question, record_project_trust,
    trusted_project_settings,
};
