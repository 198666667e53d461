//! A request answered at once gets its answer as `application/json`, not as an SSE stream.
//!
//! rmcp answers every POST of a 2025-era session with `text/event-stream`: a priming event, then
//! the messages, then the end of the stream, each its own chunk. The Streamable HTTP transport
//! lets a server answer a request with either (2025-11-25 and 2026-07-28, "Sending Messages": the
//! client MUST support both), and the official clients read a JSON body in one step where a
//! stream goes through their SSE parser chunk by chunk: the TS SDK 1.x client's `ping` took
//! 200–600 µs more against a stream than against the same answer as JSON (docs/benchmarks.md,
//! "Where the time goes").
//!
//! So this layer holds a POST's stream back until its first message. If that message is the
//! answer (a JSON-RPC response or error), the client gets it alone as `application/json`: the
//! stream of a request ends with its answer, so nothing after it is lost. Otherwise (a
//! notification, a request such as an elicitation, or no message within [`HOLD`], as a run that
//! waits for a person), the stream goes out as rmcp made it, from its first byte, so progress,
//! elicitation and resumption (the priming event's id, `Last-Event-ID`) work as before.

use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::extract::Request;
use axum::http::{HeaderValue, Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::Response;
use futures::{Stream, StreamExt};
use serde::Deserialize;
use serde::de::IgnoredAny;

/// How long a stream is held back waiting for its first message. Past this, the client gets the
/// stream's head and priming event, as from rmcp: a run that waits minutes for a person must not
/// leave the client without response headers (undici, under the TS SDK, gives up on a response
/// whose headers have not come in 300 s) or without an event id to resume from.
const HOLD: Duration = Duration::from_secs(1);

/// The most of a held stream this layer buffers before it lets the stream go as it is. rmcp sends
/// one message an event, so this bounds only a first message that is itself large: it is sent as
/// a stream, as before.
const MAX_HELD_BYTES: usize = 8 * 1024 * 1024;

/// Axum middleware on `/mcp`, inside `mcp_body::check`.
pub(crate) async fn prefer_json(request: Request, next: Next) -> Response {
    let wanted = request.method() == Method::POST && accepts_json(&request);
    let response = next.run(request).await;
    if !wanted || response.status() != StatusCode::OK || !is_event_stream(&response) {
        return response;
    }
    let (mut parts, body) = response.into_parts();
    let mut stream = body.into_data_stream();
    let deadline = tokio::time::Instant::now() + HOLD;
    let mut held = Events::default();
    loop {
        // The end, an error of the body, or the hold is over: send what rmcp made.
        let Ok(Some(Ok(chunk))) = tokio::time::timeout_at(deadline, stream.next()).await else {
            break;
        };
        match held.push(chunk) {
            Held::Waiting => {}
            Held::Answer(answer) => {
                parts.headers.remove(header::CACHE_CONTROL);
                parts.headers.remove("x-accel-buffering");
                parts.headers.insert(
                    header::CONTENT_TYPE,
                    HeaderValue::from_static("application/json"),
                );
                // The rest of the stream (its end) is dropped with it.
                return Response::from_parts(parts, Body::from(answer));
            }
            Held::Other => break,
        }
    }
    Response::from_parts(parts, Body::from_stream(resumed(held.chunks, stream)))
}

/// The chunks already read, then the rest of the stream.
fn resumed(
    chunks: Vec<Bytes>,
    rest: impl Stream<Item = Result<Bytes, axum::Error>> + Send + 'static,
) -> impl Stream<Item = Result<Bytes, axum::Error>> + Send + 'static {
    futures::stream::iter(chunks.into_iter().map(Ok)).chain(rest)
}

fn accepts_json(request: &Request) -> bool {
    request
        .headers()
        .get_all(header::ACCEPT)
        .iter()
        .filter_map(|value| value.to_str().ok())
        .flat_map(|value| value.split(','))
        .any(|kind| {
            let kind = kind.split(';').next().unwrap_or_default().trim();
            kind.eq_ignore_ascii_case("application/json") || kind == "*/*"
        })
}

fn is_event_stream(response: &Response) -> bool {
    response
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|value| value.to_str().ok())
        .is_some_and(|value| value.starts_with("text/event-stream"))
}

/// What the held stream shows so far.
#[derive(Debug, PartialEq)]
enum Held {
    /// No message yet (the priming event, a keep-alive comment, part of an event).
    Waiting,
    /// The first message is the answer: its JSON text.
    Answer(Bytes),
    /// The first message is not the answer, or the stream is not what this layer reads.
    Other,
}

/// The stream's chunks read so far, and the events they complete.
#[derive(Debug, Default)]
struct Events {
    chunks: Vec<Bytes>,
    /// Text after the last complete event.
    pending: Vec<u8>,
    /// How much of `pending` was searched for an event's end already: an event that comes in
    /// many small chunks is searched once, not once per chunk.
    searched: usize,
    size: usize,
}

