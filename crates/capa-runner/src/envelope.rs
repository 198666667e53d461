//! The envelope `execute` answers with (mcp-surface.md, `ExecuteEnvelope`), and its one-line
//! text form.

use capa_sandbox::{CallSummary, RunError, RunOutput, RunStatus, Truncated};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::gateway::Unready;
use crate::handles::HandleRef;

/// The longest text summary of an envelope; the envelope's result and logs get the rest of
/// `inlineResultBytes`.
pub const SUMMARY_BYTES: usize = 256;

/// How a run's attempt ended, as the model is told (`ExecuteEnvelope.status` of the spec).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EnvelopeStatus {
    Completed,
    Failed,
    AwaitingApproval,
    AwaitingConnection,
    Cancelled,
}

impl EnvelopeStatus {
    /// Where the run stands once an attempt ended like this.
    pub fn run_state(self) -> capa_store::RunState {
        use capa_store::RunState;
        match self {
            Self::Completed => RunState::Completed,
            Self::Failed => RunState::Failed,
            Self::AwaitingApproval => RunState::AwaitingApproval,
            Self::AwaitingConnection => RunState::AwaitingConnection,
            Self::Cancelled => RunState::Cancelled,
        }
    }
}

impl std::fmt::Display for EnvelopeStatus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.run_state().as_str())
    }
}

/// A run's outcome as the model sees it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Envelope {
    pub run_id: String,
    pub status: EnvelopeStatus,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<RunError>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub logs: Vec<String>,
    pub calls: Vec<CallSummary>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub pending: Vec<Value>,
    #[serde(default, skip_serializing_if = "is_nothing_truncated")]
    pub truncated: Option<Truncated>,
    /// What did not fit inline, kept whole for `hub.read` (M2).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub handles: Vec<HandleRef>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notices: Vec<String>,
}

#[expect(
    clippy::ref_option,
    reason = "serde's skip_serializing_if hands the field over by reference"
)]
fn is_nothing_truncated(truncated: &Option<Truncated>) -> bool {
    truncated.as_ref().is_none_or(|t| !t.result && !t.logs)
}

impl Envelope {
    /// A run that ended before the sandbox: the code was refused.
    pub fn refused(run_id: &str, error: RunError, notices: Vec<String>) -> Self {
        Self {
            run_id: run_id.to_owned(),
            status: EnvelopeStatus::Failed,
            result: None,
            error: Some(error),
            logs: Vec::new(),
            calls: Vec::new(),
            pending: Vec::new(),
            truncated: None,
            handles: Vec::new(),
            notices,
        }
    }

    /// The sandbox's output, with the pipeline's notices first.
    pub fn from_run(run_id: &str, output: RunOutput, mut notices: Vec<String>) -> Self {
        notices.extend(output.notices);
        Self {
            run_id: run_id.to_owned(),
            status: match output.status {
                RunStatus::Completed => EnvelopeStatus::Completed,
                RunStatus::Failed => EnvelopeStatus::Failed,
                // The runner names what the run waits for (approval or connection).
                RunStatus::Suspended => EnvelopeStatus::AwaitingApproval,
                RunStatus::Cancelled => EnvelopeStatus::Cancelled,
            },
            result: output.result,
            error: output.error,
            logs: output.logs,
            calls: output.calls,
            pending: Vec::new(),
            truncated: Some(output.truncated),
            handles: Vec::new(),
            notices,
        }
    }

    /// Fits result and logs into `inline_result_bytes` again (as serialised) when something
    /// changed them after the run: `[redacted]` is longer than a short secret it replaces.
    /// Nothing changes when they fit.
    pub fn fit_inline(&mut self, inline_result_bytes: usize) {
        let logs = std::mem::take(&mut self.logs);
        let (logs, truncated, notices) =
            capa_sandbox::fit_inline(&mut self.result, logs, inline_result_bytes);
        self.logs = logs;
        if !truncated.is_empty() {
            let shown = self.truncated.get_or_insert_with(Truncated::default);
            shown.result |= truncated.result;
            shown.logs |= truncated.logs;
            self.notices.extend(notices);
        }
    }

    /// One compact line for the text content: status, calls, and the error or result size; at
    /// most [`SUMMARY_BYTES`].
    pub fn summary(&self) -> String {
        let calls = match self.calls.len() {
            0 => "no tool calls".to_owned(),
            1 => "1 tool call".to_owned(),
            n => format!("{n} tool calls"),
        };
        let failed = self.calls.iter().filter(|c| !c.ok).count();
        let failed = if failed > 0 {
            format!(" ({failed} failed)")
        } else {
            String::new()
        };
        let tail = match (&self.error, &self.result) {
            (Some(error), _) => format!(": {}: {}", error.code, error.message),
            (None, Some(result)) => {
                let text = result.to_string();
                if text.len() <= 200 {
                    format!(": {text}")
                } else {
                    format!("; result of {} bytes in structuredContent", text.len())
                }
            }
            (None, None) => String::new(),
        };
        let line = format!("run {} {}, {calls}{failed}{tail}", self.run_id, self.status);
        if line.len() <= SUMMARY_BYTES {
            return line;
        }
        let mut end = SUMMARY_BYTES - '…'.len_utf8();
        while !line.is_char_boundary(end) {
            end -= 1;
        }
        format!("{}…", &line[..end])
    }
}

impl Envelope {
    /// The answer to a resume whose run needs sources that are not ready: the run waits, as
    /// for a connection, and the same resume goes on once they are.
    pub(crate) fn waiting_for_sources(run_id: &str, unready: &[Unready]) -> Self {
        let what = unready
            .iter()
            .map(|u| format!("{} {}", u.source, u.why))
            .collect::<Vec<_>>()
            .join("; ");
        let mut envelope = Self::refused(
            run_id,
            capa_sandbox::RunError {
                code: "source_not_ready".to_owned(),
                message: format!(
                    "the run waits for the sources it used before it can go on: {what}"
                ),
                hint: Some(
                    "Resume again with execute({ resume }) in a moment. If a source is not served by this hub, resume from the client or project that started the run; the person can check the source in Capabilities.".to_owned(),
                ),
            },
            Vec::new(),
        );
        envelope.status = EnvelopeStatus::AwaitingConnection;
        envelope
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_summary_is_bounded_whatever_the_error() {
        let error = RunError {
            code: "runtime_error".to_owned(),
            message: "é".repeat(10_000),
            hint: None,
        };
        let summary = Envelope::refused("run_0123456789abcdef", error, Vec::new()).summary();
        assert!(summary.len() <= SUMMARY_BYTES, "{} bytes", summary.len());
        assert!(
            summary
                .starts_with("run run_0123456789abcdef failed, no tool calls: runtime_error: éé")
        );
        assert!(summary.ends_with('…'));
    }
}
