//! The HTTP client of a Streamable HTTP upstream: rmcp's reqwest client, with each SSE event
//! read like a stdio line (`scan.rs`) before rmcp decodes it.
//!
//! rmcp decodes a JSON body inside its client, so the hub never sees those bytes; an SSE event
//! reaches the hub as text first. So on SSE streams, as over stdio, the too-deep parts of a
//! tool list are cut, and an answer rmcp would refuse (nested too deep, or an event over the
//! size cap) becomes an error answer that fails its call at once with a typed error. Without
//! that, rmcp ends the stream and the call reports a lost connection, which looks retryable.

use std::collections::HashMap;
use std::sync::Arc;

use futures::StreamExt;
use futures::stream::BoxStream;
use reqwest::header::{HeaderName, HeaderValue};
use rmcp::model::{ClientJsonRpcMessage, JsonRpcMessage};
use rmcp::transport::streamable_http_client::{
    SseError, StreamableHttpClient, StreamableHttpError, StreamableHttpPostResponse,
    StreamableHttpResponseLimits,
};
use sse_stream::Sse;

use crate::bounded::{Over, error_answer};
use crate::limits::{MAX_JSON_DEPTH, MAX_MESSAGE_BYTES};
use crate::scan::{Answer, LineScan};

type Events = BoxStream<'static, Result<Sse, SseError>>;
type Posted = Result<StreamableHttpPostResponse, StreamableHttpError<reqwest::Error>>;

/// Redirects followed for one request, as rmcp's own client.
const MAX_REDIRECTS: usize = 10;

/// How long an idle connection to an upstream is kept for its next request.
const IDLE_KEPT: std::time::Duration = std::time::Duration::from_secs(4);

#[derive(Debug, Clone)]
pub(crate) struct BoundedHttpClient {
    inner: reqwest::Client,
}

impl BoundedHttpClient {
    /// The client rmcp builds for itself (which it does not export), except that idle
    /// connections are kept, for a short while: only same-origin 307 and 308 redirects are
    /// followed, so that neither the request body is lost nor the session and custom headers
    /// replayed to another host.
    ///
    /// rmcp keeps no idle connection: a request on a reused connection can wait ~40 ms for
    /// the server's delayed ACK when Nagle's algorithm holds the request's second write. This
    /// client writes with `TCP_NODELAY`, so nothing is held; a new connection per call cost
    /// a connect and a listener's wake-up on both ends (docs/benchmarks.md). Idle ones go
    /// after [`IDLE_KEPT`], before common servers close theirs (uvicorn and Node close an
    /// idle keep-alive connection after 5 s), so a call seldom races a server's close.
    pub(crate) fn new() -> Result<Self, reqwest::Error> {
        let redirects = reqwest::redirect::Policy::custom(|attempt| {
            let keeps_body = matches!(
                attempt.status(),
                reqwest::StatusCode::TEMPORARY_REDIRECT | reqwest::StatusCode::PERMANENT_REDIRECT
            );
            let same_origin = attempt
                .previous()
                .first()
                .is_some_and(|first| first.origin() == attempt.url().origin());
            if !keeps_body || !same_origin {
                attempt.stop()
            } else if attempt.previous().len() > MAX_REDIRECTS {
                attempt.error(format!("exceeded {MAX_REDIRECTS} redirects"))
            } else {
                attempt.follow()
            }
        });
        let inner = reqwest::Client::builder()
            .pool_idle_timeout(IDLE_KEPT)
            // reqwest's default, said here because the latency of every call depends on it
            // (and keeping idle connections depends on it; see above).
            .tcp_nodelay(true)
            .redirect(redirects)
            .build()?;
        Ok(Self { inner })
    }
}

impl StreamableHttpClient for BoundedHttpClient {
    type Error = reqwest::Error;

