//! The store on a real SQLite file (the behaviour both backends share is in capa-store-pg's
//! suite, which runs on SQLite too).

use capa_store::Store;

#[test]
fn a_database_from_a_newer_hub_is_refused() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("hub.db");
    let conn = rusqlite::Connection::open(&path).expect("open");
    conn.pragma_update(None, "user_version", 99).expect("set");
    drop(conn);
    let err = Store::open(&path).expect_err("too new");
    assert!(err.to_string().contains("newer"), "{err}");
}
