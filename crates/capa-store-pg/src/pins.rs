//! Pinned tool definitions, and the definition a pending input was asked under (capa-store's
//! pins.rs).

use std::collections::HashSet;

use capa_store::{PinStatus, PinStore, PinnedTool, StoreError};

use crate::PgStore;

impl PinStore for PgStore {
    fn pinned_tools(&self) -> Result<Vec<PinnedTool>, StoreError> {
        self.pool.run(|c| {
            // SQLite answers in the order rows were first written; PostgreSQL's heap order
            // moves as rows are updated, so a fixed order (by source and tool, in bytes)
            // stands instead. Callers key the pins by source and tool.
            let rows = c.query(
                "SELECT source, tool, digest, definition, status FROM pinned_tools
                 ORDER BY source COLLATE \"C\", tool COLLATE \"C\"",
                &[],
            )?;
            Ok(rows
                .iter()
                .map(|row| PinnedTool {
                    source: row.get(0),
                    tool: row.get(1),
                    digest: row.get(2),
                    definition: row.get(3),
                    status: PinStatus::parse(row.get(4)),
                })
                .collect())
        })
    }

    fn pin_tool(&self, pin: &PinnedTool, now_ms: i64) -> Result<(), StoreError> {
        self.pin_tools(std::slice::from_ref(pin), now_ms)
    }

    fn pin_tools(&self, pins: &[PinnedTool], now_ms: i64) -> Result<(), StoreError> {
        if pins.is_empty() {
            return Ok(());
        }
        // One statement cannot update a row twice: of a tool given twice, the last pin stands,
        // as when SQLite's store writes them one after the other.
        let mut seen = HashSet::new();
        let (mut sources, mut tools, mut digests, mut definitions, mut statuses) =
            (Vec::new(), Vec::new(), Vec::new(), Vec::new(), Vec::new());
        for pin in pins.iter().rev() {
            if seen.insert((&pin.source, &pin.tool)) {
                sources.push(pin.source.clone());
                tools.push(pin.tool.clone());
                digests.push(pin.digest.clone());
                definitions.push(pin.definition.clone());
                statuses.push(pin.status.as_str());
            }
        }
        self.pool.run(move |c| {
            // One statement for the whole list (a source's first listing may hold thousands of
            // tools): all or nothing, in one round trip.
            c.execute(
                "INSERT INTO pinned_tools (source, tool, digest, definition, status, pinned_at_ms)
                 SELECT s, t, d, def, st, $6::BIGINT
                 FROM unnest($1::TEXT[], $2::TEXT[], $3::TEXT[], $4::TEXT[], $5::TEXT[])
                     AS p(s, t, d, def, st)
                 ON CONFLICT (source, tool) DO UPDATE
                     SET digest = EXCLUDED.digest, definition = EXCLUDED.definition,
                         status = EXCLUDED.status, pinned_at_ms = EXCLUDED.pinned_at_ms",
                &[&sources, &tools, &digests, &definitions, &statuses, &now_ms],
            )?;
            Ok(())
        })
    }

    fn set_input_definition(&self, approval_id: &str, digest: &str) -> Result<(), StoreError> {
        let (approval_id, digest) = (approval_id.to_owned(), digest.to_owned());
        self.pool.run(move |c| {
            c.execute(
                "UPDATE approvals SET definition_digest = $2 WHERE id = $1",
                &[&approval_id, &digest],
            )?;
            Ok(())
        })
    }

    fn input_definition(&self, approval_id: &str) -> Result<Option<String>, StoreError> {
        let approval_id = approval_id.to_owned();
        self.pool.run(move |c| {
            Ok(c.query_opt(
                "SELECT definition_digest FROM approvals WHERE id = $1",
                &[&approval_id],
            )?
            .and_then(|row| row.get(0)))
        })
    }
}
