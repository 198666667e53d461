//! Connection metadata: the fields each connection holds and which one is a source's default.

use capa_store::Store;

use crate::support;

/// The names of the source's default connections (one, when the store keeps its promise).
fn defaults(store: &Store, source: &str) -> Vec<String> {
    store
        .connections()
        .expect("list")
        .into_iter()
        .filter(|c| c.source == source && c.is_default)
        .map(|c| c.name)
        .collect()
}

#[test]
fn the_first_connection_is_the_default_until_another_is_chosen() {
    support::each_store(|store| {
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
        assert_eq!(defaults(store, "gh"), ["work"]);
        // Another field, not asked to be the default, leaves the default where it is.
        let work = store
            .upsert_connection_field("gh", "work", "user", false, 4)
            .expect("a field more");
        assert!(work.is_default);
        let removed = store.remove_connection("gh", "work").expect("remove");
        assert_eq!(removed.map(|c| c.name).as_deref(), Some("work"));
        let all = store.connections().expect("list");
        assert_eq!(all.len(), 1);
        assert!(
            all[0].is_default,
            "the remaining connection becomes the default"
        );
    });
}

#[test]
fn fields_accumulate_without_duplicates() {
    support::each_store(|store| {
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
        assert_eq!((c.created_at_ms, c.updated_at_ms), (1, 3));
        assert_eq!(store.connection("s", "c").expect("read"), Some(c));
        assert_eq!(store.connection("s", "nope").expect("read"), None);
    });
}

#[test]
fn connections_are_listed_by_source_then_name_in_byte_order() {
    support::each_store(|store| {
        for (source, name) in [
            ("notes", "b"),
            ("Zulip", "x"),
            ("notes", "a_b"),
            ("notes", "ab"),
        ] {
            store
                .upsert_connection_field(source, name, "token", false, 1)
                .expect("add");
        }
        let listed: Vec<(String, String)> = store
            .connections()
            .expect("list")
            .into_iter()
            .map(|c| (c.source, c.name))
            .collect();
        let expected = [
            ("Zulip", "x"),
            ("notes", "a_b"),
            ("notes", "ab"),
            ("notes", "b"),
        ];
        assert_eq!(listed, expected.map(|(s, n)| (s.to_owned(), n.to_owned())));
    });
}

#[test]
fn removing_the_default_promotes_the_oldest_remaining() {
    support::each_store(|store| {
        for (name, at) in [("notes", 2), ("Zulip", 2), ("first", 1), ("chosen", 3)] {
            store
                .upsert_connection_field("s", name, "token", name == "chosen", at)
                .expect("add");
        }
        assert_eq!(defaults(store, "s"), ["chosen"]);
        assert_eq!(store.remove_connection("s", "nope").expect("remove"), None);
        store.remove_connection("s", "chosen").expect("remove");
        assert_eq!(defaults(store, "s"), ["first"], "the oldest");
        store.remove_connection("s", "first").expect("remove");
        assert_eq!(
            defaults(store, "s"),
            ["Zulip"],
            "of two as old, the first name in byte order"
        );
        // Removing a connection that is not the default moves nothing.
        store.remove_connection("s", "notes").expect("remove");
        assert_eq!(defaults(store, "s"), ["Zulip"]);
    });
}

#[test]
fn fields_added_at_once_are_all_kept_and_a_source_has_one_default() {
    support::each_store(|store| {
        std::thread::scope(|scope| {
            for n in 0..8 {
                scope.spawn(move || {
                    store
                        .upsert_connection_field("s", "shared", &format!("f{n}"), false, 1)
                        .expect("a field");
                    store
                        .upsert_connection_field("t", &format!("c{n}"), "token", false, 1)
                        .expect("a connection");
                });
            }
        });
        let shared = store
            .connection("s", "shared")
            .expect("read")
            .expect("kept");
        assert_eq!(
            shared.fields,
            (0..8).map(|n| format!("f{n}")).collect::<Vec<_>>(),
            "no field is lost"
        );
        assert_eq!(
            defaults(store, "t").len(),
            1,
            "one default: {:?}",
            defaults(store, "t")
        );
    });
}
