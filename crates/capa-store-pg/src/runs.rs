//! Runs of `execute` and their journals (capa-store's runs.rs).

use capa_store::{
    JournalEntry, Lease, RunFilter, RunInProgress, RunOwner, RunRecord, RunState, RunStore,
    RunSummary, StoreError,
};
use postgres::{GenericClient, Row};

use crate::pool::Failed;
use crate::{PgStore, to_u32};

const RUN_COLUMNS: &str = "id, code, seed, clock_start_ms, client, status, envelope, attempts, created_at_ms, updated_at_ms, resumable, owner_pid, owner_started_ms, owner_machine, lease_until_ms";

/// A stored status as the store's type; an unknown one (written by a newer hub) is an error,
/// as SQLite's store says.
pub(crate) fn run_state(text: &str) -> Result<RunState, Failed> {
    RunState::parse(text).ok_or_else(|| {
        Failed::Store(StoreError::Backend(
            format!("unknown run status `{text}`").into(),
        ))
    })
}

fn run_from_row(row: &Row) -> Result<RunRecord, Failed> {
    Ok(RunRecord {
        id: row.get(0),
        code: crate::text_of(row.get(1))?,
        seed: row.get::<_, i64>(2).cast_unsigned(),
        clock_start_ms: row.get(3),
        client: row.get(4),
        status: run_state(row.get(5))?,
        envelope: row.get(6),
        attempts: row.get(7),
        created_at_ms: row.get(8),
        updated_at_ms: row.get(9),
        resumable: row.get(10),
        owner: owner_from(row.get(11), row.get(12)),
        lease: lease_from(row.get(13), row.get(14)),
    })
}

/// A lease as stored: the machine's hash in a signed 64-bit column.
fn lease_from(machine: Option<i64>, until_ms: Option<i64>) -> Option<Lease> {
    Some(Lease {
        machine: machine?.cast_unsigned(),
        until_ms: until_ms?,
    })
}

pub(crate) fn owner_from(pid: Option<i64>, started_ms: Option<i64>) -> Option<RunOwner> {
    Some(RunOwner {
        pid: u32::try_from(pid?).ok()?,
        started_ms: started_ms?,
    })
}

fn runs_from(rows: &[Row]) -> Result<Vec<RunRecord>, Failed> {
    rows.iter().map(run_from_row).collect()
}

impl RunStore for PgStore {
    fn insert_run(&self, run: &RunRecord) -> Result<(), StoreError> {
        let run = run.clone();
        self.pool.run(move |c| insert_run_row(c, &run))
    }

    fn finish_run(
        &self,
        id: &str,
        status: RunState,
        envelope: &str,
        now_ms: i64,
    ) -> Result<(), StoreError> {
        let (id, envelope) = (id.to_owned(), envelope.to_owned());
        self.pool.run(move |c| {
            c.execute(
                "UPDATE runs SET status = $2, envelope = $3, updated_at_ms = $4 WHERE id = $1",
                &[&id, &status.as_str(), &envelope, &now_ms],
            )?;
            Ok(())
        })
    }

    fn paused_runs(&self) -> Result<Vec<RunRecord>, StoreError> {
        self.pool.run(|c| {
            runs_from(&c.query(
                &format!(
                    "SELECT {RUN_COLUMNS} FROM runs
                     WHERE status IN ('awaiting_approval', 'awaiting_connection')
                     ORDER BY created_at_ms, id COLLATE \"C\""
                ),
                &[],
            )?)
        })
    }

    fn settle_paused_run(
        &self,
        id: &str,
        attempts: i64,
        status: RunState,
        envelope: &str,
        now_ms: i64,
    ) -> Result<bool, StoreError> {
        let (id, envelope) = (id.to_owned(), envelope.to_owned());
        self.pool.run(move |c| {
            let changed = c.execute(
                "UPDATE runs SET status = $3, envelope = $4, updated_at_ms = $5
                 WHERE id = $1 AND attempts = $2
                   AND status IN ('awaiting_approval', 'awaiting_connection')",
                &[&id, &attempts, &status.as_str(), &envelope, &now_ms],
            )?;
            Ok(changed > 0)
        })
    }

