//! One call: the request sent with the source's credentials, its answer read within bounds
//! and turned into a tool result. An HTTP error is a tool error carrying its `status` (the
//! hub marks 408, 429 and 5xx retryable); a network failure is a retryable tool error.

use std::error::Error as _;
use std::time::Duration;

use rmcp::model::{CallToolResult, ContentBlock};
use serde_json::{Map, Value, json};

use crate::auth::{Credential, Credentials};
use crate::operation::{Media, Operation, media_kind};
use crate::request::{self, BadArguments};

/// The largest response body read. The result travels to the hub as one message of at most
/// 8 MiB holding the body twice (text and structured content), escaped.
pub const MAX_RESPONSE_BYTES: usize = 3 * 1024 * 1024;

/// How much of an error's body its message quotes.
const ERROR_BODY_CHARS: usize = 2000;

/// What a call needs besides the operation and its arguments.
pub(crate) struct Caller {
    pub client: reqwest::Client,
    /// `baseUrl`, or the document's server: absolute, no trailing `/`.
    pub base_url: String,
    /// Whether `baseUrl` was set, so that an operation's own `servers:` do not apply.
    pub base_url_fixed: bool,
    pub headers: Vec<(String, String)>,
    pub credentials: Credentials,
    pub timeout: Duration,
}

impl Caller {
    pub(crate) async fn call(
        &self,
        op: &Operation,
        args: Map<String, Value>,
    ) -> Result<CallToolResult, BadArguments> {
        let parts = request::parts(op, args)?;
        let base = match &op.server {
            Some(server) if !self.base_url_fixed && server.contains("://") => {
                server.trim_end_matches('/')
            }
            _ => self.base_url.as_str(),
        };
        let mut query = parts.query;
        let mut cookies = parts.cookies;
        let credentials = self.credentials.for_operation(&op.security);
        for credential in &credentials {
            match credential {
                Credential::Query { name, value } => query.push((name.clone(), value.clone())),
                Credential::Cookie { name, value } => cookies.push((name.clone(), value.clone())),
                _ => {}
            }
        }
        let mut url = format!("{base}{}", parts.path);
        if !query.is_empty() {
            url.push(if url.contains('?') { '&' } else { '?' });
            url.push_str(&request::form_encode(&query));
        }
        let mut builder = self
            .client
            .request(op.method.clone(), &url)
            .timeout(self.timeout)
            .header(reqwest::header::ACCEPT, "application/json, */*;q=0.5");
        for (name, value) in &self.headers {
            builder = builder.header(name, value);
        }
        for (name, value) in parts.headers {
            builder = builder.header(name, value);
        }
        for credential in credentials {
            builder = match credential.clone() {
                Credential::Header { name, value } => builder.header(name, value),
                // Added to the URL and the cookies above.
                Credential::Query { .. } | Credential::Cookie { .. } => builder,
                Credential::Bearer(token) => builder.bearer_auth(token),
                Credential::Basic { user, password } => builder.basic_auth(user, Some(password)),
                Credential::Scheme { scheme, value } => {
                    builder.header(reqwest::header::AUTHORIZATION, format!("{scheme} {value}"))
                }
            };
        }
        if !cookies.is_empty() {
            let cookie = cookies
                .iter()
                .map(|(k, v)| format!("{k}={}", cookie_value(v)))
                .collect::<Vec<_>>()
                .join("; ");
            builder = builder.header(reqwest::header::COOKIE, cookie);
        }
        if let Some((content_type, bytes)) = parts.body {
            builder = builder
                .header(reqwest::header::CONTENT_TYPE, content_type)
                .body(bytes);
        }
        let line = format!("{} {}", op.method, op.path);
        let response = match builder.send().await {
            Ok(response) => response,
            Err(e) => return Ok(failed(&line, &e, self.timeout)),
        };
        let hint = (!self.credentials.meets(&op.security)).then(|| {
            let schemes: Vec<String> = op
                .security
                .iter()
                .flatten()
                .map(|s| format!("`{s}`"))
                .collect();
            format!(
                "the operation asks for credentials ({}) that the source's `auth:` does not give",
                schemes.join(" or ")
            )
        });
        Ok(answer(&line, response, hint.as_deref()).await)
    }
}

/// A cookie's value as it is when RFC 6265 allows it (no spaces, quotes, commas, semicolons or
/// backslashes), else percent-escaped, so that a value can never add a cookie.
fn cookie_value(value: &str) -> String {
    let plain = value
        .bytes()
        .all(|b| b.is_ascii_graphic() && !matches!(b, b'"' | b',' | b';' | b'\\'));
    if plain {
        value.to_owned()
    } else {
        request::escape(value)
    }
}

