//! A cap on one message from a line upstream (stdio, the built-in demo's pipe), enforced while
//! the message streams in, and the too-deep parts of a tool list cut out.
//!
//! rmcp's line transport already refuses a line longer than its `max_line_length` without
//! buffering it, and a line nested deeper than `serde_json` reads, but it only logs and drops it:
//! the call that waited for that answer would wait until its timeout and then look retryable.
//! [`BoundedLines`] sits between the server's output and rmcp and hands each line on through a
//! small JSON scanner ([`crate::scan`]) that keeps no more than a few bytes of it. Inside a
//! `tools/list` answer it replaces what nests too deep, so that one deep tool does not cost the
//! source its other tools. When a line ends that rmcp will drop (the same count, the same limit)
//! and it answered a request, it hands rmcp one more line: an error answer with the same request
//! id, marked so that [`crate::UpstreamError::from_service`] turns it into
//! [`crate::UpstreamError::TooLarge`] or [`crate::UpstreamError::TooDeep`].

use std::hash::{BuildHasher, Hasher};
use std::io;
use std::pin::Pin;
use std::sync::OnceLock;
use std::task::{Context, Poll, ready};

use tokio::io::{AsyncRead, ReadBuf};

use crate::in_flight::InFlight;
use crate::limits::MAX_JSON_DEPTH;
use crate::scan::{Answer, LineScan};

/// Key in the `data` of a substituted error answer; its value is [`marker_token`].
pub(crate) const TOO_LARGE_MARKER: &str = "capaMessageTooLarge";

/// Bytes read from the server at a time. What is handed on for them is bounded too: a cut
/// part becomes at most a short marker, so a chunk grows at most some fifty times.
const CHUNK_BYTES: usize = 8 * 1024;

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

/// Hands a server's output on line by line, the too-deep parts of tool lists cut, and follows
/// each line that rmcp will drop with an error answer to the request it answered.
pub(crate) struct BoundedLines<R> {
    inner: R,
    limit: usize,
    scan: LineScan,
    in_flight: InFlight,
    /// Bytes to hand out before reading more: lines as rmcp should see them, and substitutes.
    out: Vec<u8>,
    out_at: usize,
    chunk: Box<[u8]>,
}

impl<R> BoundedLines<R> {
    /// `in_flight` is the connection's record of the requests the hub sent, shared with its
    /// writer, for answers whose id cannot be read.
    pub(crate) fn new(inner: R, limit: usize, in_flight: InFlight) -> Self {
        Self {
            inner,
            limit,
            scan: LineScan::default(),
            in_flight,
            out: Vec::new(),
            out_at: 0,
            chunk: vec![0u8; CHUNK_BYTES].into_boxed_slice(),
        }
    }

    /// Scans `read` bytes of the chunk into `out`.
    fn scan(&mut self, read: usize) {
        for at in 0..read {
            let byte = self.chunk[at];
            if byte == b'\n' {
                self.out.push(byte);
                if let Some(substitute) = self.end_line() {
                    self.out.extend_from_slice(&substitute);
                }
            } else {
                self.scan.push(byte, &mut self.out);
            }
        }
    }

    /// The line ended: the substitute answer when rmcp drops this line (over the size limit,
    /// or nested deeper than it decodes) and it answered a request.
    fn end_line(&mut self) -> Option<Vec<u8>> {
        let line = self.scan.end();
        if let Answer::Id(id) = &line.answer {
            self.in_flight.answered(id);
        }
        if line.cuts > 0 {
            // The tool list says which tools were cut (`limits.rs`), with the source's name.
            tracing::debug!(cuts = line.cuts, "cut the too-deep parts of a tool list");
        }
        let bytes = line.bytes;
        let limit = self.limit;
        if bytes <= limit && line.deepest <= MAX_JSON_DEPTH {
            return None;
        }
        let id = match line.answer {
            Answer::Id(id) => Some(String::from_utf8_lossy(&id).into_owned()),
            // Its id could not be read, but it answers a request the hub sent: when only one
            // waits, that one.
            Answer::Unreadable => self.in_flight.take_sole(),
            Answer::No => None,
        };
        let Some(id) = id else {
            tracing::warn!(
                bytes,
                limit,
                depth = line.deepest,
                "an upstream sent a message over the size or nesting limit that answers no request we can tell; dropped"
            );
            return None;
        };
        let over = if bytes > limit {
            tracing::warn!(
                bytes,
                limit,
                "an upstream answer is over the size limit; the call fails"
            );
            Over::Size {
                bytes: Some(bytes),
                limit,
            }
        } else {
            tracing::warn!(
                depth = line.deepest,
                limit = MAX_JSON_DEPTH,
                "an upstream answer nests deeper than the hub reads; the call fails"
            );
            Over::Depth(line.deepest)
        };
        let mut line = error_answer(&id, over).into_bytes();
        line.push(b'\n');
        Some(line)
    }
}

/// Which bound an answer is over.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Over {
    /// Its size, when it was read to its end, and the limit.
    Size { bytes: Option<usize>, limit: usize },
    /// How deep it nests (over [`MAX_JSON_DEPTH`]).
    Depth(u32),
}

