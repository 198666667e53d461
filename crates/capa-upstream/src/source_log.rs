//! What a source said and what the hub said about it: the child's stderr lines and the hub's own
//! lines (starting, ready, errors, restarts, failed calls), kept per source in a bounded ring in
//! memory for the UI's log view and `capa sources logs`.
//!
//! Every line is redacted with the hub's [`Redactor`] before it is stored (and again when read,
//! for secrets learnt since). The ring keeps the last [`MAX_LOG_LINES`] lines and at most
//! [`MAX_LOG_BYTES`] of text, counted on what is stored; the oldest lines go first and are
//! counted in `dropped`. Nothing is written to disk: a restart of the hub starts empty logs.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex, PoisonError};

use capa_domain::Redactor;
use capa_domain::clock::now_ms;
use serde::Serialize;

/// Lines kept per source.
pub const MAX_LOG_LINES: usize = 500;
/// Bytes of text kept per source (the stored, redacted text).
pub const MAX_LOG_BYTES: usize = 256 * 1024;
/// The longest line kept; the rest is cut with a note.
pub const MAX_LOG_LINE_BYTES: usize = 8 * 1024;

/// Where a line came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum LogStream {
    /// The child process's stderr.
    Stderr,
    /// The hub, about this source.
    Hub,
}

/// How much a line matters.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum LogLevel {
    Info,
    Warn,
    Error,
}

/// One stored line.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct LogLine {
    /// Numbered from 1 per source, never reused while the hub runs.
    pub seq: u64,
    /// Milliseconds since the Unix epoch.
    pub at: i64,
    pub stream: LogStream,
    pub level: LogLevel,
    pub text: String,
}

/// The lines after a sequence number, for the API.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct LogPage {
    pub lines: Vec<LogLine>,
    /// How many lines the ring dropped since the hub started (oldest first).
    pub dropped: u64,
    /// The `after` to ask with next: the last sequence number given out so far.
    pub next: u64,
}

#[derive(Debug, Default)]
struct Ring {
    lines: VecDeque<LogLine>,
    bytes: usize,
    last_seq: u64,
    dropped: u64,
}

/// The log of one source, shared by its upstreams (every connection, across restarts).
#[derive(Debug)]
pub struct SourceLog {
    redactor: Arc<Redactor>,
    max_lines: usize,
    max_bytes: usize,
    ring: Mutex<Ring>,
}

impl SourceLog {
    /// An empty log with the hub's bounds.
    pub fn new(redactor: Arc<Redactor>) -> Arc<Self> {
        Self::with_bounds(redactor, MAX_LOG_LINES, MAX_LOG_BYTES)
    }

    /// An empty log with other bounds (tests).
    pub fn with_bounds(redactor: Arc<Redactor>, max_lines: usize, max_bytes: usize) -> Arc<Self> {
        Arc::new(Self {
            redactor,
            max_lines: max_lines.max(1),
            max_bytes: max_bytes.max(1),
            ring: Mutex::new(Ring::default()),
        })
    }

    /// Adds a line: redacted, cut to [`MAX_LOG_LINE_BYTES`] (and to the byte budget), then the
    /// oldest lines are dropped until the ring is within its bounds.
    pub fn push(&self, stream: LogStream, level: LogLevel, text: &str) {
        let clean = self.redactor.redact(text);
        let limit = MAX_LOG_LINE_BYTES.min(self.max_bytes);
        let text = cut(&clean, limit);
        let at = now_ms();
        let mut ring = self.ring.lock().unwrap_or_else(PoisonError::into_inner);
        ring.last_seq += 1;
        let seq = ring.last_seq;
        ring.bytes += text.len();
        ring.lines.push_back(LogLine {
            seq,
            at,
            stream,
            level,
            text,
        });
        while ring.lines.len() > self.max_lines || ring.bytes > self.max_bytes {
            let Some(old) = ring.lines.pop_front() else {
                break;
            };
            ring.bytes -= old.text.len();
            ring.dropped += 1;
        }
    }

    /// A line of the hub's about this source.
    pub fn hub(&self, level: LogLevel, text: &str) {
        self.push(LogStream::Hub, level, text);
    }

    /// The stored lines numbered after `after` (all of them for 0), redacted again for secrets
    /// the hub learnt since they were stored.
    pub fn after(&self, after: u64) -> LogPage {
        let ring = self.ring.lock().unwrap_or_else(PoisonError::into_inner);
        let lines: Vec<LogLine> = ring
            .lines
            .iter()
            .filter(|l| l.seq > after)
            .cloned()
            .collect();
        let (dropped, next) = (ring.dropped, ring.last_seq);
        drop(ring);
        let lines = if self.redactor.is_empty() {
            lines
        } else {
            lines
                .into_iter()
                .map(|mut l| {
                    l.text = self.redactor.redact(&l.text);
                    l
                })
                .collect()
        };
        LogPage {
            lines,
            dropped,
            next,
        }
    }