    fn start_attempt(
        &self,
        id: &str,
        now_ms: i64,
        owner: RunOwner,
        lease: Lease,
        attempts: i64,
    ) -> Result<bool, StoreError> {
        let id = id.to_owned();
        self.pool.run(move |c| {
            let changed = c.execute(
                "UPDATE runs SET status = 'running', attempts = attempts + 1, updated_at_ms = $2,
                     owner_pid = $3, owner_started_ms = $4, owner_machine = $5, lease_until_ms = $6
                 WHERE id = $1 AND attempts = $7",
                &[
                    &id,
                    &now_ms,
                    &i64::from(owner.pid),
                    &owner.started_ms,
                    &lease.machine.cast_signed(),
                    &lease.until_ms,
                    &attempts,
                ],
            )?;
            Ok(changed > 0)
        })
    }

    fn runs_in_progress(&self) -> Result<Vec<RunInProgress>, StoreError> {
        self.pool.run(|c| {
            Ok(c.query(
                "SELECT id, owner_pid, owner_started_ms, owner_machine, lease_until_ms, attempts
                 FROM runs WHERE status = 'running' ORDER BY id COLLATE \"C\"",
                &[],
            )?
            .iter()
            .map(|row| RunInProgress {
                id: row.get(0),
                attempts: row.get(5),
                owner: owner_from(row.get(1), row.get(2)),
                lease: lease_from(row.get(3), row.get(4)),
            })
            .collect())
        })
    }

    fn renew_leases(
        &self,
        owner: RunOwner,
        machine: u64,
        until_ms: i64,
    ) -> Result<usize, StoreError> {
        self.pool.run(move |c| {
            let renewed = c.execute(
                "UPDATE runs SET lease_until_ms = $4
                 WHERE status = 'running' AND owner_pid = $1 AND owner_started_ms = $2
                   AND owner_machine = $3",
                &[
                    &i64::from(owner.pid),
                    &owner.started_ms,
                    &machine.cast_signed(),
                    &until_ms,
                ],
            )?;
            Ok(usize::try_from(renewed).unwrap_or(usize::MAX))
        })
    }

    fn interrupt_run(&self, id: &str, attempts: i64, now_ms: i64) -> Result<bool, StoreError> {
        let id = id.to_owned();
        self.pool.run(move |c| {
            let changed = c.execute(
                "UPDATE runs SET status = 'interrupted', updated_at_ms = $2
                 WHERE id = $1 AND status = 'running' AND attempts = $3",
                &[&id, &now_ms, &attempts],
            )?;
            Ok(changed > 0)
        })
    }

    fn run(&self, id: &str) -> Result<Option<RunRecord>, StoreError> {
        let id = id.to_owned();
        self.pool.run(move |c| {
            c.query_opt(
                &format!("SELECT {RUN_COLUMNS} FROM runs WHERE id = $1"),
                &[&id],
            )?
            .as_ref()
            .map(run_from_row)
            .transpose()
        })
    }

    fn recent_runs(&self, limit: u32) -> Result<Vec<RunRecord>, StoreError> {
        self.pool.run(move |c| {
            runs_from(&c.query(
                &format!(
                    "SELECT {RUN_COLUMNS} FROM runs ORDER BY created_at_ms DESC, id COLLATE \"C\" DESC LIMIT $1"
                ),
                &[&i64::from(limit)],
            )?)
        })
    }

