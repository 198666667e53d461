//! Clients a person paired with the hub, and the runs they started.

use capa_store::PairedClient;

use crate::support;

fn client(id: &str) -> PairedClient {
    PairedClient {
        id: id.to_owned(),
        name: "Claude Code".to_owned(),
        forms: true,
        created_at_ms: 1,
        last_seen_ms: None,
    }
}

#[test]
fn a_paired_client_is_found_by_its_key_digest_only() {
    support::each_store(|store| {
        store
            .insert_paired_client(&client("pc_1"), "digest-1")
            .expect("insert");
        assert_eq!(
            store
                .paired_client_by_key("digest-2", Some(10))
                .expect("read"),
            None
        );
        let found = store
            .paired_client_by_key("digest-1", Some(100_000))
            .expect("read")
            .expect("found");
        assert_eq!(found.id, "pc_1");
        assert_eq!(
            store
                .paired_client("pc_1")
                .expect("read")
                .expect("kept")
                .last_seen_ms,
            Some(100_000)
        );
        assert!(store.set_paired_client_forms("pc_1", false).expect("set"));
        assert!(!store.paired_clients().expect("list")[0].forms);
        assert!(store.remove_paired_client("pc_1").expect("remove"));
        assert_eq!(
            store.paired_client_by_key("digest-1", None).expect("read"),
            None
        );
    });
}

#[test]
fn presenting_a_key_is_noted_at_most_once_a_minute() {
    support::each_store(|store| {
        store
            .insert_paired_client(&client("pc_1"), "digest-1")
            .expect("insert");
        let seen = |at: Option<i64>| {
            store
                .paired_client_by_key("digest-1", at)
                .expect("read")
                .expect("found")
                .last_seen_ms
        };
        let kept = || {
            store
                .paired_client("pc_1")
                .expect("read")
                .expect("kept")
                .last_seen_ms
        };
        // The answer is the client as it was before this presentation.
        assert_eq!(seen(Some(100_000)), None);
        assert_eq!(kept(), Some(100_000));
        assert_eq!(seen(Some(160_000)), Some(100_000));
        assert_eq!(kept(), Some(100_000), "a minute has not passed");
        assert_eq!(seen(None), Some(100_000));
        assert_eq!(kept(), Some(100_000), "without a time nothing is noted");
        assert_eq!(seen(Some(160_001)), Some(100_000));
        assert_eq!(kept(), Some(160_001));
    });
}

#[test]
fn paired_clients_are_listed_oldest_first_and_keys_are_unique() {
    support::each_store(|store| {
        let newer = PairedClient {
            created_at_ms: 5,
            last_seen_ms: Some(7),
            ..client("pc_a")
        };
        store
            .insert_paired_client(&newer, "digest-a")
            .expect("insert");
        store
            .insert_paired_client(&client("pc_c"), "digest-c")
            .expect("insert");
        store
            .insert_paired_client(&client("pc_b"), "digest-b")
            .expect("insert");
        assert!(
            store
                .insert_paired_client(&client("pc_d"), "digest-b")
                .is_err(),
            "one key pairs one client"
        );
        assert_eq!(
            store.paired_clients().expect("list"),
            [client("pc_b"), client("pc_c"), newer]
        );
        assert!(!store.set_paired_client_forms("pc_z", false).expect("set"));
        assert!(!store.remove_paired_client("pc_z").expect("remove"));
    });
}

#[test]
fn a_runs_pairing_is_set_once() {
    support::each_store(|store| {
        store.set_run_pairing("run_1", "pc_1").expect("set");
        store.set_run_pairing("run_1", "pc_2").expect("set again");
        assert_eq!(
            store.run_pairing("run_1").expect("read").as_deref(),
            Some("pc_1")
        );
        assert_eq!(store.run_pairing("run_2").expect("read"), None);
    });
}
