//! Records of tool calls (capa-store's calls.rs).

use capa_store::{CallRecord, CallStatus, CallStore, RecordedCall, StoreError};
use postgres::GenericClient;

use crate::PgStore;
use crate::pool::Failed;

impl CallStore for PgStore {
    fn record_call(&self, call: &CallRecord) -> Result<i64, StoreError> {
        let call = call.clone();
        self.pool.run(move |c| insert_call(c, &call))
    }

    fn recent_calls(&self, limit: u32) -> Result<Vec<RecordedCall>, StoreError> {
        self.pool.run(move |c| {
            let rows = c.query(
                "SELECT id, address, connection, client, started_at_ms, duration_ms, status,
                        error_code, error_message, request_bytes, response_bytes
                 FROM tool_calls ORDER BY id DESC LIMIT $1",
                &[&i64::from(limit)],
            )?;
            Ok(rows
                .iter()
                .map(|row| RecordedCall {
                    id: row.get(0),
                    call: CallRecord {
                        address: row.get(1),
                        connection: row.get(2),
                        client: row.get(3),
                        started_at_ms: row.get(4),
                        duration_ms: row.get(5),
                        status: CallStatus::parse(row.get(6)),
                        error_code: row.get(7),
                        error_message: row.get(8),
                        request_bytes: row.get(9),
                        response_bytes: row.get(10),
                    },
                })
                .collect())
        })
    }
}

/// Inserts one call record; its row id.
pub(crate) fn insert_call(c: &mut impl GenericClient, call: &CallRecord) -> Result<i64, Failed> {
    let row = c.query_one(
        "INSERT INTO tool_calls (address, connection, client, started_at_ms, duration_ms, status,
                                 error_code, error_message, request_bytes, response_bytes)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) RETURNING id",
        &[
            &call.address,
            &call.connection,
            &call.client,
            &call.started_at_ms,
            &call.duration_ms,
            &call.status.as_str(),
            &call.error_code,
            &call.error_message,
            &call.request_bytes,
            &call.response_bytes,
        ],
    )?;
    Ok(row.get(0))
}
