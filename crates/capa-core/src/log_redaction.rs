//! Log lines leave the process redacted: a `tracing_subscriber` writer that runs every record
//! through the [`Redactor`] before it reaches its sink.

use std::io::Write;
use std::sync::Arc;

use capa_domain::Redactor;

/// Makes [`RedactingWriter`]s over a base writer factory (for example `std::io::stderr`).
#[derive(Debug, Clone)]
pub struct RedactingMakeWriter<W> {
    redactor: Arc<Redactor>,
    inner: W,
}

/// A `tracing_subscriber` writer factory that redacts every log line written to `inner`.
pub fn redacting_writer<W>(redactor: &Arc<Redactor>, inner: W) -> RedactingMakeWriter<W> {
    RedactingMakeWriter {
        redactor: redactor.clone(),
        inner,
    }
}

/// Buffers one log record and writes it redacted when dropped (tracing writes a record, then drops
/// the writer), so a secret split across two `write` calls is still caught.
#[derive(Debug)]
pub struct RedactingWriter<W: Write> {
    redactor: Arc<Redactor>,
    buffer: Vec<u8>,
    inner: W,
}

impl<W: Write> Write for RedactingWriter<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.buffer.extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        let text = String::from_utf8_lossy(&self.buffer);
        let clean = self.redactor.redact(&text);
        self.buffer.clear();
        self.inner.write_all(clean.as_bytes())?;
        self.inner.flush()
    }
}

impl<W: Write> Drop for RedactingWriter<W> {
    fn drop(&mut self) {
        let _ = self.flush();
    }
}

impl<'a, M> tracing_subscriber::fmt::MakeWriter<'a> for RedactingMakeWriter<M>
where
    M: tracing_subscriber::fmt::MakeWriter<'a>,
{
    type Writer = RedactingWriter<M::Writer>;
    fn make_writer(&'a self) -> Self::Writer {
        RedactingWriter {
            redactor: self.redactor.clone(),
            buffer: Vec::with_capacity(256),
            inner: self.inner.make_writer(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn log_lines_are_redacted_even_when_split_across_writes() {
        let r = Redactor::new();
        r.add("canary-value");
        let mut out = Vec::new();
        {
            let mut w = RedactingWriter {
                redactor: r.clone(),
                buffer: Vec::new(),
                inner: &mut out,
            };
            w.write_all(b"env canary-").expect("write");
            w.write_all(b"value end\n").expect("write");
        }
        assert_eq!(
            String::from_utf8(out).expect("utf8"),
            "env [redacted] end\n"
        );
    }
}
