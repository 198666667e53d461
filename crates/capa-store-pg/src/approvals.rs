//! Pending inputs of paused runs, per-run grants and used request states (capa-store's
//! approvals.rs). A decision, a use and a state are each taken once: the row count of one
//! conditional statement says whether this caller took it, which holds across hubs too.

use capa_store::{ApprovalRecord, ApprovalStatus, InputKind, InputStore, StoreError};
use postgres::{GenericClient, Row};

use crate::pool::Failed;
use crate::{PgStore, to_u32};

/// The columns of a record, the client last: an input recorded without one names its run's
/// (as SQLite's store reads it).
const COLUMNS: &str = "id, run_id, call_index, kind, address, source, connection, preview, reason,
    args_digest, status, scope, decided_via, created_at_ms, expires_at_ms, decided_at_ms,
    COALESCE(client, (SELECT runs.client FROM runs WHERE runs.id = approvals.run_id))";

/// A stored kind as the store's type; an unknown one (written by a newer hub) is an error, as
/// SQLite's store says.
fn input_kind(text: &str) -> Result<InputKind, Failed> {
    InputKind::parse(text).ok_or_else(|| {
        Failed::Store(StoreError::Backend(
            format!("unknown input kind `{text}`").into(),
        ))
    })
}

fn from_row(row: &Row) -> Result<ApprovalRecord, Failed> {
    Ok(ApprovalRecord {
        id: row.get(0),
        run_id: row.get(1),
        call_index: to_u32(row.get(2)),
        kind: input_kind(row.get(3))?,
        address: row.get(4),
        source: row.get(5),
        connection: row.get(6),
        preview: row.get(7),
        reason: row.get(8),
        args_digest: row.get(9),
        status: ApprovalStatus::parse(row.get(10)),
        scope: row.get(11),
        decided_via: row.get(12),
        created_at_ms: row.get(13),
        expires_at_ms: row.get(14),
        decided_at_ms: row.get(15),
        client: row.get(16),
    })
}

fn from_rows(rows: &[Row]) -> Result<Vec<ApprovalRecord>, Failed> {
    rows.iter().map(from_row).collect()
}

/// Marks pending inputs past their expiry as expired; how many.
fn expire(c: &mut impl GenericClient, now_ms: i64) -> Result<usize, Failed> {
    let changed = c.execute(
        "UPDATE approvals SET status = 'expired', decided_at_ms = $1
         WHERE status = 'pending' AND expires_at_ms <= $1",
        &[&now_ms],
    )?;
    Ok(usize::try_from(changed).unwrap_or(usize::MAX))
}

