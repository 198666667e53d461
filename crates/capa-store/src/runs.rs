//! Runs of `execute`: the code, its seed and logical clock (so a run can be replayed exactly),
//! its status and envelope, and the journal of its tool calls in the order the guest issued
//! them. Texts arrive here already redacted.

use rusqlite::{OptionalExtension, params};

use crate::{RunState, StoreError, WriteQueue};

/// A run as stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunRecord {
    pub id: String,
    pub code: String,
    pub seed: u64,
    pub clock_start_ms: i64,
    pub client: Option<String>,
    pub status: RunState,
    /// The last envelope returned for the run, as JSON.
    pub envelope: Option<String>,
    pub attempts: i64,
    pub created_at_ms: i64,
    pub updated_at_ms: i64,
    /// False when the code held a secret value: it was stored redacted, so it cannot be replayed.
    pub resumable: bool,
    /// The hub process that runs (or last ran) an attempt; none in runs recorded before hubs
    /// said so.
    pub owner: Option<RunOwner>,
    /// The machine of that process and how long its attempt counts as alive without a word
    /// from it; none in runs recorded before leases.
    pub lease: Option<Lease>,
}

/// An attempt's hold on its run: the machine its process runs on (a hash of that machine's
/// identity) and until when the attempt counts as alive (epoch ms). Its process renews it while
/// the attempt works; a hub on another machine, which cannot look for the process, takes a run
/// whose lease ran out for orphaned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Lease {
    pub machine: u64,
    pub until_ms: i64,
}

/// A run whose status says an attempt is under way: who runs it, and their lease.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunInProgress {
    pub id: String,
    /// Its attempt's number: an interruption names it, so that one read before another hub
    /// resumed the run leaves the new attempt alone.
    pub attempts: i64,
    pub owner: Option<RunOwner>,
    pub lease: Option<Lease>,
}

/// A hub process, as runs name it: its pid and when that hub started, since a pid alone may
/// be reused by the next hub on the same machine.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RunOwner {
    pub pid: u32,
    pub started_ms: i64,
}

/// One journaled tool call: what the guest asked and what it was answered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JournalEntry {
    /// Position in the order the guest issued calls.
    pub index: u32,
    pub address: String,
    pub connection: Option<String>,
    /// Arguments as JSON (redacted).
    pub arguments: String,
    pub ok: bool,
    /// The value or the failure the guest received, as JSON (redacted).
    pub outcome: String,
    pub ms: i64,
    /// SHA-256 of the real (unredacted) arguments, so a replay can check it asks the same.
    pub args_digest: Option<String>,
    /// Written before the call was made and never answered: the hub stopped while the call
    /// was in flight, so whether it took effect upstream is unknown.
    pub in_flight: bool,
}

/// Which runs [`RunStore::find_runs`] returns.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RunFilter {
    pub status: Option<RunState>,
    /// A source id: runs that called one of its tools.
    pub source: Option<String>,
    pub since_ms: Option<i64>,
    pub limit: u32,
}

/// A run as history lists show it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunSummary {
    pub id: String,
    pub status: RunState,
    pub client: Option<String>,
    pub created_at_ms: i64,
    pub updated_at_ms: i64,
    pub attempts: i64,
    /// Tool addresses the run called, each once, sorted.
    pub addresses: Vec<String>,
    /// Size of the last envelope (the run's result), in bytes.
    pub result_bytes: i64,
}

const RUN_COLUMNS: &str = "id, code, seed, clock_start_ms, client, status, envelope, attempts, created_at_ms, updated_at_ms, resumable, owner_pid, owner_started_ms, owner_machine, lease_until_ms";

fn run_from_row(row: &rusqlite::Row<'_>) -> rusqlite::Result<RunRecord> {
    Ok(RunRecord {
        id: row.get(0)?,
        code: row.get(1)?,
        seed: row.get::<_, i64>(2)?.cast_unsigned(),
        clock_start_ms: row.get(3)?,
        client: row.get(4)?,
        status: row.get(5)?,
        envelope: row.get(6)?,
        attempts: row.get(7)?,
        created_at_ms: row.get(8)?,
        updated_at_ms: row.get(9)?,
        resumable: row.get(10)?,
        owner: owner_from(row.get(11)?, row.get(12)?),
        lease: lease_from(row.get(13)?, row.get(14)?),
    })
}

