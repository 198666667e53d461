//! Keys shared through the database: on PostgreSQL the first hub's key stands for every hub;
//! SQLite keeps none (a person's hub keeps its keys in files of its data dir).

use capa_store::Rotation;

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

/// The keys of `family` as (generation, first byte) pairs, newest first.
fn generations(
    store: &capa_store::Store,
    family: &str,
    candidate: u8,
    rotation: Rotation,
) -> Option<Vec<(u64, u8)>> {
    store
        .rotating_keys(family, &[candidate; 32], rotation)
        .expect("rotating keys")
        .map(|keys| keys.iter().map(|k| (k.generation, k.key[0])).collect())
}

const HOUR: i64 = 3_600_000;

#[test]
fn a_rotating_key_gets_a_new_generation_when_old_and_drops_replaced_ones_after_their_window() {
    support::each_place(|place| {
        let store = place.open();
        let keep = Rotation {
            every_ms: HOUR,
            accept_ms: HOUR,
        };
        let first = generations(&store, "request_state", 1, keep);
        if place.postgres_url().is_none() {
            assert_eq!(first, None, "SQLite keeps no key");
            return;
        }
        assert_eq!(first, Some(vec![(0, 1)]));
        assert_eq!(
            generations(&place.open(), "request_state", 2, keep),
            Some(vec![(0, 1)]),
            "young: it stands"
        );
        // Old at once: the next generation signs, the one before is still accepted.
        let rotate = Rotation {
            every_ms: 0,
            accept_ms: HOUR,
        };
        assert_eq!(
            generations(&store, "request_state", 3, rotate),
            Some(vec![(1, 3), (0, 1)])
        );
        assert_eq!(
            generations(&store, "request_state", 4, rotate),
            Some(vec![(2, 4), (1, 3), (0, 1)])
        );
        assert_eq!(
            generations(&store, "another", 5, keep),
            Some(vec![(0, 5)]),
            "families are apart"
        );
        // Past the window of what they signed, replaced generations are deleted.
        let drop = Rotation {
            every_ms: HOUR,
            accept_ms: -1,
        };
        assert_eq!(
            generations(&store, "request_state", 6, drop),
            Some(vec![(2, 4)])
        );
        assert_eq!(
            generations(&place.open(), "request_state", 7, keep),
            Some(vec![(2, 4)])
        );
        assert_eq!(generations(&store, "another", 8, keep), Some(vec![(0, 5)]));
    });
}

#[test]
fn a_key_written_before_rotation_is_generation_zero() {
    support::each_place(|place| {
        let store = place.open();
        if store
            .shared_key("request_state", &[9; 32])
            .expect("key")
            .is_none()
        {
            return;
        }
        let keep = Rotation {
            every_ms: HOUR,
            accept_ms: HOUR,
        };
        assert_eq!(
            generations(&store, "request_state", 1, keep),
            Some(vec![(0, 9)])
        );
        let rotate = Rotation {
            every_ms: 0,
            accept_ms: HOUR,
        };
        assert_eq!(
            generations(&store, "request_state", 2, rotate),
            Some(vec![(1, 2), (0, 9)])
        );
    });
}

#[test]
fn replicas_that_find_the_key_old_at_once_make_one_generation() {
    support::each_place(|place| {
        if place.postgres_url().is_none() {
            return;
        }
        let stores: Vec<_> = (0..2).map(|_| place.open()).collect();
        let keep = Rotation {
            every_ms: HOUR,
            accept_ms: HOUR,
        };
        let seen = std::thread::scope(|scope| {
            let handles: Vec<_> = (0..8u8)
                .map(|i| {
                    let store = &stores[usize::from(i % 2)];
                    scope.spawn(move || generations(store, "request_state", 10 + i, keep))
                })
                .collect();
            handles
                .into_iter()
                .map(|h| h.join().expect("thread"))
                .collect::<Vec<_>>()
        });
        let first = seen[0].clone().expect("keys");
        assert_eq!(first.len(), 1, "{seen:?}");
        assert!(
            seen.iter().all(|s| s.as_ref() == Some(&first)),
            "every replica got one key: {seen:?}"
        );
    });
}
