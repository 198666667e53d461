//! Each source's log (`capa_upstream::SourceLog`): the child's stderr and the hub's lines about
//! the source, kept in memory per source id across restarts and edits of the source, and
//! forgotten when the source is removed. Read by `GET /api/sources/<id>/logs` and
//! `capa sources logs`.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, PoisonError};

use capa_store::{CallRecord, CallStatus};
use capa_upstream::{LogLevel, LogPage, SourceLog, SupervisorTimings, Upstream, UpstreamSpec};

use super::{Hub, Sources};

/// The logs of the hub's sources, by source id.
#[derive(Debug, Default)]
pub(super) struct SourceLogs(Mutex<BTreeMap<String, Arc<SourceLog>>>);

impl Hub {
    /// The log of source `id`, made on first use.
    pub(super) fn source_log(&self, id: &str) -> Arc<SourceLog> {
        let mut logs = self
            .source_logs
            .0
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        logs.entry(id.to_owned())
            .or_insert_with(|| SourceLog::new(self.redactor.clone()))
            .clone()
    }

    /// A line of the hub's about source `id` in its log.
    pub(super) fn log_source(&self, id: &str, level: LogLevel, text: &str) {
        self.source_log(id).hub(level, text);
    }

    /// Forgets the log of a removed source.
    pub(super) fn forget_source_log(&self, id: &str) {
        self.source_logs
            .0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(id);
    }

    /// Starts an upstream that writes to its source's log.
    pub(super) fn start_upstream(&self, spec: UpstreamSpec) -> Arc<Upstream> {
        let log = self.source_log(&spec.source_id);
        Upstream::start_logged(spec, self.events.clone(), SupervisorTimings::default(), log)
    }

    /// A line in the source's log for a call that failed or answered with an error (calls that
    /// succeed are in the history, not the log).
    pub(super) fn log_call_outcome(&self, source: &str, record: &CallRecord) {
        let (level, what) = match record.status {
            CallStatus::Ok => return,
            CallStatus::ToolError => (LogLevel::Warn, "answered with an error".to_owned()),
            CallStatus::Failed => (
                LogLevel::Error,
                format!(
                    "failed ({}): {}",
                    record.error_code.as_deref().unwrap_or("error"),
                    record.error_message.as_deref().unwrap_or("no message")
                ),
            ),
        };
        if !self.sources().has(source) {
            return;
        }
        self.log_source(
            source,
            level,
            &format!(
                "call to {} {what} after {} ms",
                record.address, record.duration_ms
            ),
        );
    }
}

impl Sources<'_> {
    /// The lines of source `id`'s log numbered after `after` (docs/api.md); `None` when no
    /// source has this id.
    pub fn log_after(&self, id: &str, after: u64) -> Option<LogPage> {
        self.hub
            .sources()
            .has(id)
            .then(|| self.hub.source_log(id).after(after))
    }
}
