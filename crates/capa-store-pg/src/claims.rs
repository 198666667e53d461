//! Which hub process's client form asks about a pending input now (capa-store's claims.rs):
//! the claims each hub keeps in memory, mirrored for the other hubs on the same data.

use capa_store::{ClaimStore, InputClaim, RunOwner, StoreError};

use crate::{PgStore, to_u32};

impl ClaimStore for PgStore {
    fn put_input_claim(&self, claim: &InputClaim) -> Result<(), StoreError> {
        let claim = claim.clone();
        self.pool.run(move |c| {
            // The last claim put wins, as SQLite's `INSERT OR REPLACE`.
            c.execute(
                "INSERT INTO input_claims (approval_id, owner_pid, owner_started_ms, channel, until_ms)
                 VALUES ($1, $2, $3, $4, $5)
                 ON CONFLICT (approval_id) DO UPDATE SET owner_pid = EXCLUDED.owner_pid,
                     owner_started_ms = EXCLUDED.owner_started_ms, channel = EXCLUDED.channel,
                     until_ms = EXCLUDED.until_ms",
                &[
                    &claim.approval_id,
                    &i64::from(claim.owner.pid),
                    &claim.owner.started_ms,
                    &claim.channel,
                    &claim.until_ms,
                ],
            )?;
            Ok(())
        })
    }

    fn drop_input_claim(&self, approval_id: &str, owner: RunOwner) -> Result<(), StoreError> {
        let approval_id = approval_id.to_owned();
        self.pool.run(move |c| {
            c.execute(
                "DELETE FROM input_claims
                 WHERE approval_id = $1 AND owner_pid = $2 AND owner_started_ms = $3",
                &[&approval_id, &i64::from(owner.pid), &owner.started_ms],
            )?;
            Ok(())
        })
    }

    fn input_claim(
        &self,
        approval_id: &str,
        now_ms: i64,
    ) -> Result<Option<InputClaim>, StoreError> {
        let approval_id = approval_id.to_owned();
        self.pool.run(move |c| {
            Ok(c.query_opt(
                "SELECT approval_id, owner_pid, owner_started_ms, channel, until_ms
                 FROM input_claims
                 WHERE approval_id = $1 AND (until_ms IS NULL OR until_ms > $2)",
                &[&approval_id, &now_ms],
            )?
            .map(|row| InputClaim {
                approval_id: row.get(0),
                owner: RunOwner {
                    pid: to_u32(row.get(1)),
                    started_ms: row.get(2),
                },
                channel: row.get(3),
                until_ms: row.get(4),
            }))
        })
    }
}
