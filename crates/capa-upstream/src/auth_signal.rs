//! What an HTTP server said of the credentials on the last request, seen above the OAuth client
//! (so after its refresh and retry): the final word, not a 401 that a refresh then answered.
//!
//! Each request's outcome replaces the last one's, so a 403 on one tool does not make later
//! network errors look like a sign-in problem, and a refresh that failed for a passing reason
//! (network, a 5xx) signs nobody out.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use futures::stream::BoxStream;
use reqwest::header::{HeaderName, HeaderValue};
use rmcp::model::ClientJsonRpcMessage;
use rmcp::transport::streamable_http_client::{
    SseError, StreamableHttpClient, StreamableHttpError, StreamableHttpPostResponse,
    StreamableHttpResponseLimits,
};
use sse_stream::Sse;

const ACCEPTED: u8 = 0;
/// 401: the server does not accept the credentials (or wants some).
const REFUSED: u8 = 1;
/// 403 `insufficient_scope`: the credentials lack a scope (a step-up).
const SCOPE: u8 = 2;

#[derive(Debug, Default)]
pub(crate) struct AuthSignal {
    last: AtomicU8,
    /// The last 401's `WWW-Authenticate`.
    challenge: Mutex<Option<String>>,
    /// The scope the last 403 asked for.
    wanted_scope: Mutex<Option<String>>,
}

impl AuthSignal {
    /// Records a request's outcome. `any_error` counts other errors as "not refused" too (a
    /// POST's network error); a GET stream's own errors (405 for servers without one) say
    /// nothing of the credentials.
    fn observe<T, E: std::error::Error + Send + Sync + 'static>(
        &self,
        result: &Result<T, StreamableHttpError<E>>,
        any_error: bool,
    ) {
        let outcome = match result {
            Err(StreamableHttpError::AuthRequired(required)) => {
                *lock(&self.challenge) = Some(required.www_authenticate_header.clone());
                REFUSED
            }
            Err(StreamableHttpError::InsufficientScope(insufficient)) => {
                lock(&self.wanted_scope).clone_from(&insufficient.required_scope);
                SCOPE
            }
            Err(_) if !any_error => return,
            _ => ACCEPTED,
        };
        self.last.store(outcome, Ordering::Relaxed);
    }

    /// Whether the last request got a 401.
    pub(crate) fn refused(&self) -> bool {
        self.last.load(Ordering::Relaxed) == REFUSED
    }

    /// Whether that 401 asked for a Bearer token (what an OAuth sign-in gives), not some
    /// other scheme a sign-in would not satisfy.
    pub(crate) fn wants_bearer(&self) -> bool {
        lock(&self.challenge).as_deref().is_some_and(|c| {
            c.trim_start()
                .get(..6)
                .is_some_and(|scheme| scheme.eq_ignore_ascii_case("bearer"))
        })
    }

    /// The scope the last request lacked (a 403 `insufficient_scope`), when it did.
    pub(crate) fn wanted_scope(&self) -> Option<String> {
        if self.last.load(Ordering::Relaxed) != SCOPE {
            return None;
        }
        lock(&self.wanted_scope).clone()
    }
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

/// `inner` with every request's outcome recorded in `signal`.
#[derive(Debug, Clone)]
pub(crate) struct Signalled<C> {
    pub(crate) inner: C,
    pub(crate) signal: Arc<AuthSignal>,
}

type Events = BoxStream<'static, Result<Sse, SseError>>;

impl<C: StreamableHttpClient + Send + Sync> StreamableHttpClient for Signalled<C> {
    type Error = C::Error;

    async fn post_message(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<StreamableHttpPostResponse, StreamableHttpError<Self::Error>> {
        let posted = self
            .inner
            .post_message(uri, message, session_id, auth_header, custom_headers)
            .await;
        self.signal.observe(&posted, true);
        posted
    }

    async fn post_message_with_max_sse_event_size(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        max_sse_event_size: usize,
    ) -> Result<StreamableHttpPostResponse, StreamableHttpError<Self::Error>> {
        let posted = self
            .inner
            .post_message_with_max_sse_event_size(
                uri,
                message,
                session_id,
                auth_header,
                custom_headers,
                max_sse_event_size,
            )
            .await;
        self.signal.observe(&posted, true);
        posted
    }

    async fn post_message_with_response_limits(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        limits: StreamableHttpResponseLimits,
    ) -> Result<StreamableHttpPostResponse, StreamableHttpError<Self::Error>> {
        let posted = self
            .inner
            .post_message_with_response_limits(
                uri,
                message,
                session_id,
                auth_header,
                custom_headers,
                limits,
            )
            .await;
        self.signal.observe(&posted, true);
        posted
    }

    async fn delete_session(
        &self,
        uri: Arc<str>,
        session_id: Arc<str>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<(), StreamableHttpError<Self::Error>> {
        self.inner
            .delete_session(uri, session_id, auth_header, custom_headers)
            .await
    }

    async fn get_stream(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<Events, StreamableHttpError<Self::Error>> {
        let events = self
            .inner
            .get_stream(uri, session_id, last_event_id, auth_header, custom_headers)
            .await;
        self.signal.observe(&events, false);
        events
    }

    async fn get_stream_with_max_sse_event_size(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        max_sse_event_size: usize,
    ) -> Result<Events, StreamableHttpError<Self::Error>> {
        let events = self
            .inner
            .get_stream_with_max_sse_event_size(
                uri,
                session_id,
                last_event_id,
                auth_header,
                custom_headers,
                max_sse_event_size,
            )
            .await;
        self.signal.observe(&events, false);
        events
    }
}
