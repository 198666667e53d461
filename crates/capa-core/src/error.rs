//! Errors of the hub core.

use capa_upstream::UpstreamError;

/// Why a tool call did not produce a result.
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum CallError {
    /// No exposed tool has this address.
    #[error("unknown tool `{address}`{}", did_you_mean(.suggestions))]
    UnknownTool {
        address: String,
        suggestions: Vec<String>,
    },
    /// The user's policy denies this tool.
    #[error("tool `{address}` is denied by your policy")]
    Denied { address: String },
    /// The policy asks a person first, and this caller has no way to ask one.
    #[error("{address} needs the user's approval ({reason})")]
    ApprovalRequired { address: String, reason: String },
    /// The source needs a connection (credentials) that is not set.
    #[error("{message}")]
    NeedsConnection { source_id: String, message: String },
    /// The source is new or changed and waits for a person's confirmation.
    #[error("{message}")]
    Unconfirmed { source_id: String, message: String },
    /// The upstream did not answer.
    #[error(transparent)]
    Upstream(UpstreamError),
}

impl From<UpstreamError> for CallError {
    /// A server that wants a sign-in waits for a person, as a missing connection does.
    fn from(error: UpstreamError) -> Self {
        match error {
            UpstreamError::NeedsSignIn { source_id, reason } => Self::NeedsConnection {
                message: format!("Sign in to `{source_id}` to continue: {reason}"),
                source_id,
            },
            other => Self::Upstream(other),
        }
    }
}

fn did_you_mean(suggestions: &[String]) -> String {
    if suggestions.is_empty() {
        String::new()
    } else {
        format!("; did you mean {}?", suggestions.join(", "))
    }
}

impl CallError {
    /// A stable code for clients, the store and the UI.
    pub fn code(&self) -> &'static str {
        match self {
            Self::UnknownTool { .. } => "unknown_tool",
            Self::Denied { .. } => "denied",
            Self::ApprovalRequired { .. } => "approval_required",
            Self::NeedsConnection { .. } => "needs_connection",
            Self::Unconfirmed { .. } => "needs_confirmation",
            Self::Upstream(e) => e.code(),
        }
    }

    /// Whether the same call may succeed if tried again unchanged.
    pub fn retryable(&self) -> bool {
        match self {
            Self::Upstream(e) => e.retryable(),
            Self::UnknownTool { .. }
            | Self::Denied { .. }
            | Self::ApprovalRequired { .. }
            | Self::NeedsConnection { .. }
            | Self::Unconfirmed { .. } => false,
        }
    }
}

/// Why a connection could not be set, read or removed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ConnectionError {
    /// The request is not valid; the message says how to fix it.
    #[error("{0}")]
    Invalid(String),
    /// The keychain failed.
    #[error(transparent)]
    Keychain(#[from] capa_secrets::SecretError),
    /// The database failed.
    #[error(transparent)]
    Store(#[from] capa_store::StoreError),
}

/// Why the hub could not start.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum StartError {
    /// The data dir cannot be created, or other users may write to it.
    #[error(transparent)]
    DataDir(#[from] crate::paths::DataDirError),
    #[error("cannot open the database {}: {source}", path.display())]
    Store {
        path: std::path::PathBuf,
        #[source]
        source: capa_store::StoreError,
    },
    /// The policy file is broken; the hub does not start with a policy other than the user's.
    /// The message names the file, line and fix (not a `#[source]`: it would print twice).
    #[error("invalid policy file:\n{0}")]
    Policy(capa_config::ConfigError),
}