/// A lease as stored: the machine's hash in a signed 64-bit column.
fn lease_from(machine: Option<i64>, until_ms: Option<i64>) -> Option<Lease> {
    Some(Lease {
        machine: machine?.cast_unsigned(),
        until_ms: until_ms?,
    })
}

fn owner_from(pid: Option<i64>, started_ms: Option<i64>) -> Option<RunOwner> {
    Some(RunOwner {
        pid: u32::try_from(pid?).ok()?,
        started_ms: started_ms?,
    })
}

/// Runs of `execute` and their journals.
pub trait RunStore: Send + Sync {
    /// Records a new run.
    fn insert_run(&self, run: &RunRecord) -> Result<(), StoreError>;

    /// Sets a run's status and envelope after an attempt.
    fn finish_run(
        &self,
        id: &str,
        status: RunState,
        envelope: &str,
        now_ms: i64,
    ) -> Result<(), StoreError>;

    /// Runs paused for a person's input (an approval or a connection), oldest first.
    fn paused_runs(&self) -> Result<Vec<RunRecord>, StoreError>;

    /// Ends a paused run nobody resumed with `status` and `envelope`, if it is still paused at
    /// attempt `attempts`: a resume that began meanwhile (in this hub or another on the same
    /// data dir) wins. Returns whether it did.
    fn settle_paused_run(
        &self,
        id: &str,
        attempts: i64,
        status: RunState,
        envelope: &str,
        now_ms: i64,
    ) -> Result<bool, StoreError>;

    /// Marks a run as running another attempt (a resume that replays it) in `owner`, holding
    /// `lease`, if it is still at attempt `attempts`: two hubs on one database may resume the
    /// same run, and only the first may replay it. Returns whether this one did.
    fn start_attempt(
        &self,
        id: &str,
        now_ms: i64,
        owner: RunOwner,
        lease: Lease,
        attempts: i64,
    ) -> Result<bool, StoreError>;

    /// Runs whose status says an attempt is under way, with the process running it.
    fn runs_in_progress(&self) -> Result<Vec<RunInProgress>, StoreError>;

    /// Extends to `until_ms` the lease of every run `owner` (on `machine`) is running; the
    /// number of runs.
    fn renew_leases(
        &self,
        owner: RunOwner,
        machine: u64,
        until_ms: i64,
    ) -> Result<usize, StoreError>;

    /// Marks a run whose attempt's process ended as `interrupted`, if it still says `running`
    /// at attempt `attempts` (another hub may have resumed it meanwhile, as a new attempt).
    /// Returns whether it did.
    fn interrupt_run(&self, id: &str, attempts: i64, now_ms: i64) -> Result<bool, StoreError>;

    fn run(&self, id: &str) -> Result<Option<RunRecord>, StoreError>;

    /// The newest runs first, at most `limit`.
    fn recent_runs(&self, limit: u32) -> Result<Vec<RunRecord>, StoreError>;

    /// Runs newest first, filtered in SQL: `status` exactly, `source` when one of the run's
    /// journaled calls went to it, created at or after `since_ms`; at most `limit`.
    fn find_runs(&self, filter: &RunFilter) -> Result<Vec<RunSummary>, StoreError>;

    /// Appends one journal entry of a run, durable when this returns: committed in one
    /// transaction with every write queued before it (group commit).
    fn journal_call(&self, run_id: &str, entry: &JournalEntry) -> Result<(), StoreError>;

    /// Drops one journal entry (a call that stopped its run before it went out).
    fn unjournal_call(&self, run_id: &str, index: u32) -> Result<(), StoreError>;

    /// A run's journal in call order.
    fn journal(&self, run_id: &str) -> Result<Vec<JournalEntry>, StoreError>;
}

impl RunStore for crate::SqliteStore {
    fn insert_run(&self, run: &RunRecord) -> Result<(), StoreError> {
        Ok(insert_run_row(&*self.conn()?, run)?)
    }

    fn finish_run(
        &self,
        id: &str,
        status: RunState,
        envelope: &str,
        now_ms: i64,
    ) -> Result<(), StoreError> {
        self.conn()?.execute(
            "UPDATE runs SET status = ?2, envelope = ?3, updated_at_ms = ?4 WHERE id = ?1",
            params![id, status, envelope, now_ms],
        )?;
        Ok(())
    }