    /// Bytes of text stored now.
    pub fn stored_bytes(&self) -> usize {
        self.ring
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .bytes
    }
}

/// `text` within `limit` bytes, cut at a character boundary with a note when it is longer.
fn cut(text: &str, limit: usize) -> String {
    const NOTE: &str = " …(cut)";
    if text.len() <= limit {
        return text.to_owned();
    }
    let mut end = limit.saturating_sub(NOTE.len());
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    let mut out = text[..end].to_owned();
    if out.len() + NOTE.len() <= limit {
        out.push_str(NOTE);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn log(lines: usize, bytes: usize) -> Arc<SourceLog> {
        SourceLog::with_bounds(Redactor::new(), lines, bytes)
    }

    #[test]
    fn keeps_the_last_lines_and_counts_what_it_dropped() {
        let log = log(3, 1024);
        for i in 1..=5 {
            log.push(LogStream::Stderr, LogLevel::Info, &format!("line {i}"));
        }
        let page = log.after(0);
        let texts: Vec<&str> = page.lines.iter().map(|l| l.text.as_str()).collect();
        assert_eq!(texts, ["line 3", "line 4", "line 5"]);
        assert_eq!(page.dropped, 2);
        assert_eq!(page.next, 5);
        assert_eq!(
            page.lines.iter().map(|l| l.seq).collect::<Vec<_>>(),
            [3, 4, 5]
        );
        let later = log.after(4);
        assert_eq!(later.lines.len(), 1);
        assert_eq!(later.lines[0].text, "line 5");
        assert!(log.after(5).lines.is_empty());
        assert_eq!(log.after(5).next, 5);
    }

    #[test]
    fn the_byte_budget_counts_the_stored_redacted_text() {
        let redactor = Redactor::new();
        // A long secret that becomes the short `[redacted]`: stored, the line is small.
        let secret = "s".repeat(200);
        redactor.add(&secret);
        let log = SourceLog::with_bounds(redactor, 100, 64);
        log.push(LogStream::Stderr, LogLevel::Info, &format!("a {secret}"));
        assert_eq!(log.stored_bytes(), "a [redacted]".len());
        log.push(LogStream::Stderr, LogLevel::Info, &"x".repeat(40));
        assert_eq!(log.after(0).lines.len(), 2, "12 + 40 bytes fit in 64");
        log.push(LogStream::Stderr, LogLevel::Info, &"y".repeat(40));
        let page = log.after(0);
        assert_eq!(page.lines.len(), 1, "the two oldest went to make room");
        assert_eq!(page.dropped, 2);
        assert!(log.stored_bytes() <= 64);
    }

    #[test]
    fn a_line_longer_than_the_budget_is_cut_to_fit() {
        let log = log(10, 100);
        log.push(LogStream::Hub, LogLevel::Warn, &"é".repeat(500));
        let page = log.after(0);
        assert_eq!(page.lines.len(), 1);
        assert!(page.lines[0].text.len() <= 100);
        assert!(page.lines[0].text.ends_with("…(cut)"));
        assert!(log.stored_bytes() <= 100);
        let long = "z".repeat(MAX_LOG_LINE_BYTES * 2);
        let big = SourceLog::new(Redactor::new());
        big.push(LogStream::Stderr, LogLevel::Info, &long);
        assert!(big.stored_bytes() <= MAX_LOG_LINE_BYTES);
    }

    #[test]
    fn secrets_with_quotes_and_backslashes_never_reach_the_page() {
        let redactor = Redactor::new();
        let secret = r#"ca"na\ry'7f3"#;
        redactor.add(secret);
        let log = SourceLog::new(redactor.clone());
        log.push(
            LogStream::Stderr,
            LogLevel::Info,
            &format!("token={secret} end"),
        );
        // The JSON-escaped form, as a child that prints JSON would write it.
        let escaped = serde_json::to_string(secret).unwrap_or_default();
        log.push(
            LogStream::Stderr,
            LogLevel::Info,
            &format!("{{\"t\":{escaped}}}"),
        );
        // A secret learnt after the line was stored is redacted on the way out.
        let late = "late-secret-42";
        log.hub(LogLevel::Error, &format!("failed with {late}"));
        redactor.add(late);
        let page = log.after(0);
        let json = serde_json::to_string(&page).unwrap_or_default();
        for form in [secret, escaped.trim_matches('"'), late] {
            assert!(!json.contains(form), "{form} in {json}");
            assert!(page.lines.iter().all(|l| !l.text.contains(form)), "{form}");
        }
        assert_eq!(page.lines[1].text, r#"{"t":"[redacted]"}"#);
        assert_eq!(page.lines[0].text, "token=[redacted] end");
        assert_eq!(page.lines[2].text, "failed with [redacted]");
        assert_eq!(page.lines[2].stream, LogStream::Hub);
        assert_eq!(page.lines[2].level, LogLevel::Error);
        assert!(json.contains("\"stream\":\"stderr\""), "{json}");
    }
}
