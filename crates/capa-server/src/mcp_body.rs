//! What `/mcp` answers to a POST whose body is not one JSON-RPC message: `400 Bad Request` with a
//! JSON-RPC error the client can read (issue 16: rmcp answered `415` in plain text).
//!
//! - Content-Type not `application/json` (or none): `400`, `-32600`. The Streamable HTTP spec
//!   (2025-11-25 and 2026-07-28, "Sending Messages") requires a single JSON-RPC message as the
//!   body and, when the server cannot accept it, "an HTTP error status code (e.g., 400 Bad
//!   Request)"; it names no 415, and the conformance suite checks none, so one status serves
//!   every malformed POST.
//! - A body that is not JSON (empty, cut, not UTF-8): `400`, `-32700` (parse error).
//! - JSON that is not a request, notification or response (`[]`, `42`, no `jsonrpc: "2.0"`, a
//!   method that is not a string, an id that is neither string nor number): `400`, `-32600`.
//!   Batches are refused the same way: MCP dropped them in 2025-06-18 and rmcp reads none.
//! - A message rmcp cannot read although its shape is right (a known method with params of the
//!   wrong type): `400`, `-32602` (invalid params) with the request's id.
//! - Over rmcp's body limit (4 MiB): `413`, `-32600`.
//!
//! Everything else passes to rmcp untouched; the checks run after the guard (Host, Origin,
//! token), so only an authenticated client ever gets this far.

use std::borrow::Cow;

use axum::body::{Body, Bytes};
use axum::extract::Request;
use axum::http::{HeaderMap, Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use rmcp::model::{ErrorData, JsonRpcError, NumberOrString, RequestId};
use serde::Deserialize;
use serde::de::IgnoredAny;
use serde_json::Value;

/// rmcp's own limit on a POST body (`StreamableHttpServerConfig::max_request_body_bytes`'s
/// default), which this layer has to read the body within.
pub(crate) const MAX_BODY_BYTES: usize = 4 * 1024 * 1024;

/// Axum middleware on `/mcp`.
pub(crate) async fn check(request: Request, next: Next) -> Response {
    if request.method() != Method::POST {
        return next.run(request).await;
    }
    if !is_json(request.headers()) {
        return refuse(
            StatusCode::BAD_REQUEST,
            None,
            ErrorData::invalid_request(
                "the Content-Type of a POST to /mcp must be application/json: its body is one JSON-RPC message",
                None,
            ),
        );
    }
    let (parts, body) = request.into_parts();
    let bytes = match read_body(body).await {
        Ok(bytes) => bytes,
        Err(refused) => return refused,
    };
    let id = match read_envelope(&bytes) {
        Ok(id) => id,
        Err(answer) => return (StatusCode::BAD_REQUEST, axum::Json(*answer)).into_response(),
    };
    let response = next
        .run(Request::from_parts(parts, Body::from(bytes)))
        .await;
    // The Content-Type was checked above, so rmcp's 415 means it could not read the message.
    if response.status() == StatusCode::UNSUPPORTED_MEDIA_TYPE {
        let said = axum::body::to_bytes(response.into_body(), 4096)
            .await
            .map(|b| String::from_utf8_lossy(&b).into_owned())
            .unwrap_or_default();
        return refuse(
            StatusCode::BAD_REQUEST,
            id,
            ErrorData::invalid_params(
                format!(
                    "the message has the shape of JSON-RPC, but its params are not what its method takes ({said})"
                ),
                None,
            ),
        );
    }
    response
}

fn is_json(headers: &HeaderMap) -> bool {
    headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(';').next())
        .is_some_and(|essence| essence.trim().eq_ignore_ascii_case("application/json"))
}

/// The members of a JSON-RPC message that say what it is; `params`, `result` and `error` are
/// skipped over without being held.
#[derive(Deserialize)]
struct Envelope<'a> {
    #[serde(borrow, default)]
    jsonrpc: Option<Cow<'a, str>>,
    #[serde(default)]
    method: Option<Value>,
    #[serde(default)]
    id: Option<Value>,
    #[serde(default)]
    result: Option<IgnoredAny>,
    #[serde(default)]
    error: Option<IgnoredAny>,
}

