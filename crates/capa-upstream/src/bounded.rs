//! A cap on one message from a stdio upstream, enforced while the message streams in.
//!
//! rmcp's line transport already refuses a line longer than its `max_line_length` without
//! buffering it, but it only logs and drops it: the call that waited for that answer would wait
//! until its timeout and then look retryable. [`BoundedLines`] sits between the child's stdout
//! and rmcp, passes every byte through unchanged, and watches each line with a small JSON
//! scanner that keeps no more than a few bytes of it. When a line ends that rmcp will have
//! dropped (the same count, the same limit), and that line was the answer to a request, it hands
//! rmcp one more line: an error answer with the same request id, marked so that
//! [`crate::UpstreamError::from_service`] turns it into [`crate::UpstreamError::TooLarge`].

use std::hash::{BuildHasher, Hasher};
use std::io;
use std::pin::Pin;
use std::sync::OnceLock;
use std::task::{Context, Poll, ready};

use tokio::io::{AsyncRead, ReadBuf};

/// Key in the `data` of a substituted error answer; its value is [`marker_token`].
pub(crate) const TOO_LARGE_MARKER: &str = "capaMessageTooLarge";

/// The deepest nesting of arrays and objects that rmcp's JSON decoder (serde_json, whose
/// recursion limit is 128) reads; a deeper line is dropped by it like an oversized one, and the
/// call that waited for it would wait out its timeout (a test pins the value).
pub(crate) const MAX_JSON_DEPTH: u32 = 127;

/// The longest request id the scanner keeps (rmcp sends small numbers).
const MAX_ID_BYTES: usize = 64;
/// The longest top-level key the scanner needs to recognise (`method`, `result`).
const MAX_KEY_BYTES: usize = 8;

/// A number that only this process knows, so that an upstream cannot pass its own error off as
/// the hub's "too large" (which would only mislabel its own answer, but still).
pub(crate) fn marker_token() -> u64 {
    static TOKEN: OnceLock<u64> = OnceLock::new();
    *TOKEN.get_or_init(|| {
        // `RandomState` is seeded from the operating system's randomness once per process.
        let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
        hasher.write_u64(0x6361_7061);
        hasher.finish()
    })
}

/// Passes a child's stdout through and follows each line longer than `limit` (its newline
/// included, as rmcp counts) with an error answer to the request it answered.
pub(crate) struct BoundedLines<R> {
    inner: R,
    limit: usize,
    scan: LineScan,
    /// A substitute answer, handed out before anything else.
    pending: Vec<u8>,
    pending_at: usize,
    /// Bytes read past the end of an oversized line, handed out after `pending`.
    held: Vec<u8>,
    held_at: usize,
}

impl<R> BoundedLines<R> {
    pub(crate) fn new(inner: R, limit: usize) -> Self {
        Self {
            inner,
            limit,
            scan: LineScan::default(),
            pending: Vec::new(),
            pending_at: 0,
            held: Vec::new(),
            held_at: 0,
        }
    }

    /// Scans `chunk`; returns how many of its bytes to hand out now (up to the newline of an
    /// oversized line that gets a substitute, so that the substitute follows it directly).
    fn scan(&mut self, chunk: &[u8]) -> usize {
        for (i, &byte) in chunk.iter().enumerate() {
            if byte == b'\n' {
                if let Some(substitute) = self.scan.end_line(self.limit) {
                    self.pending = substitute;
                    self.pending_at = 0;
                    return i + 1;
                }
            } else {
                self.scan.push(byte);
            }
        }
        chunk.len()
    }
}

impl<R: AsyncRead + Unpin> AsyncRead for BoundedLines<R> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = &mut *self;
        if buf.remaining() == 0 {
            return Poll::Ready(Ok(()));
        }
        if this.pending_at < this.pending.len() {
            let n = buf.remaining().min(this.pending.len() - this.pending_at);
            buf.put_slice(&this.pending[this.pending_at..this.pending_at + n]);
            this.pending_at += n;
            if this.pending_at == this.pending.len() {
                this.pending.clear();
                this.pending_at = 0;
            }
            return Poll::Ready(Ok(()));
        }
        if this.held_at < this.held.len() {
            let end = this.held.len().min(this.held_at + buf.remaining());
            let chunk = std::mem::take(&mut this.held);
            let n = this.scan(&chunk[this.held_at..end]);
            buf.put_slice(&chunk[this.held_at..this.held_at + n]);
            this.held = chunk;
            this.held_at += n;
            if this.held_at == this.held.len() {
                this.held.clear();
                this.held_at = 0;
            }
            return Poll::Ready(Ok(()));
        }
        let before = buf.filled().len();
        ready!(Pin::new(&mut this.inner).poll_read(cx, buf))?;
        let read = buf.filled()[before..].to_vec();
        let n = this.scan(&read);
        if n < read.len() {
            this.held.extend_from_slice(&read[n..]);
            buf.set_filled(before + n);
        }
        Poll::Ready(Ok(()))
    }
}

