//! Clients a person paired with the hub. A paired client holds its own key (only its SHA-256 is
//! stored); the answers of its own approval forms count as the person's while `forms` is on.
//! The shared hub token pairs nothing: every local process can read it.

use rusqlite::{OptionalExtension, params};

use crate::{Store, StoreError};

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

impl Store {
    /// Records a paired client with the digest of its key.
    pub fn insert_paired_client(
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

    /// The client whose key has `key_digest`. With `seen_at_ms`, also notes that it presented
    /// its key then (at most once a minute, so a busy client does not write on every request).
    pub fn paired_client_by_key(
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

    /// One paired client by id.
    pub fn paired_client(&self, id: &str) -> Result<Option<PairedClient>, StoreError> {
        Ok(self
            .conn()?
            .query_row(
                &format!("SELECT {COLUMNS} FROM paired_clients WHERE id = ?1"),
                params![id],
                read,
            )
            .optional()?)
    }

    /// Every paired client, oldest first.
    pub fn paired_clients(&self) -> Result<Vec<PairedClient>, StoreError> {
        let conn = self.conn()?;
        let mut statement = conn.prepare(&format!(
            "SELECT {COLUMNS} FROM paired_clients ORDER BY created_at_ms, id"
        ))?;
        let rows = statement.query_map([], read)?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// Turns a client's forms on or off; false when there is no such client.
    pub fn set_paired_client_forms(&self, id: &str, forms: bool) -> Result<bool, StoreError> {
        Ok(self.conn()?.execute(
            "UPDATE paired_clients SET forms = ?2 WHERE id = ?1",
            params![id, forms],
        )? > 0)
    }

    /// Forgets a paired client (its key stops working); false when there was none.
    pub fn remove_paired_client(&self, id: &str) -> Result<bool, StoreError> {
        Ok(self
            .conn()?
            .execute("DELETE FROM paired_clients WHERE id = ?1", params![id])?
            > 0)
    }

    /// Names the paired client that started `run_id` (kept once: the first wins).
    pub fn set_run_pairing(&self, run_id: &str, paired_client: &str) -> Result<(), StoreError> {
        self.conn()?.execute(
            "INSERT OR IGNORE INTO run_pairings (run_id, paired_client) VALUES (?1, ?2)",
            params![run_id, paired_client],
        )?;
        Ok(())
    }

    /// The paired client that started `run_id`, if one did.
    pub fn run_pairing(&self, run_id: &str) -> Result<Option<String>, StoreError> {
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

#[cfg(test)]
mod tests {
    use super::*;

    fn client(id: &str) -> PairedClient {
        PairedClient {
            id: id.to_owned(),
            name: "Claude Code".to_owned(),
            forms: true,
            created_at_ms: 1,
            last_seen_ms: None,
        }
    }

    #[test]
    fn a_paired_client_is_found_by_its_key_digest_only() {
        let store = Store::in_memory().expect("store");
        store
            .insert_paired_client(&client("pc_1"), "digest-1")
            .expect("insert");
        assert_eq!(
            store
                .paired_client_by_key("digest-2", Some(10))
                .expect("read"),
            None
        );
        let found = store
            .paired_client_by_key("digest-1", Some(100_000))
            .expect("read")
            .expect("found");
        assert_eq!(found.id, "pc_1");
        assert_eq!(
            store
                .paired_client("pc_1")
                .expect("read")
                .expect("kept")
                .last_seen_ms,
            Some(100_000)
        );
        assert!(store.set_paired_client_forms("pc_1", false).expect("set"));
        assert!(!store.paired_clients().expect("list")[0].forms);
        assert!(store.remove_paired_client("pc_1").expect("remove"));
        assert_eq!(
            store.paired_client_by_key("digest-1", None).expect("read"),
            None
        );
    }

    #[test]
    fn a_runs_pairing_is_set_once() {
        let store = Store::in_memory().expect("store");
        store.set_run_pairing("run_1", "pc_1").expect("set");
        store.set_run_pairing("run_1", "pc_2").expect("set again");
        assert_eq!(
            store.run_pairing("run_1").expect("read").as_deref(),
            Some("pc_1")
        );
        assert_eq!(store.run_pairing("run_2").expect("read"), None);
    }
}
