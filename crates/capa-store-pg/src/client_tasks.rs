//! The tasks the hub gave its clients (capa-store's `client_tasks.rs`), kept so that a hub
//! restarted, or another on the same data, still answers `tasks/get` until they expire.

use capa_store::{ClientTask, ClientTaskStore, RunOwner, StoreError};

use crate::{PgStore, to_u32};

const INSERT: &str = "INSERT INTO client_tasks
    (id, surface, detail, ended, owner_pid, owner_started_ms, expires_at_ms)
    VALUES ($1, $2, $3, $4, $5, $6, $7)";

impl ClientTaskStore for PgStore {
    fn put_client_task(&self, task: &ClientTask, now_ms: i64) -> Result<(), StoreError> {
        let task = task.clone();
        self.pool.run(move |c| {
            // An end replaces what is kept; a state that is not an end never does (a quick
            // task's end may be kept before its start), as SQLite's OR REPLACE / OR IGNORE.
            let conflict = if task.ended {
                "ON CONFLICT (id) DO UPDATE SET surface = EXCLUDED.surface,
                     detail = EXCLUDED.detail, ended = EXCLUDED.ended,
                     owner_pid = EXCLUDED.owner_pid,
                     owner_started_ms = EXCLUDED.owner_started_ms,
                     expires_at_ms = EXCLUDED.expires_at_ms"
            } else {
                "ON CONFLICT DO NOTHING"
            };
            // One transaction, as the two statements run under one lock in SQLite's store.
            let mut tx = c.transaction()?;
            tx.execute(
                &format!("{INSERT} {conflict}"),
                &[
                    &task.id,
                    &task.surface,
                    &task.detail,
                    &task.ended,
                    &i64::from(task.owner.pid),
                    &task.owner.started_ms,
                    &task.expires_at_ms,
                ],
            )?;
            // Expired tasks go as new ones come: the table holds what clients may still ask for.
            tx.execute(
                "DELETE FROM client_tasks WHERE expires_at_ms <= $1",
                &[&now_ms],
            )?;
            tx.commit()?;
            Ok(())
        })
    }

    fn client_task(
        &self,
        id: &str,
        surface: &str,
        now_ms: i64,
    ) -> Result<Option<ClientTask>, StoreError> {
        let (id, surface) = (id.to_owned(), surface.to_owned());
        self.pool.run(move |c| {
            Ok(c.query_opt(
                "SELECT id, surface, detail, ended, owner_pid, owner_started_ms, expires_at_ms
                 FROM client_tasks WHERE id = $1 AND surface = $2 AND expires_at_ms > $3",
                &[&id, &surface, &now_ms],
            )?
            .map(|row| ClientTask {
                id: row.get(0),
                surface: row.get(1),
                detail: row.get(2),
                ended: row.get(3),
                owner: RunOwner {
                    pid: to_u32(row.get(4)),
                    started_ms: row.get(5),
                },
                expires_at_ms: row.get(6),
            }))
        })
    }
}
