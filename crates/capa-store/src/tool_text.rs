//! Which flagged tool texts a person accepted (docs/tool-text.md): `(address, digest of the
//! text)`, so that the same tool with other text is flagged again.

use std::collections::HashSet;

use rusqlite::params;

use crate::{Store, StoreError};

impl Store {
    /// Every accepted `(address, text digest)`.
    pub fn accepted_tool_texts(&self) -> Result<HashSet<(String, String)>, StoreError> {
        let conn = self.conn()?;
        let mut statement =
            conn.prepare_cached("SELECT address, text_digest FROM accepted_tool_texts")?;
        let rows = statement
            .query_map([], |row| Ok((row.get(0)?, row.get(1)?)))?
            .collect::<Result<_, _>>()?;
        Ok(rows)
    }

    /// Records that a person accepted the text of `address` whose digest is `digest`.
    pub fn accept_tool_text(
        &self,
        address: &str,
        digest: &str,
        now_ms: i64,
    ) -> Result<(), StoreError> {
        self.conn()?.execute(
            "INSERT INTO accepted_tool_texts (address, text_digest, accepted_at_ms)
             VALUES (?1, ?2, ?3)
             ON CONFLICT (address, text_digest) DO UPDATE SET accepted_at_ms = ?3",
            params![address, digest, now_ms],
        )?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use crate::Store;

    #[test]
    fn an_accepted_text_is_kept_per_address_and_digest() {
        let store = Store::in_memory().expect("store");
        assert!(store.accepted_tool_texts().expect("read").is_empty());
        store
            .accept_tool_text("poison.add", "d1", 1)
            .expect("accept");
        store
            .accept_tool_text("poison.add", "d1", 2)
            .expect("again");
        let accepted = store.accepted_tool_texts().expect("read");
        assert_eq!(accepted.len(), 1);
        assert!(accepted.contains(&("poison.add".to_owned(), "d1".to_owned())));
        assert!(!accepted.contains(&("poison.add".to_owned(), "d2".to_owned())));
    }
}
