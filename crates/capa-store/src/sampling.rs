//! The sources a person allowed to ask the client's model (sampling, `sampling/createMessage`).
//! Without a row a source's sampling request is refused (docs/relay.md, "Sampling needs a
//! person's yes").

use rusqlite::params;

use crate::StoreError;

/// Sources a person allowed to ask the client for sampling.
pub trait SamplingStore: Send + Sync {
    /// Allows `source_id` to ask the client's model (a person's act).
    fn allow_sampling(&self, source_id: &str, now_ms: i64) -> Result<(), StoreError>;

    /// Takes the allowance back; false when there was none.
    fn revoke_sampling(&self, source_id: &str) -> Result<bool, StoreError>;

    /// Every source allowed to ask the client's model.
    fn sampling_allowed_sources(&self) -> Result<Vec<String>, StoreError>;
}

impl SamplingStore for crate::SqliteStore {
    fn allow_sampling(&self, source_id: &str, now_ms: i64) -> Result<(), StoreError> {
        self.conn()?.execute(
            "INSERT OR REPLACE INTO sampling_allowances (source_id, allowed_at_ms) VALUES (?1, ?2)",
            params![source_id, now_ms],
        )?;
        Ok(())
    }

    fn revoke_sampling(&self, source_id: &str) -> Result<bool, StoreError> {
        Ok(self.conn()?.execute(
            "DELETE FROM sampling_allowances WHERE source_id = ?1",
            params![source_id],
        )? > 0)
    }

    fn sampling_allowed_sources(&self) -> Result<Vec<String>, StoreError> {
        let conn = self.conn()?;
        let mut statement =
            conn.prepare("SELECT source_id FROM sampling_allowances ORDER BY source_id")?;
        let rows = statement.query_map([], |row| row.get(0))?;
        Ok(rows.collect::<Result<_, _>>()?)
    }
}