/// Where the scanner is in the top-level object of a line.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
enum Member {
    /// Before the first `{`, or inside something that is not a top-level object.
    #[default]
    Outside,
    /// Expecting a key (after `{` or `,`).
    Key,
    /// Inside a key's string.
    InKey,
    /// After a key, expecting `:`.
    Colon,
    /// Inside the value of a member.
    Value,
}

/// What one line holds, learned one byte at a time: its length, whether it is an object with a
/// `result` or `error` and no `method` (an answer), and its top-level `id` as raw JSON.
#[derive(Debug, Default)]
struct LineScan {
    len: usize,
    started: bool,
    object: bool,
    depth: u32,
    /// The deepest `depth` of the line.
    deepest: u32,
    in_string: bool,
    escape: bool,
    member: Member,
    key: Vec<u8>,
    capturing_id: bool,
    id: Vec<u8>,
    id_usable: bool,
    has_method: bool,
    has_answer: bool,
}

impl LineScan {
    fn push(&mut self, byte: u8) {
        self.len = self.len.saturating_add(1);
        let top = self.depth == 1;
        if self.in_string {
            if self.escape {
                self.escape = false;
            } else if byte == b'\\' {
                self.escape = true;
            } else if byte == b'"' {
                self.in_string = false;
                if self.member == Member::InKey {
                    self.member = Member::Colon;
                    self.keep_id(byte);
                    return;
                }
            }
            if self.member == Member::InKey {
                if self.key.len() < MAX_KEY_BYTES + 1 {
                    self.key.push(byte);
                }
            } else {
                self.keep_id(byte);
            }
            return;
        }
        match byte {
            b' ' | b'\t' | b'\r' => {}
            b'"' => {
                self.in_string = true;
                if top && self.member == Member::Key {
                    self.member = Member::InKey;
                    self.key.clear();
                } else {
                    self.keep_id(byte);
                }
            }
            b'{' | b'[' => {
                if !self.started {
                    self.started = true;
                    self.object = byte == b'{';
                }
                self.depth = self.depth.saturating_add(1);
                self.deepest = self.deepest.max(self.depth);
                if self.depth == 1 && self.object {
                    self.member = Member::Key;
                } else if self.capturing_id {
                    // An id is a number or a string, never a structure.
                    self.id_usable = false;
                }
            }
            b'}' | b']' => {
                if top {
                    self.end_value();
                }
                self.depth = self.depth.saturating_sub(1);
            }
            b',' if top => {
                self.end_value();
                self.member = Member::Key;
            }
            b':' if top && self.member == Member::Colon => {
                self.member = Member::Value;
                match self.key.as_slice() {
                    b"id" => {
                        self.capturing_id = true;
                        self.id_usable = true;
                        self.id.clear();
                    }
                    b"method" => self.has_method = true,
                    b"result" | b"error" => self.has_answer = true,
                    _ => {}
                }
            }
            other => {
                if !self.started {
                    self.started = true;
                }
                self.keep_id(other);
            }
        }
    }

    fn keep_id(&mut self, byte: u8) {
        if self.capturing_id && self.depth == 1 {
            if self.id.len() < MAX_ID_BYTES {
                self.id.push(byte);
            } else {
                self.id_usable = false;
            }
        }
    }

    fn end_value(&mut self) {
        self.capturing_id = false;
    }

