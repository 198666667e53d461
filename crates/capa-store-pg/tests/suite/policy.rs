//! What a person confirmed: the policy, the sources (known to have begun by a marker), and the
//! project sources and settings they trusted.

use std::collections::BTreeMap;

use capa_store::TrustedProjectSource;

use crate::support;

#[test]
fn the_confirmed_policy_is_the_last_one_confirmed() {
    support::each_place(|place| {
        let store = place.open();
        assert_eq!(store.confirmed_policy().expect("read"), None);
        store.set_confirmed_policy("{\"a\":1}", 1).expect("confirm");
        store
            .set_confirmed_policy("{\"a\":2}", 2)
            .expect("confirm again");
        drop(store);
        assert_eq!(
            place.open().confirmed_policy().expect("read").as_deref(),
            Some("{\"a\":2}")
        );
    });
}

#[test]
fn confirmed_sources_are_none_until_the_first_and_then_each_its_last_digest() {
    support::each_place(|place| {
        let store = place.open();
        assert_eq!(store.confirmed_sources().expect("read"), None);
        store.confirm_source("notes", "d1", 1).expect("confirm");
        store.confirm_source("files", "f1", 2).expect("confirm");
        store
            .confirm_source("notes", "d2", 3)
            .expect("confirm again");
        drop(store);
        let expected = BTreeMap::from([
            ("files".to_owned(), "f1".to_owned()),
            ("notes".to_owned(), "d2".to_owned()),
        ]);
        assert_eq!(
            place.open().confirmed_sources().expect("read"),
            Some(expected),
            "the marker is not a source"
        );
    });
}

#[test]
fn a_trusted_project_source_is_kept_per_file_and_source() {
    support::each_place(|place| {
        let store = place.open();
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
        assert_eq!(
            store
                .trusted_project_source("/p/capabilities.yaml", "notes")
                .expect("read"),
            None,
            "another source of the same file is not trusted"
        );
        let changed = TrustedProjectSource {
            digest: "d2".into(),
            global_connections: false,
        };
        store
            .trust_project_source("/p/capabilities.yaml", "files", &changed, 2)
            .expect("trust again");
        drop(store);
        let store = place.open();
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
    });
}

#[test]
fn trusted_project_settings_are_kept_per_file() {
    support::each_place(|place| {
        let store = place.open();
        assert_eq!(
            store
                .trusted_project_settings("/p/capabilities.yaml")
                .expect("read"),
            None
        );
        store
            .trust_project_settings("/p/capabilities.yaml", "s1", 1)
            .expect("trust");
        store
            .trust_project_settings("/p/capabilities.yaml", "s2", 2)
            .expect("trust again");
        drop(store);
        let store = place.open();
        assert_eq!(
            store
                .trusted_project_settings("/p/capabilities.yaml")
                .expect("read")
                .as_deref(),
            Some("s2")
        );
        assert_eq!(
            store
                .trusted_project_settings("/q/capabilities.yaml")
                .expect("read"),
            None
        );
    });
}
