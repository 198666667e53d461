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
    /// One message of the upstream's answer was larger than the hub reads
    /// ([`crate::MAX_MESSAGE_BYTES`]). It was dropped as it streamed in, never held whole; the
    /// connection stays up. Asking the same again gets the same answer, so it is not retryable.
    #[error(
        "`{source_id}` answered with {} over the hub's limit of {limit} bytes per message",
        bytes.map_or_else(|| "a message".to_owned(), |b| format!("{b} bytes,"))
    )]
    TooLarge {
        source_id: String,
        /// The size of the message, when it was read to its end (stdio) rather than refused
        /// at the limit (HTTP).
        bytes: Option<u64>,
        limit: usize,
    },
    /// One message of the upstream's answer nested arrays and objects deeper than the hub reads
    /// ([`crate::MAX_JSON_DEPTH`]). Not retryable: the same call gets the same answer.
    #[error(
        "`{source_id}` answered with a message nested deeper than the {limit} levels the hub reads{}",
        depth.map_or_else(String::new, |d| format!(" ({d} levels)"))
    )]
    TooDeep {
        source_id: String,
        /// How deep it nests, when the hub read it to its end (not in an HTTP JSON body, which
        /// rmcp decodes itself).
        depth: Option<u64>,
        limit: u32,
    },
    /// The call's request was larger than the server reads in one message, so the hub did not
    /// send it (the built-in demo reads what the hub does, [`crate::MAX_MESSAGE_BYTES`]). Not
    /// retryable: the same arguments are refused again.
    #[error(
        "`{source_id}` was not called: its request is {bytes} bytes, over the {limit} bytes it reads per message; send less per call"
    )]
    ArgumentsTooLarge {
        source_id: String,
        bytes: u64,
        limit: usize,
    },
    /// The server wants a signed-in user (HTTP 401) and the connection holds no usable sign-in:
    /// none was made, or its refresh was refused. A person signs in; then the call can go on.
    #[error("`{source_id}` needs a sign-in: {reason}")]
    NeedsSignIn { source_id: String, reason: String },
    /// The server needs a capability the call's client did not declare (JSON-RPC `-32021`,
    /// SEP-2575): it was told what the client can answer and refused rather than ask. The
    /// client, not the model, can change that, so a direct call passes it on as the error it is.
    #[error("`{source_id}` needs the client to declare what it did not: {message}")]
    ClientLacks {
        source_id: String,
        /// What the server named as missing (`requiredCapabilities`).
        required: Box<rmcp::model::ClientCapabilities>,
        message: String,
    },
    /// A 2026-07-28 server asked the call's client for something within the call (an
    /// `input_required` round: `key` names what) and the client could not or would not answer,
    /// so the call could not go on. Not retryable as it is: the same client is asked the same.
    #[error(
        "`{source_id}` asked the client for `{key}` within the call and got no answer: {reason}"
    )]
    Unanswered {
        source_id: String,
        key: String,
        reason: String,
    },
}

impl UpstreamError {
    /// Whether the same call may succeed if tried again.
    pub fn retryable(&self) -> bool {
        matches!(self, Self::Timeout { .. } | Self::Unavailable { .. })
    }

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

    /// The sentence for a source's status, where the source is already named: an
    /// `Unavailable`'s reason without the "`id` is unavailable:" that a call's error carries.
    pub fn status_text(&self) -> String {
        match self {
            Self::Unavailable { reason, .. } | Self::NeedsSignIn { reason, .. } => reason.clone(),
            other => other.to_string(),
        }
    }

    /// A stable code for clients and the store.
    pub fn code(&self) -> &'static str {
        match self {
            Self::Timeout { .. } => "upstream_timeout",
            Self::Unavailable { .. } => "upstream_unavailable",
            Self::Protocol { .. } => "upstream_protocol",
            Self::TooLarge { .. } => "result_too_large",
            Self::TooDeep { .. } => "result_too_deep",
            Self::ArgumentsTooLarge { .. } => "arguments_too_large",
            Self::NeedsSignIn { .. } => "needs_sign_in",
            Self::Unanswered { .. } => "source_request_unanswered",
            Self::ClientLacks { .. } => "client_capability_missing",
        }
    }

    pub(crate) fn from_service(source_id: &str, error: rmcp::ServiceError) -> Self {
        use rmcp::ServiceError as E;
        use rmcp::model::ErrorCode;
        if let Some(too_large) = too_large(source_id, &error) {
            return too_large;
        }
        match error {
            E::McpError(data) if data.code == ErrorCode::MISSING_REQUIRED_CLIENT_CAPABILITY => {
                let required = data
                    .data
                    .as_ref()
                    .and_then(|d| d.get("requiredCapabilities"))
                    .and_then(|r| serde_json::from_value(r.clone()).ok())
                    .unwrap_or_default();
                Self::ClientLacks {
                    source_id: source_id.to_owned(),
                    required: Box::new(required),
                    message: data.message.into_owned(),
                }
            }
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

/// The hub's own "too large" in an error: the answer [`crate::bounded::BoundedLines`] put in
/// place of an oversized or too-deep line, the refusal of a request too large to send
/// ([`crate::line_transport::LineTransport`]), or the HTTP client's refusal of an oversized JSON body.
fn too_large(source_id: &str, error: &rmcp::ServiceError) -> Option<UpstreamError> {
    use rmcp::ServiceError as E;
    match error {
        E::McpError(data) => {
            let data = data.data.as_ref()?;
            let marker = data.get(crate::bounded::TOO_LARGE_MARKER)?.as_u64()?;
            if marker != crate::bounded::marker_token() {
                return None;
            }
            let number = |key| data.get(key).and_then(serde_json::Value::as_u64);
            Some(if let Some(sent) = number("sent") {
                UpstreamError::ArgumentsTooLarge {
                    source_id: source_id.to_owned(),
                    bytes: sent,
                    limit: crate::MAX_MESSAGE_BYTES,
                }
            } else if let Some(depth) = number("depth") {
                UpstreamError::TooDeep {
                    source_id: source_id.to_owned(),
                    depth: Some(depth),
                    limit: crate::MAX_JSON_DEPTH,
                }
            } else {
                UpstreamError::TooLarge {
                    source_id: source_id.to_owned(),
                    bytes: number("bytes"),
                    limit: crate::MAX_MESSAGE_BYTES,
                }
            })
        }
        E::TransportSend(sent) => {
            use rmcp::transport::streamable_http_client::StreamableHttpError;
            match sent
                .error
                .downcast_ref::<StreamableHttpError<reqwest::Error>>()?
            {
                StreamableHttpError::ResponseBodyTooLarge { max_size } => {
                    Some(UpstreamError::TooLarge {
                        source_id: source_id.to_owned(),
                        bytes: None,
                        limit: *max_size,
                    })
                }
                // A JSON body is decoded inside rmcp, which reports serde_json's refusal only as
                // text; its words ("recursion limit exceeded") are serde_json's, and a test
                // against a real server pins them.
                StreamableHttpError::UnexpectedServerResponse(text)
                    if text.contains("recursion limit exceeded") =>
                {
                    Some(UpstreamError::TooDeep {
                        source_id: source_id.to_owned(),
                        depth: None,
                        limit: crate::MAX_JSON_DEPTH,
                    })
                }
                _ => None,
            }
        }
        _ => None,
    }
}