    /// The line ended: the substitute answer when rmcp drops this line (over the size limit,
    /// or nested deeper than it decodes) and it answered a request whose id we kept; the
    /// scanner starts over either way.
    fn end_line(&mut self, limit: usize) -> Option<Vec<u8>> {
        let scan = std::mem::take(self);
        // rmcp counts the newline too.
        let bytes = scan.len.saturating_add(1);
        let too_deep = scan.deepest > MAX_JSON_DEPTH;
        if bytes <= limit && !too_deep {
            return None;
        }
        let id_ok = scan.id_usable
            && !scan.capturing_id
            && matches!(scan.id.first(), Some(b'"' | b'-' | b'0'..=b'9'));
        if !(scan.object && scan.has_answer && !scan.has_method && id_ok) {
            tracing::warn!(
                bytes,
                limit,
                depth = scan.deepest,
                "an upstream sent a message over the size or nesting limit that answers no request; dropped"
            );
            return None;
        }
        let id = String::from_utf8_lossy(&scan.id);
        let (message, data) = if bytes > limit {
            tracing::warn!(
                bytes,
                limit,
                "an upstream answer is over the size limit; the call fails"
            );
            (
                format!("answer of {bytes} bytes is over the hub's limit of {limit} bytes"),
                serde_json::json!({TOO_LARGE_MARKER: marker_token(), "bytes": bytes, "limit": limit}),
            )
        } else {
            tracing::warn!(
                depth = scan.deepest,
                limit = MAX_JSON_DEPTH,
                "an upstream answer nests deeper than the hub reads; the call fails"
            );
            (
                format!(
                    "answer nests {} levels deep; the hub reads at most {MAX_JSON_DEPTH}",
                    scan.deepest
                ),
                serde_json::json!({TOO_LARGE_MARKER: marker_token(), "depth": scan.deepest, "limit": MAX_JSON_DEPTH}),
            )
        };
        let error = serde_json::json!({"code": -32603, "message": message, "data": data});
        let mut line = format!(r#"{{"jsonrpc":"2.0","id":{id},"error":{error}}}"#).into_bytes();
        line.push(b'\n');
        Some(line)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::AsyncReadExt;

    #[test]
    fn the_depth_limit_is_what_serde_json_decodes() {
        let nested = |depth: u32| {
            format!(
                "{}{}",
                "[".repeat(depth as usize),
                "]".repeat(depth as usize)
            )
        };
        let decodes = |depth| serde_json::from_str::<serde_json::Value>(&nested(depth)).is_ok();
        assert!(decodes(MAX_JSON_DEPTH));
        assert!(!decodes(MAX_JSON_DEPTH + 2));
    }

    #[tokio::test]
    async fn a_deep_answer_is_followed_by_a_deep_error_with_its_id() {
        let deep = format!(
            "{{\"jsonrpc\":\"2.0\",\"id\":7,\"result\":{}1{}}}\n",
            "[".repeat(200),
            "]".repeat(200)
        );
        let out = through(deep.as_bytes(), 1 << 20, 64).await;
        let lines = lines(&out);
        assert_eq!(lines.len(), 2, "{lines:?}");
        let error: serde_json::Value = serde_json::from_str(&lines[1]).expect("json");
        assert_eq!(error["id"], 7);
        assert_eq!(error["error"]["data"]["depth"], 201);
        assert!(
            error["error"]["message"]
                .as_str()
                .is_some_and(|m| m.contains("nests 201 levels"))
        );
    }

    async fn through(input: &[u8], limit: usize, read_size: usize) -> Vec<u8> {
        let mut reader = BoundedLines::new(input, limit);
        let mut out = Vec::new();
        let mut chunk = vec![0u8; read_size];
        loop {
            let n = reader.read(&mut chunk).await.expect("reads");
            if n == 0 {
                return out;
            }
            out.extend_from_slice(&chunk[..n]);
        }
    }

    fn lines(out: &[u8]) -> Vec<String> {
        String::from_utf8_lossy(out)
            .lines()
            .map(str::to_owned)
            .collect()
    }

    // The reader is tested on its own here because the cases below (ids after the payload,
    // nested ids, answers split across reads of one byte) are hard to make a real server show
    // on demand; the integration tests run it against real servers.
    #[tokio::test]
    async fn small_lines_pass_through_unchanged() {
        let input = b"{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n{\"method\":\"x\"}\n";
        assert_eq!(through(input, 100, 7).await, input.to_vec());
    }

    #[tokio::test]
    async fn an_oversized_answer_is_followed_by_an_error_with_its_id() {
        for read_size in [1, 5, 4096] {
            // The id comes after the payload, as the TypeScript SDK writes it, and the payload
            // holds an `id` of its own that must not be taken for it.
            let big = format!(
                "{{\"result\":{{\"id\":99,\"text\":\"{}\\\"}}\"}},\"jsonrpc\":\"2.0\",\"id\":7}}\n",
                "x".repeat(200)
            );
            let input = format!("{big}{{\"jsonrpc\":\"2.0\",\"id\":8,\"result\":{{}}}}\n");
            let out = lines(&through(input.as_bytes(), 100, read_size).await);
            assert_eq!(out.len(), 3, "{out:?}");
            assert_eq!(out[0], big.trim_end());
            let substitute: serde_json::Value = serde_json::from_str(&out[1]).expect("json");
            assert_eq!(substitute["id"], 7);
            assert_eq!(substitute["error"]["data"]["bytes"], big.len());
            assert_eq!(substitute["error"]["data"]["limit"], 100);
            assert_eq!(
                substitute["error"]["data"][TOO_LARGE_MARKER],
                serde_json::json!(marker_token())
            );
            assert_eq!(out[2], "{\"jsonrpc\":\"2.0\",\"id\":8,\"result\":{}}");
        }
    }

    #[tokio::test]
    async fn the_limit_counts_the_newline_as_rmcp_does() {
        let line = "{\"id\":\"a\",\"result\":\"xxxx\"}\n";
        let at = through(line.as_bytes(), line.len(), 3).await;
        assert_eq!(lines(&at).len(), 1);
        let over = through(line.as_bytes(), line.len() - 1, 3).await;
        let out = lines(&over);
        assert_eq!(out.len(), 2);
        assert!(out[1].contains("\"id\":\"a\""), "{out:?}");
    }

    #[tokio::test]
    async fn oversized_requests_and_notifications_get_no_answer() {
        let pad = "y".repeat(200);
        let input = format!(
            "{{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"sampling/createMessage\",\"params\":\"{pad}\"}}\n\
             {{\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":\"{pad}\"}}\n\
             [{{\"id\":4,\"result\":\"{pad}\"}}]\n"
        );
        let out = through(input.as_bytes(), 100, 64).await;
        assert_eq!(out, input.into_bytes());
    }
}
