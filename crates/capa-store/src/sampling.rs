//! The sources a person allowed to ask the client's model (sampling, `sampling/createMessage`).
//! Without a row a source's sampling request is refused (docs/relay.md, "Sampling needs a
//! person's yes").

use rusqlite::params;

use crate::{Store, StoreError};

impl Store {
    /// Allows `source_id` to ask the client's model (a person's act).
    pub fn allow_sampling(&self, source_id: &str, now_ms: i64) -> Result<(), StoreError> {
        self.conn()?.execute(
            "INSERT OR REPLACE INTO sampling_allowances (source_id, allowed_at_ms) VALUES (?1, ?2)",
            params![source_id, now_ms],
        )?;
        Ok(())
    }

    /// Takes the allowance back; false when there was none.
    pub fn revoke_sampling(&self, source_id: &str) -> Result<bool, StoreError> {
        Ok(self.conn()?.execute(
            "DELETE FROM sampling_allowances WHERE source_id = ?1",
            params![source_id],
        )? > 0)
    }

    /// Every source allowed to ask the client's model.
    pub fn sampling_allowed_sources(&self) -> Result<Vec<String>, StoreError> {
        let conn = self.conn()?;
        let mut statement =
            conn.prepare("SELECT source_id FROM sampling_allowances ORDER BY source_id")?;
        let rows = statement.query_map([], |row| row.get(0))?;
        Ok(rows.collect::<Result<_, _>>()?)
    }
}

#[cfg(test)]
mod tests {
    use crate::Store;

    #[test]
    fn an_allowance_is_kept_until_revoked() {
        let store = Store::in_memory().expect("store");
        assert!(store.sampling_allowed_sources().expect("read").is_empty());
        store.allow_sampling("everything", 1).expect("allow");
        store.allow_sampling("everything", 2).expect("allow again");
        assert_eq!(
            store.sampling_allowed_sources().expect("read"),
            vec!["everything".to_owned()]
        );
        assert!(store.revoke_sampling("everything").expect("revoke"));
        assert!(!store.revoke_sampling("everything").expect("revoke again"));
    }
}
