//! Clients a person paired with the hub. A paired client holds its own key (only its SHA-256 is
//! stored); the answers of its own approval forms count as the person's while `forms` is on.
//! The shared hub token pairs nothing: every local process can read it.

use rusqlite::{OptionalExtension, params};

use crate::StoreError;

/// One paired client, as stored (never its key).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PairedClient {
    /// `pc_` and 16 hex digits.
    pub id: String,
    /// What the person called it ("Claude Code").
    pub name: String,
    /// Whether its own approval forms count as the person's answer.
    pub forms: bool,
    pub created_at_ms: i64,
    /// When it last presented its key (updated at most once a minute).
    pub last_seen_ms: Option<i64>,
}

const COLUMNS: &str = "id, name, forms, created_at_ms, last_seen_ms";

fn read(row: &rusqlite::Row<'_>) -> rusqlite::Result<PairedClient> {
    Ok(PairedClient {
        id: row.get(0)?,
        name: row.get(1)?,
        forms: row.get(2)?,
        created_at_ms: row.get(3)?,
        last_seen_ms: row.get(4)?,
    })
}

/// Paired clients and the runs they started.
pub trait PairingStore: Send + Sync {
    /// Records a paired client with the digest of its key.
    fn insert_paired_client(
        &self,
        client: &PairedClient,
        key_digest: &str,
    ) -> Result<(), StoreError>;

    /// The client whose key has `key_digest`. With `seen_at_ms`, also notes that it presented
    /// its key then (at most once a minute, so a busy client does not write on every request).
    fn paired_client_by_key(
        &self,
        key_digest: &str,
        seen_at_ms: Option<i64>,
    ) -> Result<Option<PairedClient>, StoreError>;

    /// One paired client by id.
    fn paired_client(&self, id: &str) -> Result<Option<PairedClient>, StoreError>;

    /// Every paired client, oldest first.
    fn paired_clients(&self) -> Result<Vec<PairedClient>, StoreError>;

    /// Turns a client's forms on or off; false when there is no such client.
    fn set_paired_client_forms(&self, id: &str, forms: bool) -> Result<bool, StoreError>;

    /// Forgets a paired client (its key stops working); false when there was none.
    fn remove_paired_client(&self, id: &str) -> Result<bool, StoreError>;

    /// Names the paired client that started `run_id` (kept once: the first wins).
    fn set_run_pairing(&self, run_id: &str, paired_client: &str) -> Result<(), StoreError>;

    /// The paired client that started `run_id`, if one did.
    fn run_pairing(&self, run_id: &str) -> Result<Option<String>, StoreError>;
}

impl PairingStore for crate::SqliteStore {
    fn insert_paired_client(
        &self,
        client: &PairedClient,
        key_digest: &str,
    ) -> Result<(), StoreError> {
        self.conn()?.execute(
            "INSERT INTO paired_clients (id, name, key_digest, forms, created_at_ms, last_seen_ms)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
            params![
                client.id,
                client.name,
                key_digest,
                client.forms,
                client.created_at_ms,
                client.last_seen_ms
            ],
        )?;
        Ok(())
    }

    fn paired_client_by_key(
        &self,
        key_digest: &str,
        seen_at_ms: Option<i64>,
    ) -> Result<Option<PairedClient>, StoreError> {
        let conn = self.conn()?;
        let found = conn
            .prepare_cached(&format!(
                "SELECT {COLUMNS} FROM paired_clients WHERE key_digest = ?1"
            ))?
            .query_row(params![key_digest], read)
            .optional()?;
        if let (Some(client), Some(now_ms)) = (&found, seen_at_ms)
            && client
                .last_seen_ms
                .is_none_or(|seen| now_ms - seen > 60_000)
        {
            conn.execute(
                "UPDATE paired_clients SET last_seen_ms = ?2 WHERE id = ?1",
                params![client.id, now_ms],
            )?;
        }
        Ok(found)
    }

    fn paired_client(&self, id: &str) -> Result<Option<PairedClient>, StoreError> {
        Ok(self
            .conn()?
            .query_row(
                &format!("SELECT {COLUMNS} FROM paired_clients WHERE id = ?1"),
                params![id],
                read,
            )
            .optional()?)
    }

    fn paired_clients(&self) -> Result<Vec<PairedClient>, StoreError> {
        let conn = self.conn()?;
        let mut statement = conn.prepare(&format!(
            "SELECT {COLUMNS} FROM paired_clients ORDER BY created_at_ms, id"
        ))?;
        let rows = statement.query_map([], read)?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    fn set_paired_client_forms(&self, id: &str, forms: bool) -> Result<bool, StoreError> {
        Ok(self.conn()?.execute(
            "UPDATE paired_clients SET forms = ?2 WHERE id = ?1",
            params![id, forms],
        )? > 0)
    }

    fn remove_paired_client(&self, id: &str) -> Result<bool, StoreError> {
        Ok(self
            .conn()?
            .execute("DELETE FROM paired_clients WHERE id = ?1", params![id])?
            > 0)
    }

    fn set_run_pairing(&self, run_id: &str, paired_client: &str) -> Result<(), StoreError> {
        self.conn()?.execute(
            "INSERT OR IGNORE INTO run_pairings (run_id, paired_client) VALUES (?1, ?2)",
            params![run_id, paired_client],
        )?;
        Ok(())
    }

    fn run_pairing(&self, run_id: &str) -> Result<Option<String>, StoreError> {
        Ok(self
            .conn()?
            .query_row(
                "SELECT paired_client FROM run_pairings WHERE run_id = ?1",
                params![run_id],
                |row| row.get(0),
            )
            .optional()?)
    }
}