    fn paused_runs(&self) -> Result<Vec<RunRecord>, StoreError> {
        let conn = self.conn()?;
        let mut statement = conn.prepare(&format!(
            "SELECT {RUN_COLUMNS} FROM runs
             WHERE status IN ('awaiting_approval', 'awaiting_connection')
             ORDER BY created_at_ms, id"
        ))?;
        let runs = statement
            .query_map([], run_from_row)?
            .collect::<Result<_, _>>()?;
        Ok(runs)
    }

    fn settle_paused_run(
        &self,
        id: &str,
        attempts: i64,
        status: RunState,
        envelope: &str,
        now_ms: i64,
    ) -> Result<bool, StoreError> {
        let changed = self.conn()?.execute(
            "UPDATE runs SET status = ?3, envelope = ?4, updated_at_ms = ?5
             WHERE id = ?1 AND attempts = ?2
               AND status IN ('awaiting_approval', 'awaiting_connection')",
            params![id, attempts, status, envelope, now_ms],
        )?;
        Ok(changed > 0)
    }

    fn start_attempt(
        &self,
        id: &str,
        now_ms: i64,
        owner: RunOwner,
        lease: Lease,
        attempts: i64,
    ) -> Result<bool, StoreError> {
        let changed = self.conn()?.execute(
            "UPDATE runs SET status = 'running', attempts = attempts + 1, updated_at_ms = ?2,
                 owner_pid = ?3, owner_started_ms = ?4, owner_machine = ?5, lease_until_ms = ?6
             WHERE id = ?1 AND attempts = ?7",
            params![
                id,
                now_ms,
                owner.pid,
                owner.started_ms,
                lease.machine.cast_signed(),
                lease.until_ms,
                attempts
            ],
        )?;
        Ok(changed > 0)
    }

    fn runs_in_progress(&self) -> Result<Vec<RunInProgress>, StoreError> {
        let conn = self.conn()?;
        let mut statement = conn.prepare(
            "SELECT id, owner_pid, owner_started_ms, owner_machine, lease_until_ms, attempts
             FROM runs WHERE status = 'running' ORDER BY id",
        )?;
        let runs = statement
            .query_map([], |row| {
                Ok(RunInProgress {
                    id: row.get(0)?,
                    attempts: row.get(5)?,
                    owner: owner_from(row.get(1)?, row.get(2)?),
                    lease: lease_from(row.get(3)?, row.get(4)?),
                })
            })?
            .collect::<Result<_, _>>()?;
        Ok(runs)
    }

    fn renew_leases(
        &self,
        owner: RunOwner,
        machine: u64,
        until_ms: i64,
    ) -> Result<usize, StoreError> {
        Ok(self.conn()?.execute(
            "UPDATE runs SET lease_until_ms = ?4
             WHERE status = 'running' AND owner_pid = ?1 AND owner_started_ms = ?2
               AND owner_machine = ?3",
            params![owner.pid, owner.started_ms, machine.cast_signed(), until_ms],
        )?)
    }

    fn interrupt_run(&self, id: &str, attempts: i64, now_ms: i64) -> Result<bool, StoreError> {
        let changed = self.conn()?.execute(
            "UPDATE runs SET status = 'interrupted', updated_at_ms = ?2
             WHERE id = ?1 AND status = 'running' AND attempts = ?3",
            params![id, now_ms, attempts],
        )?;
        Ok(changed > 0)
    }

    fn run(&self, id: &str) -> Result<Option<RunRecord>, StoreError> {
        Ok(self
            .conn()?
            .query_row(
                &format!("SELECT {RUN_COLUMNS} FROM runs WHERE id = ?1"),
                params![id],
                run_from_row,
            )
            .optional()?)
    }

    fn recent_runs(&self, limit: u32) -> Result<Vec<RunRecord>, StoreError> {
        let conn = self.conn()?;
        let mut statement = conn.prepare(&format!(
            "SELECT {RUN_COLUMNS} FROM runs ORDER BY created_at_ms DESC, id DESC LIMIT ?1"
        ))?;
        let runs = statement
            .query_map(params![limit], run_from_row)?
            .collect::<Result<_, _>>()?;
        Ok(runs)
    }