/// The result of an answered request.
async fn answer(line: &str, response: reqwest::Response, hint: Option<&str>) -> CallToolResult {
    let status = response.status();
    let retry_after = crate::retry_after::seconds(response.headers());
    let content_type = response
        .headers()
        .get(reqwest::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_owned();
    let location = response
        .headers()
        .get(reqwest::header::LOCATION)
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    let body = match read_bounded(response).await {
        Ok(body) => body,
        Err(Unread::TooLarge) => {
            return error_result(
                format!(
                    "{line}: the response is larger than the {} MiB the hub reads; ask for less (filter, paginate or pick fields if the API can)",
                    MAX_RESPONSE_BYTES / (1024 * 1024)
                ),
                json!({ "status": status.as_u16() }),
            );
        }
        Err(Unread::Failed(e)) => return failed(line, &e, Duration::ZERO),
    };
    let parsed = parse_body(&content_type, &body);
    if status.is_success() {
        return success(status, parsed, &content_type, body.len());
    }
    let mut message = format!("HTTP {status} from {line}");
    if status.is_redirection() {
        message.push_str(&format!(
            ": redirected to {}, which is not followed (only redirects within the API's own origin are, so its credentials go nowhere else)",
            location.as_deref().unwrap_or("another address")
        ));
    } else if let Some(text) = excerpt(parsed.as_ref()) {
        message.push_str(": ");
        message.push_str(&text);
    }
    if let Some(hint) = hint.filter(|_| matches!(status.as_u16(), 401 | 403)) {
        message.push_str(&format!(" ({hint})"));
    }
    let mut details = json!({ "status": status.as_u16() });
    if let Some(seconds) = retry_after {
        details["retryAfterSeconds"] = json!(seconds);
    }
    if let Some(value) = parsed {
        details["body"] = value;
    }
    error_result(message, details)
}

enum Unread {
    TooLarge,
    Failed(reqwest::Error),
}

async fn read_bounded(mut response: reqwest::Response) -> Result<Vec<u8>, Unread> {
    if response
        .content_length()
        .is_some_and(|n| n > MAX_RESPONSE_BYTES as u64)
    {
        return Err(Unread::TooLarge);
    }
    let mut body = Vec::new();
    while let Some(chunk) = response.chunk().await.map_err(Unread::Failed)? {
        if body.len() + chunk.len() > MAX_RESPONSE_BYTES {
            return Err(Unread::TooLarge);
        }
        body.extend_from_slice(&chunk);
    }
    Ok(body)
}

/// The body as JSON when it says it is (or looks like it), else as text; `None` when empty
/// or not text.
fn parse_body(content_type: &str, body: &[u8]) -> Option<Value> {
    if body.is_empty() {
        return None;
    }
    let text = std::str::from_utf8(body).ok()?;
    let looks_json = matches!(text.trim_start().as_bytes().first(), Some(b'{' | b'['));
    if ((media_kind(content_type) == Media::Json && !content_type.is_empty()) || looks_json)
        && let Ok(value) = serde_json::from_str::<Value>(text)
    {
        return Some(value);
    }
    Some(Value::String(text.to_owned()))
}

fn success(
    status: reqwest::StatusCode,
    parsed: Option<Value>,
    content_type: &str,
    bytes: usize,
) -> CallToolResult {
    match parsed {
        // A large object goes once: in the structured content, which the hub reads first.
        Some(Value::Object(map)) if bytes > MAX_RESPONSE_BYTES / 3 => {
            let mut result = CallToolResult::success(vec![ContentBlock::text(format!(
                "HTTP {status}: a JSON object of {bytes} bytes, in structuredContent"
            ))]);
            result.structured_content = Some(Value::Object(map));
            result
        }
        Some(Value::Object(map)) => CallToolResult::structured(Value::Object(map)),
        Some(Value::String(text)) => CallToolResult::success(vec![ContentBlock::text(text)]),
        Some(other) => CallToolResult::success(vec![ContentBlock::text(other.to_string())]),
        None if bytes == 0 => CallToolResult::success(vec![ContentBlock::text(format!(
            "HTTP {status} (no content)"
        ))]),
        None => CallToolResult::success(vec![ContentBlock::text(format!(
            "HTTP {status}: a binary body of {bytes} bytes ({})",
            if content_type.is_empty() {
                "no content type"
            } else {
                content_type
            }
        ))]),
    }
}

fn error_result(message: String, details: Value) -> CallToolResult {
    let mut result = CallToolResult::error(vec![ContentBlock::text(message)]);
    result.structured_content = Some(details);
    result
}

/// A request that got no answer: retryable, since the network or the API may come back.
fn failed(line: &str, error: &reqwest::Error, timeout: Duration) -> CallToolResult {
    let reason = if error.is_timeout() && !timeout.is_zero() {
        format!("no answer within {:.1} s", timeout.as_secs_f64())
    } else {
        transport_reason(error)
    };
    error_result(format!("{line}: {reason}"), json!({ "retryable": true }))
}

/// What went wrong with a request that got no answer, in words: the operating system's reason
/// when there is one, without Rust type names.
pub(crate) fn transport_reason(error: &reqwest::Error) -> String {
    if error.is_timeout() {
        return "no answer in time".to_owned();
    }
    let mut source = error.source();
    while let Some(cause) = source {
        if let Some(io) = cause.downcast_ref::<std::io::Error>() {
            return match io.kind() {
                std::io::ErrorKind::ConnectionRefused => {
                    "connection refused (is the API running, and on this port?)".to_owned()
                }
                std::io::ErrorKind::ConnectionReset => "the connection was reset".to_owned(),
                _ => io.to_string(),
            };
        }
        source = cause.source();
    }
    if error.is_connect() {
        return "could not connect".to_owned();
    }
    if error.is_redirect() {
        return "too many redirects".to_owned();
    }
    error.to_string()
}

/// An error body in a line: its `message`/`detail`/`error` when JSON has one, else the text,
/// cut.
fn excerpt(parsed: Option<&Value>) -> Option<String> {
    let text = match parsed? {
        Value::String(text) => text.clone(),
        Value::Object(map) => ["message", "detail", "error", "error_description", "title"]
            .iter()
            .find_map(|key| match map.get(*key) {
                Some(Value::String(s)) => Some(s.clone()),
                _ => None,
            })
            .unwrap_or_else(|| Value::Object(map.clone()).to_string()),
        other => other.to_string(),
    };
    let text = text.trim();
    if text.is_empty() {
        return None;
    }
    let mut cut: String = text.chars().take(ERROR_BODY_CHARS).collect();
    if cut.len() < text.len() {
        cut.push('…');
    }
    Some(cut)
}
