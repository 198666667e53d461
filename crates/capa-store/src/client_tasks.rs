//! The tasks the hub gave its clients (SEP-2663): each one's state as its client reads it,
//! kept so that a restarted hub still answers `tasks/get` for it until it expires.

use rusqlite::{OptionalExtension, params};

use crate::{RunOwner, Store, StoreError};

/// One task of a client, as kept.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClientTask {
    /// The task id the client holds (random, a UUID).
    pub id: String,
    /// The surface it belongs to (the hub's own, or a profile's): only that surface answers it.
    pub surface: String,
    /// Its state as `tasks/get` answers it (JSON).
    pub detail: String,
    /// It reached an end (`completed`, `failed`, `cancelled`): `detail` no longer changes.
    pub ended: bool,
    /// The hub process that follows it while it works.
    pub owner: RunOwner,
    /// When it is forgotten (ms since the epoch).
    pub expires_at_ms: i64,
}

impl Store {
    /// Records `task`, or its end; tasks expired by `now_ms` are forgotten. A state that is not
    /// an end never replaces a kept one: a quick task's end may be kept before its start.
    pub fn put_client_task(&self, task: &ClientTask, now_ms: i64) -> Result<(), StoreError> {
        let conn = self.conn()?;
        let verb = if task.ended {
            "INSERT OR REPLACE"
        } else {
            "INSERT OR IGNORE"
        };
        conn.execute(
            &format!(
                "{verb} INTO client_tasks
                 (id, surface, detail, ended, owner_pid, owner_started_ms, expires_at_ms)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)"
            ),
            params![
                task.id,
                task.surface,
                task.detail,
                task.ended,
                task.owner.pid,
                task.owner.started_ms,
                task.expires_at_ms
            ],
        )?;
        // Expired tasks go as new ones come: the table holds what clients may still ask for.
        conn.execute(
            "DELETE FROM client_tasks WHERE expires_at_ms <= ?1",
            params![now_ms],
        )?;
        Ok(())
    }

    /// The task `id` of `surface`, unless it expired by `now_ms`.
    pub fn client_task(
        &self,
        id: &str,
        surface: &str,
        now_ms: i64,
    ) -> Result<Option<ClientTask>, StoreError> {
        Ok(self
            .conn()?
            .query_row(
                "SELECT id, surface, detail, ended, owner_pid, owner_started_ms, expires_at_ms
                 FROM client_tasks WHERE id = ?1 AND surface = ?2 AND expires_at_ms > ?3",
                params![id, surface, now_ms],
                |row| {
                    Ok(ClientTask {
                        id: row.get(0)?,
                        surface: row.get(1)?,
                        detail: row.get(2)?,
                        ended: row.get(3)?,
                        owner: RunOwner {
                            pid: row.get(4)?,
                            started_ms: row.get(5)?,
                        },
                        expires_at_ms: row.get(6)?,
                    })
                },
            )
            .optional()?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn task(id: &str, expires_at_ms: i64) -> ClientTask {
        ClientTask {
            id: id.to_owned(),
            surface: "hub".to_owned(),
            detail: r#"{"taskId":"t","status":"working"}"#.to_owned(),
            ended: false,
            owner: RunOwner {
                pid: 42,
                started_ms: 1,
            },
            expires_at_ms,
        }
    }

    #[test]
    fn a_task_reads_back_for_its_surface_until_it_expires_and_its_end_replaces_it() {
        let dir = tempfile::tempdir().expect("dir");
        let store = Store::open(&dir.path().join("capa.db")).expect("store");
        let later = 60_000;
        store.put_client_task(&task("t", later), 10).expect("put");
        assert_eq!(
            store.client_task("t", "hub", 0).expect("read"),
            Some(task("t", later))
        );
        assert_eq!(
            store.client_task("t", "profile:work", 0).expect("read"),
            None
        );
        assert_eq!(store.client_task("t", "hub", later).expect("read"), None);
        let ended = ClientTask {
            ended: true,
            detail: r#"{"taskId":"t","status":"completed"}"#.to_owned(),
            ..task("t", later)
        };
        store.put_client_task(&ended, 10).expect("put again");
        assert_eq!(
            store.client_task("t", "hub", 0).expect("read"),
            Some(ended.clone())
        );
        // A start kept after the end does not undo it.
        store
            .put_client_task(&task("t", later), 10)
            .expect("put late");
        assert_eq!(store.client_task("t", "hub", 0).expect("read"), Some(ended));
        // An expired one goes when the next is put.
        store.put_client_task(&task("old", 20), 10).expect("put");
        store.put_client_task(&task("new", later), 30).expect("put");
        assert_eq!(store.client_task("old", "hub", 0).expect("read"), None);
    }
}
