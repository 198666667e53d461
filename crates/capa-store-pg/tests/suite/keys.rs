//! Keys shared through the database: on PostgreSQL the first hub's key stands for every hub;
//! SQLite keeps none (a person's hub keeps its keys in files of its data dir).

use crate::support;

#[test]
fn the_first_hubs_key_stands_and_sqlite_keeps_none() {
    support::each_place(|place| {
        let first = place
            .open()
            .shared_key("request_state", &[1; 32])
            .expect("key");
        let second = place
            .open()
            .shared_key("request_state", &[2; 32])
            .expect("key");
        let other = place.open().shared_key("another", &[3; 32]).expect("key");
        if place.postgres_url().is_some() {
            assert_eq!(first, Some(vec![1; 32]));
            assert_eq!(second, Some(vec![1; 32]), "a later hub gets the first key");
            assert_eq!(other, Some(vec![3; 32]), "keys are kept by name");
        } else {
            assert_eq!((first, second, other), (None, None, None));
        }
    });
}
