//! Connection metadata: which secret fields each connection of a source holds, and which one is
//! the default (capa-store's connections.rs). The values are in the keychain, never here.

use capa_store::{ConnectionRecord, ConnectionStore, StoreError};
use postgres::GenericClient;
use postgres::types::ToSql;

use crate::PgStore;
use crate::pool::Failed;

/// Taken first by each transaction that writes connections, so that what it read (the fields of
/// a connection, whether the source has a default) still holds when it writes: under READ
/// COMMITTED two callers adding a field each would otherwise both write their own list, and one
/// field would be lost. A row lock (`FOR UPDATE`) is not enough: the connection, or the source's
/// default, may not exist yet. The mode lets plain reads go on; writers take turns, as on
/// SQLite, and a person adds connections rarely.
const LOCK: &str = "LOCK TABLE connections IN SHARE ROW EXCLUSIVE MODE";

impl ConnectionStore for PgStore {
    fn upsert_connection_field(
        &self,
        source: &str,
        name: &str,
        field: &str,
        make_default: bool,
        now_ms: i64,
    ) -> Result<ConnectionRecord, StoreError> {
        let (source, name, field) = (source.to_owned(), name.to_owned(), field.to_owned());
        self.pool.run(move |c| {
            let mut tx = c.transaction()?;
            tx.batch_execute(LOCK)?;
            let existing: Option<String> = tx
                .query_opt(
                    "SELECT fields FROM connections WHERE source = $1 AND name = $2",
                    &[&source, &name],
                )?
                .map(|row| row.get(0));
            // A damaged list starts again empty, as SQLite's store does.
            let mut fields: Vec<String> = existing
                .as_deref()
                .and_then(|f| serde_json::from_str(f).ok())
                .unwrap_or_default();
            if !fields.contains(&field) {
                fields.push(field);
                fields.sort();
            }
            let fields_json = serde_json::to_string(&fields).unwrap_or_else(|_| "[]".into());
            let has_default: bool = tx
                .query_one(
                    "SELECT EXISTS(SELECT 1 FROM connections
                                   WHERE source = $1 AND is_default AND name <> $2)",
                    &[&source, &name],
                )?
                .get(0);
            let is_default = make_default || !has_default;
            if make_default {
                tx.execute(
                    "UPDATE connections SET is_default = FALSE WHERE source = $1",
                    &[&source],
                )?;
            }
            tx.execute(
                "INSERT INTO connections
                     (source, name, fields, is_default, created_at_ms, updated_at_ms)
                 VALUES ($1, $2, $3, $4, $5, $5)
                 ON CONFLICT (source, name) DO UPDATE SET fields = EXCLUDED.fields,
                     is_default = EXCLUDED.is_default OR connections.is_default,
                     updated_at_ms = EXCLUDED.updated_at_ms",
                &[&source, &name, &fields_json, &is_default, &now_ms],
            )?;
            // Read before the commit: the record answered is the one this call wrote.
            let record = select(
                &mut tx,
                "WHERE source = $1 AND name = $2",
                &[&source, &name],
            )?
            .pop()
            .ok_or_else(|| {
                StoreError::Backend("the connection just written could not be read back".into())
            })?;
            tx.commit()?;
            Ok(record)
        })
    }

    fn connection(&self, source: &str, name: &str) -> Result<Option<ConnectionRecord>, StoreError> {
        let (source, name) = (source.to_owned(), name.to_owned());
        self.pool.run(move |c| {
            Ok(select(c, "WHERE source = $1 AND name = $2", &[&source, &name])?.pop())
        })
    }

    fn connections(&self) -> Result<Vec<ConnectionRecord>, StoreError> {
        self.pool.run(|c| select(c, "", &[]))
    }

    fn remove_connection(
        &self,
        source: &str,
        name: &str,
    ) -> Result<Option<ConnectionRecord>, StoreError> {
        let (source, name) = (source.to_owned(), name.to_owned());
        self.pool.run(move |c| {
            // One transaction under the lock: the record answered is the one deleted, and a
            // connection added meanwhile cannot miss that the default went.
            let mut tx = c.transaction()?;
            tx.batch_execute(LOCK)?;
            let Some(record) = select(
                &mut tx,
                "WHERE source = $1 AND name = $2",
                &[&source, &name],
            )?
            .pop() else {
                tx.rollback()?;
                return Ok(None);
            };
            tx.execute(
                "DELETE FROM connections WHERE source = $1 AND name = $2",
                &[&source, &name],
            )?;
            if record.is_default {
                tx.execute(
                    "UPDATE connections SET is_default = TRUE WHERE source = $1 AND name =
                       (SELECT name FROM connections WHERE source = $1
                        ORDER BY created_at_ms, name COLLATE \"C\" LIMIT 1)",
                    &[&source],
                )?;
            }
            tx.commit()?;
            Ok(Some(record))
        })
    }
}

/// The connections `filter` (a `WHERE` clause, or nothing) selects, by source then name in byte
/// order, as SQLite sorts them (PostgreSQL's default collation would sort by locale).
fn select(
    c: &mut impl GenericClient,
    filter: &str,
    params: &[&(dyn ToSql + Sync)],
) -> Result<Vec<ConnectionRecord>, Failed> {
    let rows = c.query(
        &format!(
            "SELECT source, name, fields, is_default, created_at_ms, updated_at_ms
             FROM connections {filter}
             ORDER BY source COLLATE \"C\", name COLLATE \"C\""
        ),
        params,
    )?;
    Ok(rows
        .iter()
        .map(|row| ConnectionRecord {
            source: row.get(0),
            name: row.get(1),
            fields: serde_json::from_str(row.get(2)).unwrap_or_default(),
            is_default: row.get(3),
            created_at_ms: row.get(4),
            updated_at_ms: row.get(5),
        })
        .collect())
}
