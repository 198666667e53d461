//! Which hub process's client form asks about a pending input now. Each hub keeps its own
//! claims in memory; this table mirrors them for the other hubs on the same data dir (the
//! desktop app's popup must wait while a project hub's client shows its form).

use rusqlite::params;

use crate::StoreError;
use crate::runs::RunOwner;

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

/// Form claims: which hub process asks a client's form for an input.
pub trait ClaimStore: Send + Sync {
    /// Records (or replaces) the claim on `claim.approval_id`.
    fn put_input_claim(&self, claim: &InputClaim) -> Result<(), StoreError>;

    /// Drops the claim on `approval_id` if `owner` holds it.
    fn drop_input_claim(&self, approval_id: &str, owner: RunOwner) -> Result<(), StoreError>;

    /// The claim on `approval_id` in force at `now_ms`, whoever holds it.
    fn input_claim(&self, approval_id: &str, now_ms: i64)
    -> Result<Option<InputClaim>, StoreError>;
}

impl ClaimStore for crate::SqliteStore {
    fn put_input_claim(&self, claim: &InputClaim) -> Result<(), StoreError> {
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

    fn drop_input_claim(&self, approval_id: &str, owner: RunOwner) -> Result<(), StoreError> {
        self.conn()?.execute(
            "DELETE FROM input_claims WHERE approval_id = ?1 AND owner_pid = ?2 AND owner_started_ms = ?3",
            params![approval_id, owner.pid, owner.started_ms],
        )?;
        Ok(())
    }

    fn input_claim(
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
