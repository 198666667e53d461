//! Clients a person paired with the hub, and the runs they started (capa-store's
//! pairings.rs). Only the SHA-256 of a client's key is stored.

use capa_store::{PairedClient, PairingStore, StoreError};
use postgres::Row;

use crate::PgStore;

const COLUMNS: &str = "id, name, forms, created_at_ms, last_seen_ms";

/// How long a client's `last_seen_ms` stands before presenting its key writes it again.
const SEEN_EVERY_MS: i64 = 60_000;

fn read(row: &Row) -> PairedClient {
    PairedClient {
        id: row.get(0),
        name: row.get(1),
        forms: row.get(2),
        created_at_ms: row.get(3),
        last_seen_ms: row.get(4),
    }
}

impl PairingStore for PgStore {
    fn insert_paired_client(
        &self,
        client: &PairedClient,
        key_digest: &str,
    ) -> Result<(), StoreError> {
        let (client, key_digest) = (client.clone(), key_digest.to_owned());
        self.pool.run(move |c| {
            c.execute(
                "INSERT INTO paired_clients (id, name, key_digest, forms, created_at_ms, last_seen_ms)
                 VALUES ($1, $2, $3, $4, $5, $6)",
                &[
                    &client.id,
                    &client.name,
                    &key_digest,
                    &client.forms,
                    &client.created_at_ms,
                    &client.last_seen_ms,
                ],
            )?;
            Ok(())
        })
    }

    fn paired_client_by_key(
        &self,
        key_digest: &str,
        seen_at_ms: Option<i64>,
    ) -> Result<Option<PairedClient>, StoreError> {
        let key_digest = key_digest.to_owned();
        self.pool.run(move |c| {
            // The read and the note that it was seen in one statement (so one transaction, on
            // every request of a paired client, without a round trip more): the outer select
            // answers the row as it was before the update, as SQLite's store does.
            let found = c.query_opt(
                &format!(
                    "WITH seen AS (
                         UPDATE paired_clients SET last_seen_ms = $2
                         WHERE key_digest = $1 AND $2::BIGINT IS NOT NULL
                           AND (last_seen_ms IS NULL OR $2 - last_seen_ms > $3)
                     )
                     SELECT {COLUMNS} FROM paired_clients WHERE key_digest = $1"
                ),
                &[&key_digest, &seen_at_ms, &SEEN_EVERY_MS],
            )?;
            Ok(found.as_ref().map(read))
        })
    }

    fn paired_client(&self, id: &str) -> Result<Option<PairedClient>, StoreError> {
        let id = id.to_owned();
        self.pool.run(move |c| {
            Ok(c.query_opt(
                &format!("SELECT {COLUMNS} FROM paired_clients WHERE id = $1"),
                &[&id],
            )?
            .as_ref()
            .map(read))
        })
    }

    fn paired_clients(&self) -> Result<Vec<PairedClient>, StoreError> {
        self.pool.run(|c| {
            // Ties in byte order, as SQLite's: a database's own collation may sort by locale.
            Ok(c.query(
                &format!(
                    "SELECT {COLUMNS} FROM paired_clients ORDER BY created_at_ms, id COLLATE \"C\""
                ),
                &[],
            )?
            .iter()
            .map(read)
            .collect())
        })
    }

    fn set_paired_client_forms(&self, id: &str, forms: bool) -> Result<bool, StoreError> {
        let id = id.to_owned();
        self.pool.run(move |c| {
            Ok(c.execute(
                "UPDATE paired_clients SET forms = $2 WHERE id = $1",
                &[&id, &forms],
            )? > 0)
        })
    }

    fn remove_paired_client(&self, id: &str) -> Result<bool, StoreError> {
        let id = id.to_owned();
        self.pool
            .run(move |c| Ok(c.execute("DELETE FROM paired_clients WHERE id = $1", &[&id])? > 0))
    }

    fn set_run_pairing(&self, run_id: &str, paired_client: &str) -> Result<(), StoreError> {
        let (run_id, paired_client) = (run_id.to_owned(), paired_client.to_owned());
        self.pool.run(move |c| {
            // The first pairing named stays.
            c.execute(
                "INSERT INTO run_pairings (run_id, paired_client) VALUES ($1, $2)
                 ON CONFLICT DO NOTHING",
                &[&run_id, &paired_client],
            )?;
            Ok(())
        })
    }

    fn run_pairing(&self, run_id: &str) -> Result<Option<String>, StoreError> {
        let run_id = run_id.to_owned();
        self.pool.run(move |c| {
            Ok(c.query_opt(
                "SELECT paired_client FROM run_pairings WHERE run_id = $1",
                &[&run_id],
            )?
            .map(|row| row.get(0)))
        })
    }
}
