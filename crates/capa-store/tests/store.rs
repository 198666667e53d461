//! The store on a real SQLite file.

use capa_store::{CallRecord, CallStatus, Store, TrustedProjectSource};

fn temp_store() -> (tempfile::TempDir, Store) {
    let dir = tempfile::tempdir().expect("tempdir");
    let store = Store::open(&dir.path().join("hub.db")).expect("open");
    (dir, store)
}

#[test]
fn calls_survive_reopening_the_file() {
    let (dir, store) = temp_store();
    let call = CallRecord {
        address: "demo.echo".into(),
        connection: Some("personal".into()),
        client: Some("test".into()),
        started_at_ms: 1,
        duration_ms: 2,
        status: CallStatus::ToolError,
        error_code: Some("tool_error".into()),
        error_message: Some("boom".into()),
        request_bytes: 10,
        response_bytes: 20,
    };
    store.record_call(&call).expect("record");
    drop(store);
    let store = Store::open(&dir.path().join("hub.db")).expect("reopen");
    let calls = store.recent_calls(10).expect("list");
    assert_eq!(calls.len(), 1);
    assert_eq!(calls[0].call, call);
    // The newest version this build knows: a new database's (no version number to keep in step).
    let newest = Store::in_memory()
        .expect("new")
        .schema_version()
        .expect("version");
    assert_eq!(store.schema_version().expect("version"), newest);
}

#[test]
fn the_first_connection_is_the_default_until_another_is_chosen() {
    let (_dir, store) = temp_store();
    let a = store
        .upsert_connection_field("gh", "personal", "token", false, 1)
        .expect("a");
    assert!(a.is_default);
    let b = store
        .upsert_connection_field("gh", "work", "token", false, 2)
        .expect("b");
    assert!(!b.is_default);
    store
        .upsert_connection_field("gh", "work", "token", true, 3)
        .expect("b default");
    let all = store.connections().expect("list");
    let defaults: Vec<_> = all
        .iter()
        .filter(|c| c.is_default)
        .map(|c| c.name.as_str())
        .collect();
    assert_eq!(defaults, vec!["work"]);
    store.remove_connection("gh", "work").expect("remove");
    let all = store.connections().expect("list");
    assert_eq!(all.len(), 1);
    assert!(
        all[0].is_default,
        "the remaining connection becomes the default"
    );
}

#[test]
fn fields_accumulate_without_duplicates() {
    let (_dir, store) = temp_store();
    store
        .upsert_connection_field("s", "c", "b", false, 1)
        .expect("1");
    store
        .upsert_connection_field("s", "c", "a", false, 2)
        .expect("2");
    let c = store
        .upsert_connection_field("s", "c", "a", false, 3)
        .expect("3");
    assert_eq!(c.fields, vec!["a", "b"]);
}

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

#[test]
fn a_trusted_project_source_is_kept_per_file_and_source() {
    let (dir, store) = temp_store();
    let trusted = TrustedProjectSource {
        digest: "d1".into(),
        global_connections: true,
    };
    store
        .trust_project_source("/p/capabilities.yaml", "files", &trusted, 1)
        .expect("trust");
    assert_eq!(
        store
            .trusted_project_source("/p/capabilities.yaml", "files")
            .expect("read"),
        Some(trusted)
    );
    assert_eq!(
        store
            .trusted_project_source("/q/capabilities.yaml", "files")
            .expect("read"),
        None,
        "another file with the same source id is not trusted"
    );
    let changed = TrustedProjectSource {
        digest: "d2".into(),
        global_connections: false,
    };
    store
        .trust_project_source("/p/capabilities.yaml", "files", &changed, 2)
        .expect("trust again");
    drop(store);
    let store = Store::open(&dir.path().join("hub.db")).expect("reopen");
    assert_eq!(
        store
            .trusted_project_source("/p/capabilities.yaml", "files")
            .expect("read"),
        Some(changed)
    );
    assert_eq!(
        store.confirmed_sources().expect("read"),
        None,
        "trusting a project source does not begin the person's own confirmations"
    );
}
