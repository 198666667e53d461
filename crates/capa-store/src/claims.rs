//! Which hub process's client form asks about a pending input now. Each hub keeps its own
//! claims in memory; this table mirrors them for the other hubs on the same data dir (the
//! desktop app's popup must wait while a project hub's client shows its form).

use rusqlite::params;

use crate::runs::RunOwner;
use crate::{Store, StoreError};

/// A claim another process may hold on an input.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InputClaim {
    pub approval_id: String,
    pub owner: RunOwner,
    /// The channel's own words, as JSON (`{"kind":"clientForm","client":"Claude Code"}`).
    pub channel: String,
    /// Until when; none until released.
    pub until_ms: Option<i64>,
}

impl Store {
    /// Records (or replaces) the claim on `claim.approval_id`.
    pub fn put_input_claim(&self, claim: &InputClaim) -> Result<(), StoreError> {
        self.conn()?.execute(
            "INSERT OR REPLACE INTO input_claims (approval_id, owner_pid, owner_started_ms, channel, until_ms)
             VALUES (?1, ?2, ?3, ?4, ?5)",
            params![
                claim.approval_id,
                claim.owner.pid,
                claim.owner.started_ms,
                claim.channel,
                claim.until_ms
            ],
        )?;
        Ok(())
    }

    /// Drops the claim on `approval_id` if `owner` holds it.
    pub fn drop_input_claim(&self, approval_id: &str, owner: RunOwner) -> Result<(), StoreError> {
        self.conn()?.execute(
            "DELETE FROM input_claims WHERE approval_id = ?1 AND owner_pid = ?2 AND owner_started_ms = ?3",
            params![approval_id, owner.pid, owner.started_ms],
        )?;
        Ok(())
    }

    /// The claim on `approval_id` in force at `now_ms`, whoever holds it.
    pub fn input_claim(
        &self,
        approval_id: &str,
        now_ms: i64,
    ) -> Result<Option<InputClaim>, StoreError> {
        use rusqlite::OptionalExtension;
        Ok(self
            .conn()?
            .query_row(
                "SELECT approval_id, owner_pid, owner_started_ms, channel, until_ms FROM input_claims
                 WHERE approval_id = ?1 AND (until_ms IS NULL OR until_ms > ?2)",
                params![approval_id, now_ms],
                |row| {
                    Ok(InputClaim {
                        approval_id: row.get(0)?,
                        owner: RunOwner {
                            pid: row.get(1)?,
                            started_ms: row.get(2)?,
                        },
                        channel: row.get(3)?,
                        until_ms: row.get(4)?,
                    })
                },
            )
            .optional()?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_claim_is_seen_until_its_deadline_and_dropped_only_by_its_owner() {
        let store = Store::in_memory().expect("store");
        let owner = RunOwner {
            pid: 9,
            started_ms: 1,
        };
        let claim = InputClaim {
            approval_id: "apr_1".into(),
            owner,
            channel: "{}".into(),
            until_ms: Some(100),
        };
        store.put_input_claim(&claim).expect("put");
        assert_eq!(store.input_claim("apr_1", 99).expect("read"), Some(claim));
        assert_eq!(
            store.input_claim("apr_1", 100).expect("read"),
            None,
            "past its deadline"
        );
        let other = RunOwner {
            pid: 9,
            started_ms: 2,
        };
        store.drop_input_claim("apr_1", other).expect("drop");
        assert!(
            store.input_claim("apr_1", 50).expect("read").is_some(),
            "not theirs to drop"
        );
        store.drop_input_claim("apr_1", owner).expect("drop");
        assert!(store.input_claim("apr_1", 50).expect("read").is_none());
    }
}
