//! The tasks the hub gave its clients (SEP-2663): each one's state as its client reads it,
//! kept so that a restarted hub still answers `tasks/get` for it until it expires.

use rusqlite::{OptionalExtension, params};

use crate::{RunOwner, StoreError};

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

/// Tasks kept for clients (a run's answer, read back by task id).
pub trait ClientTaskStore: Send + Sync {
    /// Records `task`, or its end; tasks expired by `now_ms` are forgotten. A state that is not
    /// an end never replaces a kept one: a quick task's end may be kept before its start.
    fn put_client_task(&self, task: &ClientTask, now_ms: i64) -> Result<(), StoreError>;

    /// The task `id` of `surface`, unless it expired by `now_ms`.
    fn client_task(
        &self,
        id: &str,
        surface: &str,
        now_ms: i64,
    ) -> Result<Option<ClientTask>, StoreError>;
}

impl ClientTaskStore for crate::SqliteStore {
    fn put_client_task(&self, task: &ClientTask, now_ms: i64) -> Result<(), StoreError> {
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

    fn client_task(
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