/// The error answer, as one line of JSON without its newline, that takes the place of an answer
/// rmcp would drop, for the request with `id` (raw JSON): marked with [`marker_token`], so that
/// [`crate::UpstreamError::from_service`] knows it for the hub's own.
pub(crate) fn error_answer(id: &str, over: Over) -> String {
    let (message, data) = match over {
        Over::Size { bytes, limit } => (
            match bytes {
                Some(bytes) => {
                    format!("answer of {bytes} bytes is over the hub's limit of {limit} bytes")
                }
                None => format!("answer is over the hub's limit of {limit} bytes"),
            },
            serde_json::json!({TOO_LARGE_MARKER: marker_token(), "bytes": bytes, "limit": limit}),
        ),
        Over::Depth(depth) => (
            format!("answer nests {depth} levels deep; the hub reads at most {MAX_JSON_DEPTH}"),
            serde_json::json!({TOO_LARGE_MARKER: marker_token(), "depth": depth, "limit": MAX_JSON_DEPTH}),
        ),
    };
    let error = serde_json::json!({"code": -32603, "message": message, "data": data});
    format!(r#"{{"jsonrpc":"2.0","id":{id},"error":{error}}}"#)
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
        loop {
            if this.out_at < this.out.len() {
                let n = buf.remaining().min(this.out.len() - this.out_at);
                buf.put_slice(&this.out[this.out_at..this.out_at + n]);
                this.out_at += n;
                if this.out_at == this.out.len() {
                    this.out.clear();
                    this.out_at = 0;
                }
                return Poll::Ready(Ok(()));
            }
            let mut chunk = ReadBuf::new(&mut this.chunk);
            ready!(Pin::new(&mut this.inner).poll_read(cx, &mut chunk))?;
            let read = chunk.filled().len();
            if read == 0 {
                // The end of the stream; a partial line is dropped by rmcp as well.
                return Poll::Ready(Ok(()));
            }
            // A chunk inside a cut part hands nothing on; read on rather than return no
            // bytes, which would mean the end of the stream.
            this.scan(read);
        }
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
        through_with(input, limit, read_size, InFlight::default()).await
    }

    async fn through_with(
        input: &[u8],
        limit: usize,
        read_size: usize,
        in_flight: InFlight,
    ) -> Vec<u8> {
        let mut reader = BoundedLines::new(input, limit, in_flight);
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

    #[tokio::test]
    async fn a_deep_tool_list_is_cut_whatever_the_reads() {
        let mut schema = r#"{"type":"string"}"#.to_owned();
        for _ in 0..500 {
            schema = format!(r#"{{"type":"object","properties":{{"x":{schema}}}}}"#);
        }
        let line = format!(
            "{{\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{{\"tools\":[{{\"name\":\"deep\",\"inputSchema\":{schema}}},{{\"name\":\"b\",\"inputSchema\":{{}}}}]}}}}\n"
        );
        let mut outs = Vec::new();
        for read_size in [1, 5, 4096, 1 << 20] {
            let out = through(line.as_bytes(), 1 << 20, read_size).await;
            let lines = lines(&out);
            assert_eq!(lines.len(), 1, "no substitute: it parses now");
            let value: serde_json::Value = serde_json::from_str(&lines[0]).expect("parses");
            assert_eq!(value["result"]["tools"][1]["name"], "b");
            outs.push(out);
        }
        assert!(outs.windows(2).all(|w| w[0] == w[1]));
    }

    #[tokio::test]
    async fn an_oversized_answer_whose_id_is_unreadable_answers_the_one_request_waiting() {
        use rmcp::model::{ClientRequest, JsonRpcMessage, NumberOrString, PingRequest};
        let ping = |id| {
            JsonRpcMessage::request(
                ClientRequest::PingRequest(PingRequest::default()),
                NumberOrString::Number(id),
            )
        };
        // The id is longer than the scanner keeps; the line is over the limit.
        let big = format!(
            "{{\"jsonrpc\":\"2.0\",\"result\":\"{}\",\"id\":\"{}\"}}\n",
            "x".repeat(200),
            "7".repeat(80)
        );
        let in_flight = InFlight::default();
        in_flight.sent(&ping(7));
        let out = lines(&through_with(big.as_bytes(), 100, 64, in_flight.clone()).await);
        assert_eq!(out.len(), 2, "{out:?}");
        let substitute: serde_json::Value = serde_json::from_str(&out[1]).expect("json");
        assert_eq!(substitute["id"], 7);
        assert_eq!(substitute["error"]["data"]["bytes"], big.len());
        assert_eq!(in_flight.take_sole(), None, "answered");

        // Two waiting: which one it answered is unknown, so none is failed (each then ends at
        // its own timeout).
        in_flight.sent(&ping(8));
        in_flight.sent(&ping(9));
        let out = lines(&through_with(big.as_bytes(), 100, 64, in_flight).await);
        assert_eq!(out.len(), 1, "{out:?}");
    }
}
