//! Pending inputs of paused runs (approvals and missing connections), what a person granted a
//! run, and the `requestState` values already used. Every change is its own committed
//! statement, so a hub killed at any point comes back with exactly what was decided.

use rusqlite::{OptionalExtension, params};

use crate::{Store, StoreError};

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

    fn parse(text: &str) -> Self {
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

impl Store {
    /// Records a pending input; when the run already has one for this call, keeps that one and
    /// returns it (a replay reaches the same call again).
    pub fn insert_approval(&self, record: &ApprovalRecord) -> Result<ApprovalRecord, StoreError> {
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

    /// Forgets a connection input whose connection came, so that its call can record the
    /// approval it needs now (one call has one input). An approval is never forgotten.
    pub fn forget_connection_input(&self, id: &str) -> Result<(), StoreError> {
        self.conn()?.execute(
            "DELETE FROM approvals WHERE id = ?1 AND kind = 'connection'",
            params![id],
        )?;
        Ok(())
    }

    /// The input recorded for one call of a run, if any.
    pub fn approval_for_call(
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

    pub fn approval(&self, id: &str) -> Result<Option<ApprovalRecord>, StoreError> {
        Ok(self
            .conn()?
            .query_row(
                &format!("SELECT {COLUMNS}, {CLIENT} FROM approvals WHERE id = ?1"),
                params![id],
                from_row,
            )
            .optional()?)
    }

    /// Every input of a run, in call order.
    pub fn approvals_of_run(&self, run_id: &str) -> Result<Vec<ApprovalRecord>, StoreError> {
        let conn = self.conn()?;
        let mut statement = conn.prepare(&format!(
            "SELECT {COLUMNS}, {CLIENT} FROM approvals WHERE run_id = ?1 ORDER BY call_index"
        ))?;
        let rows = statement
            .query_map(params![run_id], from_row)?
            .collect::<Result<_, _>>()?;
        Ok(rows)
    }

    /// Every pending input of every run, oldest first (expired ones are marked first).
    pub fn pending_approvals(&self, now_ms: i64) -> Result<Vec<ApprovalRecord>, StoreError> {
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

    /// Marks pending inputs past their expiry as expired.
    pub fn expire_approvals(&self, now_ms: i64) -> Result<usize, StoreError> {
        Ok(self.conn()?.execute(
            "UPDATE approvals SET status = 'expired', decided_at_ms = ?1
             WHERE status = 'pending' AND expires_at_ms <= ?1",
            params![now_ms],
        )?)
    }

    /// Ends the connection inputs still pending of a run that ended without reaching their
    /// calls again (its replay took another way, or failed before them: a tool that code named
    /// before its source listed tools may not exist), so that no person is asked to connect for
    /// a run that waits for nothing. Recorded as expired, `decided_via` `run_ended`.
    pub fn end_connection_inputs_of_run(
        &self,
        run_id: &str,
        now_ms: i64,
    ) -> Result<usize, StoreError> {
        Ok(self.conn()?.execute(
            "UPDATE approvals SET status = 'expired', decided_via = 'run_ended', decided_at_ms = ?2
             WHERE run_id = ?1 AND kind = 'connection' AND status = 'pending'",
            params![run_id, now_ms],
        )?)
    }

    /// Decides a pending input. Returns false when it was no longer pending (decided already,
    /// or expired): a decision is taken once.
    pub fn decide_approval(
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

    /// Spends an approved input (a direct call runs once per approval). False when it was not
    /// approved, or was spent already.
    pub fn use_approval(&self, id: &str) -> Result<bool, StoreError> {
        let changed = self.conn()?.execute(
            "UPDATE approvals SET status = 'used' WHERE id = ?1 AND status = 'approved'",
            params![id],
        )?;
        Ok(changed == 1)
    }

    /// Lets every later call of `address` in this run go ahead without asking.
    pub fn grant_for_run(&self, run_id: &str, address: &str) -> Result<(), StoreError> {
        self.conn()?.execute(
            "INSERT OR IGNORE INTO run_grants (run_id, address) VALUES (?1, ?2)",
            params![run_id, address],
        )?;
        Ok(())
    }

    pub fn is_granted_for_run(&self, run_id: &str, address: &str) -> Result<bool, StoreError> {
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

    /// Records a `requestState` (by digest) as used. False when it was used before: each state
    /// is accepted once.
    pub fn consume_state(&self, digest: &str, now_ms: i64) -> Result<bool, StoreError> {
        let changed = self.conn()?.execute(
            "INSERT OR IGNORE INTO consumed_states (digest, consumed_at_ms) VALUES (?1, ?2)",
            params![digest, now_ms],
        )?;
        Ok(changed == 1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::RunRecord;

    fn store_with_run() -> Store {
        let store = Store::in_memory().expect("store");
        store
            .insert_run(&RunRecord {
                id: "run_1".into(),
                code: "return 1".into(),
                seed: 1,
                clock_start_ms: 0,
                client: None,
                status: crate::RunState::AwaitingApproval,
                envelope: None,
                attempts: 1,
                created_at_ms: 0,
                updated_at_ms: 0,
                resumable: true,
                owner: None,
            })
            .expect("run");
        store
    }

    fn pending(index: u32, expires_at_ms: i64) -> ApprovalRecord {
        ApprovalRecord {
            id: format!("apr_{index}"),
            run_id: "run_1".into(),
            call_index: index,
            kind: crate::InputKind::Approval,
            address: "demo.add_note".into(),
            source: "demo".into(),
            connection: None,
            preview: "{}".into(),
            reason: "your policy".into(),
            args_digest: "d".into(),
            status: ApprovalStatus::Pending,
            scope: None,
            decided_via: None,
            created_at_ms: 0,
            expires_at_ms,
            decided_at_ms: None,
            client: None,
        }
    }

    #[test]
    fn an_input_keeps_the_client_that_asks_else_names_its_runs() {
        let store = store_with_run();
        let mut asked = pending(0, i64::MAX);
        asked.client = Some("claude-code 2.1.3".into());
        let stored = store.insert_approval(&asked).expect("insert");
        assert_eq!(stored.client.as_deref(), Some("claude-code 2.1.3"));
        // An input recorded before the store kept its client (schema 9): its run's.
        store
            .conn()
            .expect("conn")
            .execute(
                "UPDATE runs SET client = 'older-client 1' WHERE id = 'run_1'",
                [],
            )
            .expect("run's client");
        store
            .insert_approval(&pending(1, i64::MAX))
            .expect("insert");
        let clients: Vec<Option<String>> = store
            .pending_approvals(0)
            .expect("pending")
            .into_iter()
            .map(|a| a.client)
            .collect();
        assert_eq!(
            clients,
            [
                Some("claude-code 2.1.3".into()),
                Some("older-client 1".into())
            ]
        );
    }

    #[test]
    fn a_decision_is_taken_once() {
        let store = store_with_run();
        store.insert_approval(&pending(0, 1_000)).expect("insert");
        assert!(
            store
                .decide_approval("apr_0", ApprovalStatus::Approved, Some("once"), "cli", 10)
                .expect("decide")
        );
        assert!(
            !store
                .decide_approval("apr_0", ApprovalStatus::Denied, None, "page", 11)
                .expect("decide again"),
            "the second decision must be refused"
        );
        let stored = store.approval("apr_0").expect("read").expect("present");
        assert_eq!(stored.status, ApprovalStatus::Approved);
        assert_eq!(stored.decided_via.as_deref(), Some("cli"));
    }

    #[test]
    fn the_same_call_keeps_its_first_record_and_expiry_is_final() {
        let store = store_with_run();
        store.insert_approval(&pending(0, 100)).expect("insert");
        let mut again = pending(0, 999);
        again.id = "apr_other".into();
        assert_eq!(store.insert_approval(&again).expect("again").id, "apr_0");
        assert!(store.pending_approvals(50).expect("pending").len() == 1);
        assert!(store.pending_approvals(100).expect("pending").is_empty());
        assert!(
            !store
                .decide_approval("apr_0", ApprovalStatus::Approved, Some("once"), "cli", 101)
                .expect("decide")
        );
        assert_eq!(
            store.approval("apr_0").expect("read").map(|a| a.status),
            Some(ApprovalStatus::Expired)
        );
    }

    #[test]
    fn states_are_consumed_once_and_grants_are_per_run() {
        let store = store_with_run();
        assert!(store.consume_state("abc", 1).expect("first"));
        assert!(!store.consume_state("abc", 2).expect("second"));
        store
            .grant_for_run("run_1", "demo.add_note")
            .expect("grant");
        assert!(
            store
                .is_granted_for_run("run_1", "demo.add_note")
                .expect("granted")
        );
        assert!(
            !store
                .is_granted_for_run("run_1", "demo.other")
                .expect("not granted")
        );
    }
}
