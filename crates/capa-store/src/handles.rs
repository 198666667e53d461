//! Results and logs too large for the envelope, kept whole so that the model can read them in
//! pieces with `hub.read(handle)` in its next `execute` (docs/code-mode.md, "Large results").
//!
//! The table is bounded twice: a handle older than the keep time is gone, and past the byte
//! bound the oldest go first. Both are applied at every insert, so the table never holds more
//! than the bound plus the one body being added. What is written here was redacted by the
//! runner, like everything the store keeps.

use rusqlite::{OptionalExtension, params};

use crate::StoreError;

/// What a handle holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum HandleOf {
    /// The run's returned value, as compact JSON.
    Result,
    /// The run's console lines, joined by newlines.
    Logs,
}

impl HandleOf {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Result => "result",
            Self::Logs => "logs",
        }
    }

    /// The value stored as `text` (every backend stores [`Self::as_str`]).
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "result" => Some(Self::Result),
            "logs" => Some(Self::Logs),
            _ => None,
        }
    }
}

/// The JSON type of what a handle holds (logs are a `string`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum JsonType {
    Null,
    Boolean,
    Number,
    String,
    Array,
    Object,
}

impl JsonType {
    /// The type of `value`.
    pub fn of(value: &serde_json::Value) -> Self {
        use serde_json::Value;
        match value {
            Value::Null => Self::Null,
            Value::Bool(_) => Self::Boolean,
            Value::Number(_) => Self::Number,
            Value::String(_) => Self::String,
            Value::Array(_) => Self::Array,
            Value::Object(_) => Self::Object,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Null => "null",
            Self::Boolean => "boolean",
            Self::Number => "number",
            Self::String => "string",
            Self::Array => "array",
            Self::Object => "object",
        }
    }

    /// The value stored as `text` (every backend stores [`Self::as_str`]).
    pub fn parse(s: &str) -> Option<Self> {
        [
            Self::Null,
            Self::Boolean,
            Self::Number,
            Self::String,
            Self::Array,
            Self::Object,
        ]
        .into_iter()
        .find(|t| t.as_str() == s)
    }
}

/// One kept result or log, with its body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HandleRecord {
    /// `h_` and 32 random hex digits: the handle the model is given.
    pub id: String,
    pub run_id: String,
    /// The client's name as it introduced itself; only the same client reads the handle.
    pub client: Option<String>,
    pub of: HandleOf,
    pub value_type: JsonType,
    /// The body: a string result's own text, the compact JSON of any other result, the lines
    /// joined by `\n` for logs.
    pub body: String,
    pub created_at_ms: i64,
}

/// A kept handle without its body, for history.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct HandleSummary {
    pub id: String,
    pub of: HandleOf,
    #[serde(rename = "type")]
    pub value_type: JsonType,
    pub bytes: u64,
    pub created_at_ms: i64,
}

/// A kept handle without its body, with who may read it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HandleInfo {
    pub summary: HandleSummary,
    pub run_id: String,
    /// The client's name as it introduced itself.
    pub client: Option<String>,
}

/// How long handles are kept and how many bytes of them at most.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HandleBounds {
    /// A handle created longer ago than this is dropped.
    pub keep_ms: i64,
    /// Past this many bytes of bodies, the oldest handles are dropped.
    pub max_total_bytes: u64,
}

/// Results kept past a run, read back by handle.
pub trait HandleStore: Send + Sync {
    /// Keeps `record`, then drops what the bounds no longer allow (older than `keep_ms` before
    /// the record's time; past `max_total_bytes`, oldest first). One transaction; returns how
    /// many handles were dropped, or `None` (nothing written) when the body alone is over the
    /// byte bound.
    fn put_handle(
        &self,
        record: &HandleRecord,
        bounds: HandleBounds,
    ) -> Result<Option<usize>, StoreError>;

    /// The handle `id` with its whole body, if it is still kept (created at or after
    /// `kept_since_ms`: a handle past its time reads as gone even before the next insert drops
    /// it). A row this build cannot read (an unknown `of` or type) reads as gone.
    fn handle(&self, id: &str, kept_since_ms: i64) -> Result<Option<HandleRecord>, StoreError>;

    /// What is known of handle `id` without reading its body, if it is still kept (as
    /// [`HandleStore::handle`]).
    fn handle_info(&self, id: &str, kept_since_ms: i64) -> Result<Option<HandleInfo>, StoreError>;

    /// Up to `len` bytes of handle `id`'s body from byte `start`, read through SQLite's blob
    /// I/O so that a piece of a large body costs its own size, not the body's. Fewer bytes near
    /// the end; `None` when the handle is gone. The bytes may begin or end inside a UTF-8
    /// character: the caller moves to character boundaries.
    fn handle_bytes(&self, id: &str, start: u64, len: usize)
    -> Result<Option<Vec<u8>>, StoreError>;

    /// The handles a run's attempts made that are still kept (created at or after
    /// `kept_since_ms`), oldest first, without bodies.
    fn handles_of_run(
        &self,
        run_id: &str,
        kept_since_ms: i64,
    ) -> Result<Vec<HandleSummary>, StoreError>;
}

