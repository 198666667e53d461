//! The sources a person allowed to ask the client's model (capa-store's sampling.rs).

use capa_store::{SamplingStore, StoreError};

use crate::PgStore;

impl SamplingStore for PgStore {
    fn allow_sampling(&self, source_id: &str, now_ms: i64) -> Result<(), StoreError> {
        let source_id = source_id.to_owned();
        self.pool.run(move |c| {
            // Allowed again: the latest time stands, as SQLite's `INSERT OR REPLACE`.
            c.execute(
                "INSERT INTO sampling_allowances (source_id, allowed_at_ms) VALUES ($1, $2)
                 ON CONFLICT (source_id) DO UPDATE SET allowed_at_ms = EXCLUDED.allowed_at_ms",
                &[&source_id, &now_ms],
            )?;
            Ok(())
        })
    }

    fn revoke_sampling(&self, source_id: &str) -> Result<bool, StoreError> {
        let source_id = source_id.to_owned();
        self.pool.run(move |c| {
            Ok(c.execute(
                "DELETE FROM sampling_allowances WHERE source_id = $1",
                &[&source_id],
            )? > 0)
        })
    }

    fn sampling_allowed_sources(&self) -> Result<Vec<String>, StoreError> {
        self.pool.run(|c| {
            // Byte order, as SQLite's: PostgreSQL's default collation would sort by locale.
            Ok(c.query(
                "SELECT source_id FROM sampling_allowances ORDER BY source_id COLLATE \"C\"",
                &[],
            )?
            .iter()
            .map(|row| row.get(0))
            .collect())
        })
    }
}