    async fn post_message(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Posted {
        let id = request_id(&message);
        let posted = self
            .inner
            .post_message(uri, message, session_id, auth_header, custom_headers)
            .await;
        bound_posted(posted, id)
    }

    async fn post_message_with_max_sse_event_size(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        max_sse_event_size: usize,
    ) -> Posted {
        let id = request_id(&message);
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
        bound_posted(posted, id)
    }

    async fn post_message_with_response_limits(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        limits: StreamableHttpResponseLimits,
    ) -> Posted {
        let id = request_id(&message);
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
        bound_posted(posted, id)
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
            .await?;
        Ok(bound_events(events, None))
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
            .await?;
        Ok(bound_events(events, None))
    }
}

/// The id of a request as JSON; `None` for what awaits no answer.
fn request_id(message: &ClientJsonRpcMessage) -> Option<String> {
    match message {
        JsonRpcMessage::Request(request) => Some(request.id.clone().into_json_value().to_string()),
        _ => None,
    }
}

fn bound_posted(posted: Posted, request: Option<String>) -> Posted {
    match posted {
        Ok(StreamableHttpPostResponse::Sse(events, session)) => Ok(
            StreamableHttpPostResponse::Sse(bound_events(events, request), session),
        ),
        other => other,
    }
}

/// The events of one stream, each bounded; `request` is the request whose answer the stream
/// carries (a POST's), for answers whose id cannot be read and events refused unread.
fn bound_events(events: Events, request: Option<String>) -> Events {
    events
        .map(move |event| match event {
            Ok(mut event) => {
                if let Some(data) = event.data.take() {
                    event.data = Some(bound_event(data, request.as_deref()));
                }
                Ok(event)
            }
            Err(error) => match &request {
                Some(id) if is_too_large(&error) => {
                    tracing::warn!(
                        limit = MAX_MESSAGE_BYTES,
                        "an upstream answer is over the size limit; the call fails"
                    );
                    let over = Over::Size {
                        bytes: None,
                        limit: MAX_MESSAGE_BYTES,
                    };
                    Ok(Sse::default().data(error_answer(id, over)))
                }
                _ => Err(error),
            },
        })
        .boxed()
}

/// One event's data as rmcp should see it: the too-deep parts of a tool list cut, or, for an
/// answer still nested too deep, the error answer that fails its call.
fn bound_event(data: String, request: Option<&str>) -> String {
    let mut scan = LineScan::default();
    let mut out = Vec::new();
    for &byte in data.as_bytes() {
        scan.push(byte, &mut out);
    }
    let event = scan.end();
    if event.deepest > MAX_JSON_DEPTH {
        let id = match event.answer {
            Answer::Id(id) => Some(String::from_utf8_lossy(&id).into_owned()),
            Answer::Unreadable => request.map(str::to_owned),
            Answer::No => None,
        };
        if let Some(id) = id {
            tracing::warn!(
                depth = event.deepest,
                limit = MAX_JSON_DEPTH,
                "an upstream answer nests deeper than the hub reads; the call fails"
            );
            return error_answer(&id, Over::Depth(event.deepest));
        }
    }
    if event.cuts == 0 {
        return data;
    }
    tracing::debug!(cuts = event.cuts, "cut the too-deep parts of a tool list");
    // Cuts remove whole values and insert ASCII, so text that was UTF-8 still is.
    String::from_utf8(out).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())
}

/// rmcp's refusal of an SSE event over `max_sse_event_size`. Its error type is private, so it is
/// known by its words; a test against a real server pins them.
fn is_too_large(error: &SseError) -> bool {
    matches!(error, SseError::Body(inner)
        if inner.to_string().starts_with("SSE event exceeded the maximum size"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_event_within_the_bounds_is_handed_on_as_it_came() {
        let data = r#"{"jsonrpc":"2.0","id":3,"result":{"tools":[{"name":"a","inputSchema":{}}]}}"#;
        assert_eq!(bound_event(data.to_owned(), Some("3")), data);
    }

    #[test]
    fn a_deep_answer_whose_id_is_unreadable_answers_the_streams_request() {
        let deep = format!("{}1{}", "[".repeat(200), "]".repeat(200));
        let data = format!(r#"{{"jsonrpc":"2.0","id":null,"result":{{"a":{deep}}}}}"#);
        let out: serde_json::Value =
            serde_json::from_str(&bound_event(data, Some("5"))).expect("json");
        assert_eq!(out["id"], 5);
        assert_eq!(out["error"]["data"]["depth"], 202);
    }
}