impl InputStore for PgStore {
    fn insert_approval(&self, record: &ApprovalRecord) -> Result<ApprovalRecord, StoreError> {
        let r = record.clone();
        let me = self.id.clone();
        self.pool.run(move |c| {
            let mut tx = c.transaction()?;
            // Any conflict keeps the row there, as SQLite's `INSERT OR IGNORE`; the read then
            // answers the record of this call, whoever wrote it (READ COMMITTED: this statement
            // sees a row another hub committed while the insert waited for it).
            tx.execute(
                "INSERT INTO approvals (id, run_id, call_index, kind, address, source, connection,
                     preview, reason, args_digest, status, scope, decided_via, created_at_ms,
                     expires_at_ms, decided_at_ms, client)
                 VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17)
                 ON CONFLICT DO NOTHING",
                &[
                    &r.id,
                    &r.run_id,
                    &i64::from(r.call_index),
                    &r.kind.as_str(),
                    &r.address,
                    &r.source,
                    &r.connection,
                    &r.preview,
                    &r.reason,
                    &r.args_digest,
                    &r.status.as_str(),
                    &r.scope,
                    &r.decided_via,
                    &r.created_at_ms,
                    &r.expires_at_ms,
                    &r.decided_at_ms,
                    &r.client,
                ],
            )?;
            let stored = from_row(&tx.query_one(
                &format!("SELECT {COLUMNS} FROM approvals WHERE run_id = $1 AND call_index = $2"),
                &[&r.run_id, &i64::from(r.call_index)],
            )?)?;
            crate::changes::announce(&mut tx, &me)?;
            tx.commit()?;
            Ok(stored)
        })
    }

    fn forget_connection_input(&self, id: &str) -> Result<(), StoreError> {
        let id = id.to_owned();
        let me = self.id.clone();
        self.pool.run(move |c| {
            let forgotten = c.execute(
                "DELETE FROM approvals WHERE id = $1 AND kind = 'connection'",
                &[&id],
            )?;
            if forgotten > 0 {
                crate::changes::announce(c, &me)?;
            }
            Ok(())
        })
    }

    fn approval_for_call(
        &self,
        run_id: &str,
        call_index: u32,
    ) -> Result<Option<ApprovalRecord>, StoreError> {
        let run_id = run_id.to_owned();
        self.pool.run(move |c| {
            c.query_opt(
                &format!("SELECT {COLUMNS} FROM approvals WHERE run_id = $1 AND call_index = $2"),
                &[&run_id, &i64::from(call_index)],
            )?
            .as_ref()
            .map(from_row)
            .transpose()
        })
    }

    fn approval(&self, id: &str) -> Result<Option<ApprovalRecord>, StoreError> {
        let id = id.to_owned();
        self.pool.run(move |c| {
            c.query_opt(
                &format!("SELECT {COLUMNS} FROM approvals WHERE id = $1"),
                &[&id],
            )?
            .as_ref()
            .map(from_row)
            .transpose()
        })
    }

    fn approvals_of_run(&self, run_id: &str) -> Result<Vec<ApprovalRecord>, StoreError> {
        let run_id = run_id.to_owned();
        self.pool.run(move |c| {
            from_rows(&c.query(
                &format!("SELECT {COLUMNS} FROM approvals WHERE run_id = $1 ORDER BY call_index"),
                &[&run_id],
            )?)
        })
    }

    fn pending_approvals(&self, now_ms: i64) -> Result<Vec<ApprovalRecord>, StoreError> {
        self.pool.run(move |c| {
            expire(c, now_ms)?;
            // Ties in byte order, as SQLite's: a database's own collation may sort by locale.
            from_rows(&c.query(
                &format!(
                    "SELECT {COLUMNS} FROM approvals WHERE status = 'pending'
                     ORDER BY created_at_ms, run_id COLLATE \"C\", call_index"
                ),
                &[],
            )?)
        })
    }

    fn expire_approvals(&self, now_ms: i64) -> Result<usize, StoreError> {
        self.pool.run(move |c| expire(c, now_ms))
    }

    fn end_connection_inputs_of_run(&self, run_id: &str, now_ms: i64) -> Result<usize, StoreError> {
        let run_id = run_id.to_owned();
        let me = self.id.clone();
        self.pool.run(move |c| {
            let changed = c.execute(
                "UPDATE approvals SET status = 'expired', decided_via = 'run_ended',
                     decided_at_ms = $2
                 WHERE run_id = $1 AND kind = 'connection' AND status = 'pending'",
                &[&run_id, &now_ms],
            )?;
            if changed > 0 {
                crate::changes::announce(c, &me)?;
            }
            Ok(usize::try_from(changed).unwrap_or(usize::MAX))
        })
    }

    fn decide_approval(
        &self,
        id: &str,
        status: ApprovalStatus,
        scope: Option<&str>,
        via: &str,
        now_ms: i64,
    ) -> Result<bool, StoreError> {
        let (id, scope, via) = (id.to_owned(), scope.map(str::to_owned), via.to_owned());
        let me = self.id.clone();
        self.pool.run(move |c| {
            expire(c, now_ms)?;
            // Another hub deciding at once: PostgreSQL makes this update wait for its, then
            // checks `pending` again on the row it left, so only one of the two counts.
            let mut tx = c.transaction()?;
            let changed = tx.execute(
                "UPDATE approvals SET status = $2, scope = $3, decided_via = $4, decided_at_ms = $5
                 WHERE id = $1 AND status = 'pending'",
                &[&id, &status.as_str(), &scope, &via, &now_ms],
            )?;
            if changed == 1 {
                crate::changes::announce(&mut tx, &me)?;
            }
            tx.commit()?;
            Ok(changed == 1)
        })
    }

    fn use_approval(&self, id: &str) -> Result<bool, StoreError> {
        let id = id.to_owned();
        self.pool.run(move |c| {
            let changed = c.execute(
                "UPDATE approvals SET status = 'used' WHERE id = $1 AND status = 'approved'",
                &[&id],
            )?;
            Ok(changed == 1)
        })
    }

    fn grant_for_run(&self, run_id: &str, address: &str) -> Result<(), StoreError> {
        let (run_id, address) = (run_id.to_owned(), address.to_owned());
        self.pool.run(move |c| {
            c.execute(
                "INSERT INTO run_grants (run_id, address) VALUES ($1, $2) ON CONFLICT DO NOTHING",
                &[&run_id, &address],
            )?;
            Ok(())
        })
    }

    fn is_granted_for_run(&self, run_id: &str, address: &str) -> Result<bool, StoreError> {
        let (run_id, address) = (run_id.to_owned(), address.to_owned());
        self.pool.run(move |c| {
            Ok(c.query_opt(
                "SELECT 1 FROM run_grants WHERE run_id = $1 AND address = $2",
                &[&run_id, &address],
            )?
            .is_some())
        })
    }

    fn consume_state(&self, digest: &str, now_ms: i64) -> Result<bool, StoreError> {
        let digest = digest.to_owned();
        self.pool.run(move |c| {
            // One statement: a second insert of the digest waits for the first to commit and
            // then changes nothing, so exactly one caller sees a row written.
            let changed = c.execute(
                "INSERT INTO consumed_states (digest, consumed_at_ms) VALUES ($1, $2)
                 ON CONFLICT DO NOTHING",
                &[&digest, &now_ms],
            )?;
            Ok(changed == 1)
        })
    }
}
