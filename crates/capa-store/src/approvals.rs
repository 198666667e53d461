//! Pending inputs of paused runs (approvals and missing connections), what a person granted a
//! run, and the `requestState` values already used. Every change is its own committed
//! statement, so a hub killed at any point comes back with exactly what was decided.

use rusqlite::{OptionalExtension, params};

use crate::StoreError;

/// Where an approval stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ApprovalStatus {
    Pending,
    Approved,
    Denied,
    /// Nobody decided within `approvalTtlMs`.
    Expired,
    /// A missing connection that has since been added.
    Resolved,
    /// An approved direct call that has run: its approval is spent.
    Used,
}

impl ApprovalStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Pending => "pending",
            Self::Approved => "approved",
            Self::Denied => "denied",
            Self::Expired => "expired",
            Self::Resolved => "resolved",
            Self::Used => "used",
        }
    }

    /// The value stored as `text` (every backend stores [`Self::as_str`]).
    pub fn parse(text: &str) -> Self {
        match text {
            "approved" => Self::Approved,
            "denied" => Self::Denied,
            "expired" => Self::Expired,
            "resolved" => Self::Resolved,
            "used" => Self::Used,
            _ => Self::Pending,
        }
    }
}

/// One pending input of a run, as stored. Texts are already redacted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApprovalRecord {
    /// `apr_` and 16 hex digits.
    pub id: String,
    pub run_id: String,
    /// The call's position in the run's issue order.
    pub call_index: u32,
    pub kind: crate::InputKind,
    pub address: String,
    pub source: String,
    pub connection: Option<String>,
    /// The redacted argument preview, as JSON text.
    pub preview: String,
    /// Why a person is asked.
    pub reason: String,
    /// SHA-256 of the real arguments: a decision applies to exactly these.
    pub args_digest: String,
    pub status: ApprovalStatus,
    /// `once`, `run` or `always` for approvals.
    pub scope: Option<String>,
    /// Where it was decided: `client`, `elicitation`, `page`, `cli`, `app`.
    pub decided_via: Option<String>,
    pub created_at_ms: i64,
    pub expires_at_ms: i64,
    pub decided_at_ms: Option<i64>,
    /// The client that asks ("name version", as `capa_domain::client_label` made it); for an
    /// input recorded before the store kept it (schema 9), the client of its run.
    pub client: Option<String>,
}

/// The client of an input, selected after [`COLUMNS`].
const CLIENT: &str =
    "COALESCE(client, (SELECT runs.client FROM runs WHERE runs.id = approvals.run_id))";

const COLUMNS: &str = "id, run_id, call_index, kind, address, source, connection, preview, reason, args_digest, status, scope, decided_via, created_at_ms, expires_at_ms, decided_at_ms";

fn from_row(row: &rusqlite::Row<'_>) -> rusqlite::Result<ApprovalRecord> {
    Ok(ApprovalRecord {
        id: row.get(0)?,
        run_id: row.get(1)?,
        call_index: row.get(2)?,
        kind: row.get(3)?,
        address: row.get(4)?,
        source: row.get(5)?,
        connection: row.get(6)?,
        preview: row.get(7)?,
        reason: row.get(8)?,
        args_digest: row.get(9)?,
        status: ApprovalStatus::parse(&row.get::<_, String>(10)?),
        scope: row.get(11)?,
        decided_via: row.get(12)?,
        created_at_ms: row.get(13)?,
        expires_at_ms: row.get(14)?,
        decided_at_ms: row.get(15)?,
        client: row.get(16)?,
    })
}

/// Inputs a run waits for (approvals, connections), their decisions, per-run grants and consumed request states.
pub trait InputStore: Send + Sync {
    /// Records a pending input; when the run already has one for this call, keeps that one and
    /// returns it (a replay reaches the same call again).
    fn insert_approval(&self, record: &ApprovalRecord) -> Result<ApprovalRecord, StoreError>;

