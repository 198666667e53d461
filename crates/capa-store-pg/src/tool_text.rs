//! Which flagged tool texts a person accepted (capa-store's `tool_text.rs`).

use std::collections::HashSet;

use capa_store::{StoreError, ToolTextStore};

use crate::PgStore;

impl ToolTextStore for PgStore {
    fn accepted_tool_texts(&self) -> Result<HashSet<(String, String)>, StoreError> {
        self.pool.run(|c| {
            Ok(
                c.query("SELECT address, text_digest FROM accepted_tool_texts", &[])?
                    .iter()
                    .map(|row| (row.get(0), row.get(1)))
                    .collect(),
            )
        })
    }

    fn accept_tool_text(&self, address: &str, digest: &str, now_ms: i64) -> Result<(), StoreError> {
        let (address, digest) = (address.to_owned(), digest.to_owned());
        self.pool.run(move |c| {
            c.execute(
                "INSERT INTO accepted_tool_texts (address, text_digest, accepted_at_ms)
                 VALUES ($1, $2, $3)
                 ON CONFLICT (address, text_digest) DO UPDATE SET accepted_at_ms = EXCLUDED.accepted_at_ms",
                &[&address, &digest, &now_ms],
            )?;
            Ok(())
        })
    }
}