    fn find_runs(&self, filter: &RunFilter) -> Result<Vec<RunSummary>, StoreError> {
        let status = filter.status.map(RunState::as_str);
        // The source is matched as a prefix `source.` of the address, with LIKE's own
        // characters escaped; ILIKE, as SQLite's LIKE ignores ASCII case.
        let source = filter.source.as_ref().map(|s| {
            s.replace('\\', "\\\\")
                .replace('%', "\\%")
                .replace('_', "\\_")
        });
        let (since_ms, limit) = (filter.since_ms, i64::from(filter.limit));
        self.pool.run(move |c| {
            let rows = c.query(
                "SELECT r.id, r.status, r.client, r.created_at_ms, r.updated_at_ms, r.attempts,
                        COALESCE(LENGTH(r.envelope), 0)::BIGINT,
                        (SELECT string_agg(address, ' ' ORDER BY address COLLATE \"C\") FROM
                            (SELECT DISTINCT address FROM run_calls c WHERE c.run_id = r.id) a)
                 FROM runs r
                 WHERE ($1::TEXT IS NULL OR r.status = $1)
                   AND ($2::TEXT IS NULL OR EXISTS (SELECT 1 FROM run_calls c
                            WHERE c.run_id = r.id AND c.address ILIKE $2 || '.%' ESCAPE '\\'))
                   AND ($3::BIGINT IS NULL OR r.created_at_ms >= $3)
                 ORDER BY r.created_at_ms DESC, r.id COLLATE \"C\" DESC LIMIT $4",
                &[&status, &source, &since_ms, &limit],
            )?;
            rows.iter()
                .map(|row| {
                    let addresses: Option<String> = row.get(7);
                    Ok(RunSummary {
                        id: row.get(0),
                        status: run_state(row.get(1))?,
                        client: row.get(2),
                        created_at_ms: row.get(3),
                        updated_at_ms: row.get(4),
                        attempts: row.get(5),
                        result_bytes: row.get(6),
                        addresses: addresses
                            .map(|a| a.split(' ').map(str::to_owned).collect())
                            .unwrap_or_default(),
                    })
                })
                .collect()
        })
    }

    fn journal_call(&self, run_id: &str, entry: &JournalEntry) -> Result<(), StoreError> {
        let (run_id, entry) = (run_id.to_owned(), entry.clone());
        self.pool
            .run(move |c| write_journal_entry(c, &run_id, &entry))
    }

    fn unjournal_call(&self, run_id: &str, index: u32) -> Result<(), StoreError> {
        let run_id = run_id.to_owned();
        self.pool.run(move |c| {
            c.execute(
                "DELETE FROM run_calls WHERE run_id = $1 AND idx = $2",
                &[&run_id, &i64::from(index)],
            )?;
            Ok(())
        })
    }

    fn journal(&self, run_id: &str) -> Result<Vec<JournalEntry>, StoreError> {
        let run_id = run_id.to_owned();
        self.pool.run(move |c| {
            Ok(c.query(
                "SELECT idx, address, connection, arguments, ok, outcome, ms, args_digest, in_flight
                 FROM run_calls WHERE run_id = $1 ORDER BY idx",
                &[&run_id],
            )?
            .iter()
            .map(|row| JournalEntry {
                index: to_u32(row.get(0)),
                address: row.get(1),
                connection: row.get(2),
                arguments: row.get(3),
                ok: row.get(4),
                outcome: row.get(5),
                ms: row.get(6),
                args_digest: row.get(7),
                in_flight: row.get(8),
            })
            .collect())
        })
    }
}

/// Inserts one run record.
pub(crate) fn insert_run_row(c: &mut impl GenericClient, run: &RunRecord) -> Result<(), Failed> {
    c.execute(
        "INSERT INTO runs (id, code, seed, clock_start_ms, client, status, envelope, attempts, created_at_ms, updated_at_ms, resumable, owner_pid, owner_started_ms, owner_machine, lease_until_ms)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15)",
        &[
            &run.id,
            &run.code.as_bytes(),
            &run.seed.cast_signed(),
            &run.clock_start_ms,
            &run.client,
            &run.status.as_str(),
            &run.envelope,
            &run.attempts,
            &run.created_at_ms,
            &run.updated_at_ms,
            &run.resumable,
            &run.owner.map(|o| i64::from(o.pid)),
            &run.owner.map(|o| o.started_ms),
            &run.lease.map(|l| l.machine.cast_signed()),
            &run.lease.map(|l| l.until_ms),
        ],
    )?;
    Ok(())
}

/// Inserts or replaces one journal entry (by its run and position).
pub(crate) fn write_journal_entry(
    c: &mut impl GenericClient,
    run_id: &str,
    entry: &JournalEntry,
) -> Result<(), Failed> {
    c.execute(
        "INSERT INTO run_calls (run_id, idx, address, connection, arguments, ok, outcome, ms, args_digest, in_flight)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)
         ON CONFLICT (run_id, idx) DO UPDATE SET address = EXCLUDED.address,
             connection = EXCLUDED.connection, arguments = EXCLUDED.arguments, ok = EXCLUDED.ok,
             outcome = EXCLUDED.outcome, ms = EXCLUDED.ms, args_digest = EXCLUDED.args_digest,
             in_flight = EXCLUDED.in_flight",
        &[
            &run_id,
            &i64::from(entry.index),
            &entry.address,
            &entry.connection,
            &entry.arguments,
            &entry.ok,
            &entry.outcome,
            &entry.ms,
            &entry.args_digest,
            &entry.in_flight,
        ],
    )?;
    Ok(())
}
