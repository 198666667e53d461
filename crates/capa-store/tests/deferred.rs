//! Queued writes (call records, journal entries): every read sees them, they keep their order,
//! and they reach the file without another statement — within the flush delay, or at drop.

use std::time::{Duration, Instant};

use capa_store::{CallRecord, CallStatus, JournalEntry, RunRecord, Store};

fn call(address: &str) -> CallRecord {
    CallRecord {
        address: address.into(),
        connection: None,
        client: Some("test".into()),
        started_at_ms: 1,
        duration_ms: 2,
        status: CallStatus::Ok,
        error_code: None,
        error_message: None,
        request_bytes: 3,
        response_bytes: 4,
    }
}

fn entry(index: u32, outcome: &str, in_flight: bool) -> JournalEntry {
    JournalEntry {
        index,
        address: "demo.t".into(),
        connection: None,
        arguments: "{}".into(),
        ok: !in_flight,
        outcome: outcome.into(),
        ms: 1,
        args_digest: Some("d".into()),
        in_flight,
    }
}

fn run(id: &str) -> RunRecord {
    RunRecord {
        id: id.into(),
        code: "return 1".into(),
        seed: 1,
        clock_start_ms: 1,
        client: None,
        status: capa_store::RunState::Running,
        envelope: None,
        attempts: 1,
        created_at_ms: 1,
        updated_at_ms: 1,
        resumable: true,
        owner: None,
        lease: None,
    }
}

/// A store on a new file: its directory (removed when dropped), the file, the store.
fn fresh_store() -> (tempfile::TempDir, std::path::PathBuf, Store) {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("hub.db");
    let store = Store::open(&path).expect("open");
    (dir, path, store)
}

/// Rows of `table` as another process would see them: through its own connection to the file.
fn rows_on_disk(path: &std::path::Path, table: &str) -> i64 {
    let conn = rusqlite::Connection::open(path).expect("open raw");
    conn.query_row(&format!("SELECT COUNT(*) FROM {table}"), [], |r| r.get(0))
        .expect("count")
}

#[test]
fn a_read_sees_every_queued_write_in_order() {
    let (_dir, _path, store) = fresh_store();
    store.insert_run(&run("run_1")).expect("run");
    store.defer_call_record(call("demo.a"));
    store.defer_call_record(call("demo.b"));
    // In flight, then answered, then answered again by a write that does not wait: the last
    // write of a position wins, as if each had been made at once.
    store.defer_journal_call("run_1", entry(0, "null", true));
    store.defer_journal_call("run_1", entry(0, "1", false));
    store
        .journal_call("run_1", &entry(0, "2", false))
        .expect("journal");
    let calls = store.recent_calls(10).expect("calls");
    let addresses: Vec<&str> = calls.iter().map(|c| c.call.address.as_str()).collect();
    assert_eq!(addresses, ["demo.b", "demo.a"], "newest first");
    let journal = store.journal("run_1").expect("journal");
    assert_eq!(journal, vec![entry(0, "2", false)]);
}

#[test]
fn queued_writes_reach_the_file_without_another_statement() {
    let (_dir, path, store) = fresh_store();
    store.defer_call_record(call("demo.a"));
    let deadline = Instant::now() + Duration::from_secs(10);
    while rows_on_disk(&path, "tool_calls") == 0 {
        assert!(
            Instant::now() < deadline,
            "the queued write never reached the file"
        );
        std::thread::sleep(Duration::from_millis(1));
    }
}

#[test]
fn flush_and_drop_make_queued_writes_durable() {
    let (_dir, path, store) = fresh_store();
    store.defer_call_record(call("demo.a"));
    store.flush().expect("flush");
    assert_eq!(rows_on_disk(&path, "tool_calls"), 1);
    for i in 0..50 {
        store.defer_call_record(call(&format!("demo.{i}")));
    }
    drop(store);
    assert_eq!(rows_on_disk(&path, "tool_calls"), 51);
}

#[test]
fn a_write_that_fails_does_not_lose_the_others_of_its_group() {
    let (_dir, path, store) = fresh_store();
    store.insert_run(&run("run_1")).expect("run");
    store.defer_call_record(call("demo.a"));
    // No such run: the foreign key refuses this entry alone.
    store.defer_journal_call("run_gone", entry(0, "1", false));
    store.defer_journal_call("run_1", entry(0, "1", false));
    store.flush().expect("flush");
    assert_eq!(rows_on_disk(&path, "tool_calls"), 1);
    assert_eq!(store.journal("run_1").expect("journal").len(), 1);
    assert!(store.journal("run_gone").expect("journal").is_empty());
}

#[test]
fn a_queued_run_takes_its_queued_journal_in_the_same_commit() {
    let (_dir, path, store) = fresh_store();
    // The journal entry refers to the run: committed in order, the foreign key holds.
    store.defer_insert_run(run("run_q"));
    store.defer_journal_call("run_q", entry(0, "1", false));
    store.flush().expect("flush");
    assert_eq!(rows_on_disk(&path, "runs"), 1);
    assert_eq!(rows_on_disk(&path, "run_calls"), 1);
    assert!(store.run("run_q").expect("run").is_some());
}

#[test]
fn a_dropped_store_closes_its_connection_with_its_flush_thread() {
    let (dir, path, store) = fresh_store();
    store.defer_call_record(call("demo.a"));
    drop(store);
    // SQLite removes the write-ahead log when the last connection to the file closes: the
    // flush thread held the connection until it was joined.
    assert!(
        !dir.path().join("hub.db-wal").exists(),
        "the connection is still open after the store was dropped"
    );
    assert_eq!(rows_on_disk(&path, "tool_calls"), 1);
}

#[test]
fn an_answer_queued_after_its_entry_in_flight_replaces_it_for_its_own_run_only() {
    let (_dir, _path, store) = fresh_store();
    store.insert_run(&run("run_a")).expect("run");
    store.insert_run(&run("run_b")).expect("run");
    // Two runs' calls at the same positions, interleaved as concurrent runs write them.
    store.defer_journal_call("run_a", entry(0, "null", true));
    store.defer_journal_call("run_b", entry(0, "null", true));
    store.defer_call_record(call("demo.t"));
    store.defer_journal_call("run_a", entry(1, "null", true));
    store.defer_journal_call("run_b", entry(0, "\"b0\"", false));
    store.defer_journal_call("run_a", entry(0, "\"a0\"", false));
    assert_eq!(
        store.journal("run_a").expect("journal"),
        vec![entry(0, "\"a0\"", false), entry(1, "null", true)],
        "run_a's answer replaced its own entry, and its next call stays in flight"
    );
    assert_eq!(
        store.journal("run_b").expect("journal"),
        vec![entry(0, "\"b0\"", false)]
    );
}
