//! The policy a person confirmed, kept beside the policy file: the hub holds back a change of
//! the file that loosens it until a person confirms the change.

use rusqlite::{OptionalExtension, params};

use crate::{Store, StoreError};

impl Store {
    /// The confirmed rules (JSON text), `None` before the first confirmation.
    pub fn confirmed_policy(&self) -> Result<Option<String>, StoreError> {
        Ok(self
            .conn()?
            .query_row(
                "SELECT rules FROM confirmed_policy WHERE id = 1",
                [],
                |row| row.get(0),
            )
            .optional()?)
    }

    /// Records `rules` (JSON text) as what a person confirmed.
    pub fn set_confirmed_policy(&self, rules: &str, now_ms: i64) -> Result<(), StoreError> {
        self.conn()?.execute(
            "INSERT INTO confirmed_policy (id, rules, confirmed_at_ms) VALUES (1, ?1, ?2)
             ON CONFLICT (id) DO UPDATE SET rules = ?1, confirmed_at_ms = ?2",
            params![rules, now_ms],
        )?;
        Ok(())
    }
}
