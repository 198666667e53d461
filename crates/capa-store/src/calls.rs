//! Records of tool calls: who called what, with which connection, when, how long, how it ended and
//! how big it was. Texts arrive here already redacted.

use rusqlite::params;

use crate::StoreError;

/// How a call ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CallStatus {
    /// The upstream answered with a result.
    Ok,
    /// The upstream answered with `isError: true`.
    ToolError,
    /// The call did not get an answer (timeout, unavailable, protocol error).
    Failed,
}

impl CallStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Ok => "ok",
            Self::ToolError => "tool_error",
            Self::Failed => "failed",
        }
    }

    /// The value stored as `text` (every backend stores [`Self::as_str`]).
    pub fn parse(text: &str) -> Self {
        match text {
            "ok" => Self::Ok,
            "tool_error" => Self::ToolError,
            _ => Self::Failed,
        }
    }
}

/// A call to record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CallRecord {
    pub address: String,
    pub connection: Option<String>,
    pub client: Option<String>,
    pub started_at_ms: i64,
    pub duration_ms: i64,
    pub status: CallStatus,
    pub error_code: Option<String>,
    pub error_message: Option<String>,
    pub request_bytes: i64,
    pub response_bytes: i64,
}

/// A recorded call with its row id.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecordedCall {
    pub id: i64,
    pub call: CallRecord,
}

/// The history of tool calls.
pub trait CallStore: Send + Sync {
    /// Appends one call record now; its row id.
    fn record_call(&self, call: &CallRecord) -> Result<i64, StoreError>;

    /// The newest `limit` calls, newest first.
    fn recent_calls(&self, limit: u32) -> Result<Vec<RecordedCall>, StoreError>;
}

impl CallStore for crate::SqliteStore {
    fn record_call(&self, call: &CallRecord) -> Result<i64, StoreError> {
        Ok(insert_call(&*self.conn()?, call)?)
    }

    fn recent_calls(&self, limit: u32) -> Result<Vec<RecordedCall>, StoreError> {
        let conn = self.conn()?;
        let mut stmt = conn.prepare(
            "SELECT id, address, connection, client, started_at_ms, duration_ms, status, error_code,
                    error_message, request_bytes, response_bytes
             FROM tool_calls ORDER BY id DESC LIMIT ?1",
        )?;
        let rows = stmt.query_map([limit], |row| {
            Ok(RecordedCall {
                id: row.get(0)?,
                call: CallRecord {
                    address: row.get(1)?,
                    connection: row.get(2)?,
                    client: row.get(3)?,
                    started_at_ms: row.get(4)?,
                    duration_ms: row.get(5)?,
                    status: CallStatus::parse(&row.get::<_, String>(6)?),
                    error_code: row.get(7)?,
                    error_message: row.get(8)?,
                    request_bytes: row.get(9)?,
                    response_bytes: row.get(10)?,
                },
            })
        })?;
        Ok(rows.collect::<Result<_, _>>()?)
    }
}

/// Inserts one call record on `conn`; its row id.
pub(crate) fn insert_call(conn: &rusqlite::Connection, call: &CallRecord) -> rusqlite::Result<i64> {
    conn.prepare_cached(
        "INSERT INTO tool_calls (address, connection, client, started_at_ms, duration_ms, status,
                                 error_code, error_message, request_bytes, response_bytes)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
    )?
    .execute(params![
        call.address,
        call.connection,
        call.client,
        call.started_at_ms,
        call.duration_ms,
        call.status.as_str(),
        call.error_code,
        call.error_message,
        call.request_bytes,
        call.response_bytes,
    ])?;
    Ok(conn.last_insert_rowid())
}
