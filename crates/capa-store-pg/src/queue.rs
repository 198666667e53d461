//! Writes that may wait, in PostgreSQL: written at once, in the caller's order. SQLite's store
//! groups them into one transaction a few milliseconds later (capa-store's deferred.rs), which
//! pays there because a transaction costs a file sync; a PostgreSQL write costs a round trip
//! either way, and writing at once keeps the promise trivially (every later read sees it).
//! A write that fails is logged, as a failed group is there.

use capa_store::{CallRecord, JournalEntry, RunRecord, StoreError, WriteQueue};

use crate::PgStore;

impl WriteQueue for PgStore {
    fn defer_call_record(&self, call: CallRecord) {
        if let Err(e) = self.pool.run(move |c| crate::calls::insert_call(c, &call)) {
            tracing::error!(error = %e, "could not write a call record");
        }
    }

    fn defer_insert_run(&self, run: RunRecord) {
        if let Err(e) = self.pool.run(move |c| crate::runs::insert_run_row(c, &run)) {
            tracing::error!(error = %e, "could not write a run record");
        }
    }

    fn defer_journal_call(&self, run_id: &str, entry: JournalEntry) {
        let run_id = run_id.to_owned();
        let written = self
            .pool
            .run(move |c| crate::runs::write_journal_entry(c, &run_id, &entry));
        if let Err(e) = written {
            tracing::error!(error = %e, "could not write a journal entry");
        }
    }

    fn flush(&self) -> Result<(), StoreError> {
        Ok(())
    }
}