    /// Forgets a connection input whose connection came, so that its call can record the
    /// approval it needs now (one call has one input). An approval is never forgotten.
    fn forget_connection_input(&self, id: &str) -> Result<(), StoreError>;

    /// The input recorded for one call of a run, if any.
    fn approval_for_call(
        &self,
        run_id: &str,
        call_index: u32,
    ) -> Result<Option<ApprovalRecord>, StoreError>;

    fn approval(&self, id: &str) -> Result<Option<ApprovalRecord>, StoreError>;

    /// Every input of a run, in call order.
    fn approvals_of_run(&self, run_id: &str) -> Result<Vec<ApprovalRecord>, StoreError>;

    /// Every pending input of every run, oldest first (expired ones are marked first).
    fn pending_approvals(&self, now_ms: i64) -> Result<Vec<ApprovalRecord>, StoreError>;

    /// Marks pending inputs past their expiry as expired.
    fn expire_approvals(&self, now_ms: i64) -> Result<usize, StoreError>;

    /// Ends the connection inputs still pending of a run that ended without reaching their
    /// calls again (its replay took another way, or failed before them: a tool that code named
    /// before its source listed tools may not exist), so that no person is asked to connect for
    /// a run that waits for nothing. Recorded as expired, `decided_via` `run_ended`.
    fn end_connection_inputs_of_run(&self, run_id: &str, now_ms: i64) -> Result<usize, StoreError>;

    /// Decides a pending input. Returns false when it was no longer pending (decided already,
    /// or expired): a decision is taken once.
    fn decide_approval(
        &self,
        id: &str,
        status: ApprovalStatus,
        scope: Option<&str>,
        via: &str,
        now_ms: i64,
    ) -> Result<bool, StoreError>;

    /// Spends an approved input (a direct call runs once per approval). False when it was not
    /// approved, or was spent already.
    fn use_approval(&self, id: &str) -> Result<bool, StoreError>;

    /// Lets every later call of `address` in this run go ahead without asking.
    fn grant_for_run(&self, run_id: &str, address: &str) -> Result<(), StoreError>;

    fn is_granted_for_run(&self, run_id: &str, address: &str) -> Result<bool, StoreError>;

    /// Records a `requestState` (by digest) as used. False when it was used before: each state
    /// is accepted once.
    fn consume_state(&self, digest: &str, now_ms: i64) -> Result<bool, StoreError>;
}

impl InputStore for crate::SqliteStore {
    fn insert_approval(&self, record: &ApprovalRecord) -> Result<ApprovalRecord, StoreError> {
        let conn = self.conn()?;
        conn.execute(
            &format!(
                "INSERT OR IGNORE INTO approvals ({COLUMNS}, client)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17)"
            ),
            params![
                record.id,
                record.run_id,
                record.call_index,
                record.kind,
                record.address,
                record.source,
                record.connection,
                record.preview,
                record.reason,
                record.args_digest,
                record.status.as_str(),
                record.scope,
                record.decided_via,
                record.created_at_ms,
                record.expires_at_ms,
                record.decided_at_ms,
                record.client
            ],
        )?;
        Ok(conn.query_row(
            &format!(
                "SELECT {COLUMNS}, {CLIENT} FROM approvals WHERE run_id = ?1 AND call_index = ?2"
            ),
            params![record.run_id, record.call_index],
            from_row,
        )?)
    }

    fn forget_connection_input(&self, id: &str) -> Result<(), StoreError> {
        self.conn()?.execute(
            "DELETE FROM approvals WHERE id = ?1 AND kind = 'connection'",
            params![id],
        )?;
        Ok(())
    }

    fn approval_for_call(
        &self,
        run_id: &str,
        call_index: u32,
    ) -> Result<Option<ApprovalRecord>, StoreError> {
        Ok(self
            .conn()?
            .prepare_cached(&format!(
                "SELECT {COLUMNS}, {CLIENT} FROM approvals WHERE run_id = ?1 AND call_index = ?2"
            ))?
            .query_row(params![run_id, call_index], from_row)
            .optional()?)
    }

