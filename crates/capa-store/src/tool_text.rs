//! Which flagged tool texts a person accepted (docs/tool-text.md): `(address, digest of the
//! text)`, so that the same tool with other text is flagged again.

use std::collections::HashSet;

use rusqlite::params;

use crate::StoreError;

/// Tool texts a person accepted.
pub trait ToolTextStore: Send + Sync {
    /// Every accepted `(address, text digest)`.
    fn accepted_tool_texts(&self) -> Result<HashSet<(String, String)>, StoreError>;

    /// Records that a person accepted the text of `address` whose digest is `digest`.
    fn accept_tool_text(&self, address: &str, digest: &str, now_ms: i64) -> Result<(), StoreError>;
}

impl ToolTextStore for crate::SqliteStore {
    fn accepted_tool_texts(&self) -> Result<HashSet<(String, String)>, StoreError> {
        let conn = self.conn()?;
        let mut statement =
            conn.prepare_cached("SELECT address, text_digest FROM accepted_tool_texts")?;
        let rows = statement
            .query_map([], |row| Ok((row.get(0)?, row.get(1)?)))?
            .collect::<Result<_, _>>()?;
        Ok(rows)
    }

    fn accept_tool_text(&self, address: &str, digest: &str, now_ms: i64) -> Result<(), StoreError> {
        self.conn()?.execute(
            "INSERT INTO accepted_tool_texts (address, text_digest, accepted_at_ms)
             VALUES (?1, ?2, ?3)
             ON CONFLICT (address, text_digest) DO UPDATE SET accepted_at_ms = ?3",
            params![address, digest, now_ms],
        )?;
        Ok(())
    }
}