/// The message's id when `bytes` is one JSON-RPC request, notification or response; else the
/// error to answer (with the id when one could be read).
fn read_envelope(bytes: &Bytes) -> Result<Option<RequestId>, Box<JsonRpcError>> {
    let not_json = |e: &serde_json::Error| {
        let what = if bytes.iter().all(u8::is_ascii_whitespace) {
            "the body is empty".to_owned()
        } else {
            format!("the body is not JSON ({e})")
        };
        Err(Box::new(JsonRpcError::new(
            None,
            ErrorData::parse_error(format!("{what}: send one JSON-RPC message"), None),
        )))
    };
    if let Err(e) = serde_json::from_slice::<IgnoredAny>(bytes) {
        return not_json(&e);
    }
    let invalid = |id: Option<RequestId>, why: &str| {
        Err(Box::new(JsonRpcError::new(
            id,
            ErrorData::invalid_request(
                format!("not a JSON-RPC request, notification or response: {why}"),
                None,
            ),
        )))
    };
    match bytes.iter().find(|b| !b.is_ascii_whitespace()) {
        Some(b'{') => {}
        Some(b'[') => return invalid(None, "batches are not supported, send one message per POST"),
        _ => return invalid(None, "the body must be a JSON object"),
    }
    let envelope: Envelope<'_> = match serde_json::from_slice(bytes) {
        Ok(envelope) => envelope,
        // Skipping a value does not check the UTF-8 of its strings; reading them does.
        Err(e) if e.is_syntax() || e.is_eof() => return not_json(&e),
        Err(e) => return invalid(None, &e.to_string()),
    };
    let id = match &envelope.id {
        None => None,
        Some(Value::String(s)) => Some(NumberOrString::String(s.as_str().into())),
        Some(Value::Number(n)) => match n.as_i64() {
            Some(n) => Some(NumberOrString::Number(n)),
            None => return invalid(None, "its id must be a string or an integer"),
        },
        Some(_) => return invalid(None, "its id must be a string or an integer"),
    };
    if envelope.jsonrpc.as_deref() != Some("2.0") {
        return invalid(id, "it needs \"jsonrpc\": \"2.0\"");
    }
    match (&envelope.method, &id) {
        (Some(Value::String(_)), _) => Ok(id),
        (Some(_), _) => invalid(id, "its method must be a string"),
        (None, Some(_)) if envelope.result.is_some() != envelope.error.is_some() => Ok(id),
        (None, _) => invalid(
            id,
            "it has no method (and is no response: an id with a result or an error)",
        ),
    }
}

/// The body, read up to [`MAX_BODY_BYTES`] and no further.
async fn read_body(body: Body) -> Result<Bytes, Response> {
    use futures::StreamExt;
    let mut stream = body.into_data_stream();
    let mut collected = Vec::new();
    while let Some(chunk) = stream.next().await {
        let chunk = chunk.map_err(|e| {
            refuse(
                StatusCode::BAD_REQUEST,
                None,
                ErrorData::parse_error(format!("the body could not be read ({e})"), None),
            )
        })?;
        if collected.len() + chunk.len() > MAX_BODY_BYTES {
            return Err(refuse(
                StatusCode::PAYLOAD_TOO_LARGE,
                None,
                ErrorData::invalid_request(
                    format!(
                        "the body is over {} MiB: send less in one message",
                        MAX_BODY_BYTES / (1024 * 1024)
                    ),
                    None,
                ),
            ));
        }
        collected.extend_from_slice(&chunk);
    }
    Ok(Bytes::from(collected))
}

fn refuse(status: StatusCode, id: Option<RequestId>, error: ErrorData) -> Response {
    (status, axum::Json(JsonRpcError::new(id, error))).into_response()
}