    fn approval(&self, id: &str) -> Result<Option<ApprovalRecord>, StoreError> {
        Ok(self
            .conn()?
            .query_row(
                &format!("SELECT {COLUMNS}, {CLIENT} FROM approvals WHERE id = ?1"),
                params![id],
                from_row,
            )
            .optional()?)
    }

    fn approvals_of_run(&self, run_id: &str) -> Result<Vec<ApprovalRecord>, StoreError> {
        let conn = self.conn()?;
        let mut statement = conn.prepare(&format!(
            "SELECT {COLUMNS}, {CLIENT} FROM approvals WHERE run_id = ?1 ORDER BY call_index"
        ))?;
        let rows = statement
            .query_map(params![run_id], from_row)?
            .collect::<Result<_, _>>()?;
        Ok(rows)
    }

    fn pending_approvals(&self, now_ms: i64) -> Result<Vec<ApprovalRecord>, StoreError> {
        self.expire_approvals(now_ms)?;
        let conn = self.conn()?;
        let mut statement = conn.prepare(&format!(
            "SELECT {COLUMNS}, {CLIENT} FROM approvals WHERE status = 'pending'
             ORDER BY created_at_ms, run_id, call_index"
        ))?;
        let rows = statement
            .query_map([], from_row)?
            .collect::<Result<_, _>>()?;
        Ok(rows)
    }

    fn expire_approvals(&self, now_ms: i64) -> Result<usize, StoreError> {
        Ok(self.conn()?.execute(
            "UPDATE approvals SET status = 'expired', decided_at_ms = ?1
             WHERE status = 'pending' AND expires_at_ms <= ?1",
            params![now_ms],
        )?)
    }

    fn end_connection_inputs_of_run(&self, run_id: &str, now_ms: i64) -> Result<usize, StoreError> {
        Ok(self.conn()?.execute(
            "UPDATE approvals SET status = 'expired', decided_via = 'run_ended', decided_at_ms = ?2
             WHERE run_id = ?1 AND kind = 'connection' AND status = 'pending'",
            params![run_id, now_ms],
        )?)
    }

    fn decide_approval(
        &self,
        id: &str,
        status: ApprovalStatus,
        scope: Option<&str>,
        via: &str,
        now_ms: i64,
    ) -> Result<bool, StoreError> {
        self.expire_approvals(now_ms)?;
        let changed = self.conn()?.execute(
            "UPDATE approvals SET status = ?2, scope = ?3, decided_via = ?4, decided_at_ms = ?5
             WHERE id = ?1 AND status = 'pending'",
            params![id, status.as_str(), scope, via, now_ms],
        )?;
        Ok(changed == 1)
    }

    fn use_approval(&self, id: &str) -> Result<bool, StoreError> {
        let changed = self.conn()?.execute(
            "UPDATE approvals SET status = 'used' WHERE id = ?1 AND status = 'approved'",
            params![id],
        )?;
        Ok(changed == 1)
    }

    fn grant_for_run(&self, run_id: &str, address: &str) -> Result<(), StoreError> {
        self.conn()?.execute(
            "INSERT OR IGNORE INTO run_grants (run_id, address) VALUES (?1, ?2)",
            params![run_id, address],
        )?;
        Ok(())
    }

    fn is_granted_for_run(&self, run_id: &str, address: &str) -> Result<bool, StoreError> {
        Ok(self
            .conn()?
            .query_row(
                "SELECT 1 FROM run_grants WHERE run_id = ?1 AND address = ?2",
                params![run_id, address],
                |_| Ok(()),
            )
            .optional()?
            .is_some())
    }

    fn consume_state(&self, digest: &str, now_ms: i64) -> Result<bool, StoreError> {
        let changed = self.conn()?.execute(
            "INSERT OR IGNORE INTO consumed_states (digest, consumed_at_ms) VALUES (?1, ?2)",
            params![digest, now_ms],
        )?;
        Ok(changed == 1)
    }
}
