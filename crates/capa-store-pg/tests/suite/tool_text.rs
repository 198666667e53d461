//! Which flagged tool texts a person accepted.

use crate::support;

#[test]
fn an_accepted_text_is_kept_per_address_and_digest() {
    support::each_store(|store| {
        assert!(store.accepted_tool_texts().expect("read").is_empty());
        store
            .accept_tool_text("poison.add", "d1", 1)
            .expect("accept");
        store
            .accept_tool_text("poison.add", "d1", 2)
            .expect("again");
        let accepted = store.accepted_tool_texts().expect("read");
        assert_eq!(accepted.len(), 1);
        assert!(accepted.contains(&("poison.add".to_owned(), "d1".to_owned())));
        assert!(!accepted.contains(&("poison.add".to_owned(), "d2".to_owned())));
    });
}

#[test]
fn another_text_of_the_same_tool_is_accepted_on_its_own() {
    support::each_place(|place| {
        {
            let store = place.open();
            store
                .accept_tool_text("poison.add", "d1", 1)
                .expect("accept");
            store
                .accept_tool_text("poison.add", "d2", 2)
                .expect("accept");
            store
                .accept_tool_text("poison.sub", "d1", 3)
                .expect("accept");
        }
        let accepted = place.open().accepted_tool_texts().expect("read");
        assert_eq!(accepted.len(), 3);
        assert!(accepted.contains(&("poison.add".to_owned(), "d2".to_owned())));
        assert!(accepted.contains(&("poison.sub".to_owned(), "d1".to_owned())));
    });
}