impl Events {
    fn push(&mut self, chunk: Bytes) -> Held {
        self.size += chunk.len();
        self.pending.extend_from_slice(&chunk);
        self.chunks.push(chunk);
        if self.size > MAX_HELD_BYTES {
            return Held::Other;
        }
        // A blank line may straddle the last chunk's end: search from one byte before.
        while let Some(end) = event_end(&self.pending, self.searched.saturating_sub(1)) {
            self.searched = 0;
            let event: Vec<u8> = self.pending.drain(..end).collect();
            if let Some(data) = first_message(&event) {
                return if is_answer(&data) {
                    Held::Answer(Bytes::from(data))
                } else {
                    Held::Other
                };
            }
        }
        self.searched = self.pending.len();
        Held::Waiting
    }
}

/// The length of the first complete event in `text` (up to and with the blank line after it),
/// searching from `from`.
fn event_end(text: &[u8], from: usize) -> Option<usize> {
    text.get(from..)?
        .windows(2)
        .position(|pair| pair == b"\n\n")
        .map(|at| from + at + 2)
}

/// An event's data (its `data:` lines joined by newlines, as an SSE parser reads them), or
/// `None` when it carries none: a comment, or the priming event's empty data.
fn first_message(event: &[u8]) -> Option<Vec<u8>> {
    let mut data: Option<Vec<u8>> = None;
    for line in event.split(|&byte| byte == b'\n') {
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        let Some(value) = line.strip_prefix(b"data:") else {
            continue;
        };
        let value = value.strip_prefix(b" ").unwrap_or(value);
        match &mut data {
            Some(joined) => {
                joined.push(b'\n');
                joined.extend_from_slice(value);
            }
            None => data = Some(value.to_vec()),
        }
    }
    data.filter(|data| !data.iter().all(u8::is_ascii_whitespace))
}

/// A JSON-RPC response or error: an id and no method.
fn is_answer(data: &[u8]) -> bool {
    #[derive(Deserialize)]
    struct Envelope {
        id: Option<IgnoredAny>,
        method: Option<IgnoredAny>,
    }
    serde_json::from_slice::<Envelope>(data)
        .is_ok_and(|message| message.id.is_some() && message.method.is_none())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn push_all(chunks: &[&str]) -> Held {
        let mut events = Events::default();
        let mut last = Held::Waiting;
        for chunk in chunks {
            last = events.push(Bytes::copy_from_slice(chunk.as_bytes()));
            if last != Held::Waiting {
                break;
            }
        }
        last
    }

    #[test]
    fn the_answer_after_the_priming_event_is_taken_alone() {
        let answer = r#"{"jsonrpc":"2.0","id":7,"result":{}}"#;
        assert_eq!(
            push_all(&[
                "data: \nid: 0/3\nretry: 3000\n\n",
                &format!("data: {answer}\nid: 1/3\n\n")
            ]),
            Held::Answer(Bytes::from(answer))
        );
    }

    #[test]
    fn an_event_split_across_chunks_is_read_whole() {
        assert_eq!(
            push_all(&[
                ":\n",
                "\ndata: {\"jsonrpc\":\"2.0\",",
                "\"id\":\"a\",\"error\":{}}\n\n"
            ]),
            Held::Answer(Bytes::from(r#"{"jsonrpc":"2.0","id":"a","error":{}}"#))
        );
    }

    #[test]
    fn an_event_in_byte_sized_chunks_is_found_once_whole() {
        let answer = r#"{"jsonrpc":"2.0","id":1,"result":{"text":"a\n"}}"#;
        let stream = format!("data: \nid: 0\n\ndata: {answer}\n\n");
        let chunks: Vec<String> = stream.chars().map(String::from).collect();
        let chunks: Vec<&str> = chunks.iter().map(String::as_str).collect();
        assert_eq!(push_all(&chunks), Held::Answer(Bytes::from(answer)));
    }

    #[test]
    fn a_notification_or_request_first_keeps_the_stream() {
        let progress = r#"{"jsonrpc":"2.0","method":"notifications/progress","params":{}}"#;
        assert_eq!(push_all(&[&format!("data: {progress}\n\n")]), Held::Other);
        let elicit = r#"{"jsonrpc":"2.0","id":0,"method":"elicitation/create","params":{}}"#;
        assert_eq!(push_all(&[&format!("data: {elicit}\n\n")]), Held::Other);
        assert_eq!(push_all(&["data: not json\n\n"]), Held::Other);
    }

    #[test]
    fn a_first_message_past_the_bound_keeps_the_stream() {
        let big = format!("data: {}", "x".repeat(MAX_HELD_BYTES));
        assert_eq!(push_all(&[&big]), Held::Other);
    }

    #[test]
    fn accept_lists_are_read_by_media_type() {
        let with = |accept: &str| {
            let request = Request::builder()
                .header(header::ACCEPT, accept)
                .body(Body::empty())
                .expect("a request");
            accepts_json(&request)
        };
        assert!(with("application/json, text/event-stream"));
        assert!(with("text/event-stream;q=1, Application/JSON;q=0.9"));
        assert!(!with("text/event-stream"));
    }
}