impl HandleStore for crate::SqliteStore {
    fn put_handle(
        &self,
        record: &HandleRecord,
        bounds: HandleBounds,
    ) -> Result<Option<usize>, StoreError> {
        if record.body.len() as u64 > bounds.max_total_bytes {
            return Ok(None);
        }
        let mut conn = self.conn()?;
        let tx = conn.transaction()?;
        tx.execute(
            "INSERT INTO result_handles (id, run_id, client, of, value_type, bytes, body, created_at_ms)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
            params![
                record.id,
                record.run_id,
                record.client,
                record.of.as_str(),
                record.value_type.as_str(),
                i64::try_from(record.body.len()).unwrap_or(i64::MAX),
                record.body,
                record.created_at_ms,
            ],
        )?;
        let mut dropped = tx.execute(
            "DELETE FROM result_handles WHERE created_at_ms < ?1",
            params![record.created_at_ms.saturating_sub(bounds.keep_ms)],
        )?;
        // Newest first, each row with the bytes of itself and every newer one: rows whose sum
        // is over the bound are the oldest that do not fit.
        dropped += tx.execute(
            "DELETE FROM result_handles WHERE id IN (
                SELECT id FROM (
                    SELECT id, SUM(bytes) OVER (ORDER BY created_at_ms DESC, rowid DESC) AS newer
                    FROM result_handles
                ) WHERE newer > ?1
            )",
            params![i64::try_from(bounds.max_total_bytes).unwrap_or(i64::MAX)],
        )?;
        tx.commit()?;
        Ok(Some(dropped))
    }

    fn handle(&self, id: &str, kept_since_ms: i64) -> Result<Option<HandleRecord>, StoreError> {
        let conn = self.conn()?;
        // One read transaction: the body is the one of the row found.
        let tx = conn.unchecked_transaction()?;
        let Some(info) = info_of(&tx, id, kept_since_ms)? else {
            return Ok(None);
        };
        let body: String = tx.query_row(
            "SELECT body FROM result_handles WHERE id = ?1",
            params![id],
            |row| row.get(0),
        )?;
        tx.commit()?;
        Ok(Some(HandleRecord {
            id: info.summary.id,
            run_id: info.run_id,
            client: info.client,
            of: info.summary.of,
            value_type: info.summary.value_type,
            body,
            created_at_ms: info.summary.created_at_ms,
        }))
    }

    fn handle_info(&self, id: &str, kept_since_ms: i64) -> Result<Option<HandleInfo>, StoreError> {
        info_of(&*self.conn()?, id, kept_since_ms)
    }

    fn handle_bytes(
        &self,
        id: &str,
        start: u64,
        len: usize,
    ) -> Result<Option<Vec<u8>>, StoreError> {
        let conn = self.conn()?;
        // One read transaction: the row found is the row read, whatever another hub on the
        // same file deletes meanwhile.
        let tx = conn.unchecked_transaction()?;
        let rowid: Option<i64> = tx
            .query_row(
                "SELECT rowid FROM result_handles WHERE id = ?1",
                params![id],
                |row| row.get(0),
            )
            .optional()?;
        let Some(rowid) = rowid else {
            return Ok(None);
        };
        let blob = tx.blob_open(rusqlite::MAIN_DB, "result_handles", "body", rowid, true)?;
        let size = blob.len();
        let start = usize::try_from(start).unwrap_or(usize::MAX).min(size);
        let mut piece = vec![0; len.min(size - start)];
        let read = blob.read_at(&mut piece, start)?;
        piece.truncate(read);
        drop(blob);
        tx.commit()?;
        Ok(Some(piece))
    }

    fn handles_of_run(
        &self,
        run_id: &str,
        kept_since_ms: i64,
    ) -> Result<Vec<HandleSummary>, StoreError> {
        let conn = self.conn()?;
        let mut select = conn.prepare_cached(
            "SELECT id, of, value_type, bytes, created_at_ms FROM result_handles
             WHERE run_id = ?1 AND created_at_ms >= ?2 ORDER BY created_at_ms, rowid",
        )?;
        let rows = select.query_map(params![run_id, kept_since_ms], summary_of)?;
        let mut out = Vec::new();
        for row in rows {
            out.extend(row?);
        }
        Ok(out)
    }
}

/// The handle `id` without its body, if kept since `kept_since_ms` and readable by this build.
fn info_of(
    conn: &rusqlite::Connection,
    id: &str,
    kept_since_ms: i64,
) -> Result<Option<HandleInfo>, StoreError> {
    let info = conn
        .query_row(
            "SELECT id, of, value_type, bytes, created_at_ms, run_id, client
             FROM result_handles WHERE id = ?1 AND created_at_ms >= ?2",
            params![id, kept_since_ms],
            |row| {
                let Some(summary) = summary_of(row)? else {
                    return Ok(None);
                };
                Ok(Some(HandleInfo {
                    summary,
                    run_id: row.get(5)?,
                    client: row.get(6)?,
                }))
            },
        )
        .optional()?;
    Ok(info.flatten())
}

/// A summary from a row whose first columns are `id, of, value_type, bytes, created_at_ms`;
/// `None` for an `of` or type this build does not know.
fn summary_of(row: &rusqlite::Row<'_>) -> rusqlite::Result<Option<HandleSummary>> {
    let of: String = row.get(1)?;
    let value_type: String = row.get(2)?;
    let (Some(of), Some(value_type)) = (HandleOf::parse(&of), JsonType::parse(&value_type)) else {
        return Ok(None);
    };
    Ok(Some(HandleSummary {
        id: row.get(0)?,
        of,
        value_type,
        bytes: u64::try_from(row.get::<_, i64>(3)?).unwrap_or(0),
        created_at_ms: row.get(4)?,
    }))
}