    fn find_runs(&self, filter: &RunFilter) -> Result<Vec<RunSummary>, StoreError> {
        let conn = self.conn()?;
        let mut statement = conn.prepare(
            "SELECT r.id, r.status, r.client, r.created_at_ms, r.updated_at_ms, r.attempts,
                    COALESCE(LENGTH(r.envelope), 0),
                    (SELECT GROUP_CONCAT(address, ' ') FROM
                        (SELECT DISTINCT address FROM run_calls c WHERE c.run_id = r.id ORDER BY address))
             FROM runs r
             WHERE (?1 IS NULL OR r.status = ?1)
               AND (?2 IS NULL OR EXISTS (SELECT 1 FROM run_calls c
                        WHERE c.run_id = r.id AND c.address LIKE ?2 || '.%' ESCAPE '\\'))
               AND (?3 IS NULL OR r.created_at_ms >= ?3)
             ORDER BY r.created_at_ms DESC, r.id DESC LIMIT ?4",
        )?;
        let source = filter.source.as_ref().map(|s| {
            s.replace('\\', "\\\\")
                .replace('%', "\\%")
                .replace('_', "\\_")
        });
        let runs = statement
            .query_map(
                params![filter.status, source, filter.since_ms, filter.limit],
                |row| {
                    let addresses: Option<String> = row.get(7)?;
                    Ok(RunSummary {
                        id: row.get(0)?,
                        status: row.get(1)?,
                        client: row.get(2)?,
                        created_at_ms: row.get(3)?,
                        updated_at_ms: row.get(4)?,
                        attempts: row.get(5)?,
                        result_bytes: row.get(6)?,
                        addresses: addresses
                            .map(|a| a.split(' ').map(str::to_owned).collect())
                            .unwrap_or_default(),
                    })
                },
            )?
            .collect::<Result<_, _>>()?;
        Ok(runs)
    }

    fn journal_call(&self, run_id: &str, entry: &JournalEntry) -> Result<(), StoreError> {
        self.defer_journal_call(run_id, entry.clone());
        self.flush()
    }

    fn unjournal_call(&self, run_id: &str, index: u32) -> Result<(), StoreError> {
        self.conn()?.execute(
            "DELETE FROM run_calls WHERE run_id = ?1 AND idx = ?2",
            params![run_id, index],
        )?;
        Ok(())
    }

    fn journal(&self, run_id: &str) -> Result<Vec<JournalEntry>, StoreError> {
        let conn = self.conn()?;
        let mut statement = conn.prepare_cached(
            "SELECT idx, address, connection, arguments, ok, outcome, ms, args_digest, in_flight FROM run_calls
             WHERE run_id = ?1 ORDER BY idx",
        )?;
        let entries = statement
            .query_map(params![run_id], |row| {
                Ok(JournalEntry {
                    index: row.get(0)?,
                    address: row.get(1)?,
                    connection: row.get(2)?,
                    arguments: row.get(3)?,
                    ok: row.get(4)?,
                    outcome: row.get(5)?,
                    ms: row.get(6)?,
                    args_digest: row.get(7)?,
                    in_flight: row.get(8)?,
                })
            })?
            .collect::<Result<_, _>>()?;
        Ok(entries)
    }
}

/// Inserts one run record on `conn`.
pub(crate) fn insert_run_row(conn: &rusqlite::Connection, run: &RunRecord) -> rusqlite::Result<()> {
    conn.prepare_cached(
        "INSERT INTO runs (id, code, seed, clock_start_ms, client, status, envelope, attempts, created_at_ms, updated_at_ms, resumable, owner_pid, owner_started_ms, owner_machine, lease_until_ms)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15)",
    )?
    .execute(params![
        run.id,
        run.code,
        run.seed.cast_signed(),
        run.clock_start_ms,
        run.client,
        run.status,
        run.envelope,
        run.attempts,
        run.created_at_ms,
        run.updated_at_ms,
        run.resumable,
        run.owner.map(|o| o.pid),
        run.owner.map(|o| o.started_ms),
        run.lease.map(|l| l.machine.cast_signed()),
        run.lease.map(|l| l.until_ms)
    ])?;
    Ok(())
}

/// Inserts or replaces one journal entry on `conn`.
pub(crate) fn write_journal_entry(
    conn: &rusqlite::Connection,
    run_id: &str,
    entry: &JournalEntry,
) -> rusqlite::Result<()> {
    conn.prepare_cached(
        "INSERT OR REPLACE INTO run_calls (run_id, idx, address, connection, arguments, ok, outcome, ms, args_digest, in_flight)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
    )?
    .execute(params![
        run_id,
        entry.index,
        entry.address,
        entry.connection,
        entry.arguments,
        entry.ok,
        entry.outcome,
        entry.ms,
        entry.args_digest,
        entry.in_flight
    ])?;
    Ok(())
}
