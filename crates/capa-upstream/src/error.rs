//! Typed upstream failures.

use std::time::Duration;

/// Why an upstream call did not produce a result.
///
/// A tool that runs and reports failure (`isError: true`) is not an error here: that result is
/// passed on as it is. These are the cases where no answer came back.
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum UpstreamError {
    /// The upstream did not answer within the call's timeout. The call was cancelled upstream.
    #[error("`{source_id}` did not answer within {} ms", timeout.as_millis())]
    Timeout {
        source_id: String,
        timeout: Duration,
    },
    /// The upstream is not connected: it failed to start, crashed, or its connection dropped.
    /// The hub reconnects with backoff; trying again later may work.
    #[error("`{source_id}` is unavailable: {reason}")]
    Unavailable { source_id: String, reason: String },
    /// The upstream answered with something that breaks the protocol, or an MCP error such as an
    /// unknown tool or invalid parameters.
    #[error("`{source_id}` answered with a protocol error: {message}")]
    Protocol {
        source_id: String,
        /// JSON-RPC error code, when the upstream sent one.
        code: Option<i32>,
        message: String,
    },
}

impl UpstreamError {
    /// Whether the same call may succeed if tried again.
    pub fn retryable(&self) -> bool {
        matches!(self, Self::Timeout { .. } | Self::Unavailable { .. })
    }

    /// A stable code for clients and the store.
    /// The upstream refused the arguments (JSON-RPC `-32602`, invalid params).
    pub fn is_invalid_params(&self) -> bool {
        matches!(
            self,
            Self::Protocol {
                code: Some(-32602),
                ..
            }
        )
    }

    pub fn code(&self) -> &'static str {
        match self {
            Self::Timeout { .. } => "upstream_timeout",
            Self::Unavailable { .. } => "upstream_unavailable",
            Self::Protocol { .. } => "upstream_protocol",
        }
    }

    pub(crate) fn from_service(source_id: &str, error: rmcp::ServiceError) -> Self {
        use rmcp::ServiceError as E;
        match error {
            E::McpError(data) => Self::Protocol {
                source_id: source_id.to_owned(),
                code: Some(data.code.0),
                message: data.message.into_owned(),
            },
            E::TransportClosed | E::TransportSend(_) | E::Cancelled { .. } => Self::Unavailable {
                source_id: source_id.to_owned(),
                reason: format!("connection lost ({error})"),
            },
            E::Timeout { timeout } => Self::Timeout {
                source_id: source_id.to_owned(),
                timeout,
            },
            other => Self::Protocol {
                source_id: source_id.to_owned(),
                code: None,
                message: other.to_string(),
            },
        }
    }
}
