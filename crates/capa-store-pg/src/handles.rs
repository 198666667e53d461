//! Results and logs too large for the envelope, read back by handle in pieces (capa-store's
//! handles.rs). Bounded at every insert by age and by total bytes, the oldest going first in
//! the order handles were kept (`seq`, where SQLite has its rowid).

use capa_store::{
    HandleBounds, HandleInfo, HandleOf, HandleRecord, HandleStore, HandleSummary, JsonType,
    StoreError,
};
use postgres::Row;

use crate::PgStore;

/// What a handle's row says without its body, in the order [`summary_of`] and [`info_of`] read.
const INFO_COLUMNS: &str = "id, of, value_type, bytes, created_at_ms, run_id, client";

impl HandleStore for PgStore {
    fn put_handle(
        &self,
        record: &HandleRecord,
        bounds: HandleBounds,
    ) -> Result<Option<usize>, StoreError> {
        if record.body.len() as u64 > bounds.max_total_bytes {
            return Ok(None);
        }
        let record = record.clone();
        let cutoff = record.created_at_ms.saturating_sub(bounds.keep_ms);
        let max_bytes = i64::try_from(bounds.max_total_bytes).unwrap_or(i64::MAX);
        self.pool.run(move |c| {
            let mut tx = c.transaction()?;
            // Puts take turns, as on SQLite: each one's sums see every handle an earlier put
            // kept, so two at once cannot together keep more than the bound, and `seq` follows
            // the order they committed in. Reads go on beside.
            tx.batch_execute("LOCK TABLE result_handles IN SHARE ROW EXCLUSIVE MODE")?;
            tx.execute(
                "INSERT INTO result_handles
                     (id, run_id, client, of, value_type, bytes, body, created_at_ms)
                 VALUES ($1, $2, $3, $4, $5, $6, $7, $8)",
                &[
                    &record.id,
                    &record.run_id,
                    &record.client,
                    &record.of.as_str(),
                    &record.value_type.as_str(),
                    &i64::try_from(record.body.len()).unwrap_or(i64::MAX),
                    &record.body.as_bytes(),
                    &record.created_at_ms,
                ],
            )?;
            let mut dropped = tx.execute(
                "DELETE FROM result_handles WHERE created_at_ms < $1",
                &[&cutoff],
            )?;
            // Newest first, each row with the bytes of itself and every newer one: rows whose
            // sum is over the bound are the oldest that do not fit.
            dropped += tx.execute(
                "DELETE FROM result_handles WHERE id IN (
                    SELECT id FROM (
                        SELECT id, SUM(bytes) OVER (ORDER BY created_at_ms DESC, seq DESC) AS newer
                        FROM result_handles
                    ) AS sums WHERE newer > $1::BIGINT
                )",
                &[&max_bytes],
            )?;
            tx.commit()?;
            Ok(Some(usize::try_from(dropped).unwrap_or(usize::MAX)))
        })
    }

    fn handle(&self, id: &str, kept_since_ms: i64) -> Result<Option<HandleRecord>, StoreError> {
        let id = id.to_owned();
        self.pool.run(move |c| {
            // One statement: the body is the one of the row found.
            let row = c.query_opt(
                &format!(
                    "SELECT {INFO_COLUMNS}, body FROM result_handles
                     WHERE id = $1 AND created_at_ms >= $2"
                ),
                &[&id, &kept_since_ms],
            )?;
            let Some(row) = row else { return Ok(None) };
            let Some(info) = info_of(&row) else {
                return Ok(None);
            };
            Ok(Some(HandleRecord {
                id: info.summary.id,
                run_id: info.run_id,
                client: info.client,
                of: info.summary.of,
                value_type: info.summary.value_type,
                body: crate::text_of(row.get(7))?,
                created_at_ms: info.summary.created_at_ms,
            }))
        })
    }

    fn handle_info(&self, id: &str, kept_since_ms: i64) -> Result<Option<HandleInfo>, StoreError> {
        let id = id.to_owned();
        self.pool.run(move |c| {
            let row = c.query_opt(
                &format!(
                    "SELECT {INFO_COLUMNS} FROM result_handles
                     WHERE id = $1 AND created_at_ms >= $2"
                ),
                &[&id, &kept_since_ms],
            )?;
            Ok(row.as_ref().and_then(info_of))
        })
    }

    fn handle_bytes(
        &self,
        id: &str,
        start: u64,
        len: usize,
    ) -> Result<Option<Vec<u8>>, StoreError> {
        let id = id.to_owned();
        // `substring` counts from 1 in `integer`s. A body is at most 1 GB (PostgreSQL's limit
        // on a value), so a start or length beyond `i32::MAX` is past the end anyway: clamped,
        // it gives the same bytes (none, or up to the end).
        let from = i32::try_from(start).map_or(i32::MAX, |s| s.saturating_add(1));
        let count = i32::try_from(len).unwrap_or(i32::MAX);
        self.pool.run(move |c| {
            // The body is UTF-8 bytes (schema.rs, 19): `substring` cuts the piece, and only
            // the piece crosses the connection. The bytes are those of SQLite's for the same
            // arguments: fewer or none past the end, and cut inside a character wherever the
            // range says.
            let row = c.query_opt(
                "SELECT substring(body FROM $2::INTEGER FOR $3::INTEGER)
                 FROM result_handles WHERE id = $1",
                &[&id, &from, &count],
            )?;
            Ok(row.map(|row| row.get(0)))
        })
    }

    fn handles_of_run(
        &self,
        run_id: &str,
        kept_since_ms: i64,
    ) -> Result<Vec<HandleSummary>, StoreError> {
        let run_id = run_id.to_owned();
        self.pool.run(move |c| {
            let rows = c.query(
                "SELECT id, of, value_type, bytes, created_at_ms FROM result_handles
                 WHERE run_id = $1 AND created_at_ms >= $2 ORDER BY created_at_ms, seq",
                &[&run_id, &kept_since_ms],
            )?;
            Ok(rows.iter().filter_map(summary_of).collect())
        })
    }
}

/// A handle without its body from a row of [`INFO_COLUMNS`]; `None` for an `of` or type this
/// build does not know (the row reads as gone).
fn info_of(row: &Row) -> Option<HandleInfo> {
    Some(HandleInfo {
        summary: summary_of(row)?,
        run_id: row.get(5),
        client: row.get(6),
    })
}

/// A summary from a row whose first columns are `id, of, value_type, bytes, created_at_ms`;
/// `None` for an `of` or type this build does not know.
fn summary_of(row: &Row) -> Option<HandleSummary> {
    Some(HandleSummary {
        id: row.get(0),
        of: HandleOf::parse(row.get(1))?,
        value_type: JsonType::parse(row.get(2))?,
        bytes: u64::try_from(row.get::<_, i64>(3)).unwrap_or(0),
        created_at_ms: row.get(4),
    })
}
