//! The sources a person allowed to ask the client's model.

use crate::support;

#[test]
fn an_allowance_is_kept_until_revoked() {
    support::each_store(|store| {
        assert!(store.sampling_allowed_sources().expect("read").is_empty());
        store.allow_sampling("everything", 1).expect("allow");
        store.allow_sampling("everything", 2).expect("allow again");
        assert_eq!(
            store.sampling_allowed_sources().expect("read"),
            vec!["everything".to_owned()]
        );
        assert!(store.revoke_sampling("everything").expect("revoke"));
        assert!(!store.revoke_sampling("everything").expect("revoke again"));
        assert!(store.sampling_allowed_sources().expect("read").is_empty());
    });
}

#[test]
fn allowed_sources_are_listed_in_byte_order() {
    support::each_store(|store| {
        for source in ["notes", "Zulip", "a_b", "ab"] {
            store.allow_sampling(source, 1).expect("allow");
        }
        assert_eq!(
            store.sampling_allowed_sources().expect("read"),
            ["Zulip", "a_b", "ab", "notes"]
        );
    });
}
