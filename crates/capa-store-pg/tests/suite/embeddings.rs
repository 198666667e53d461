//! The cache of the sentence model's vectors: hits in the order asked, misses for damaged
//! rows, and the rule that marks a hit used at most once an hour.
//!
//! Ageing and damaging rows is not something the store's API does: the tests that need it write
//! to the place's database beside the store (`Raw`), with SQL that differs only in how a blob is
//! spelled.

use std::time::{SystemTime, UNIX_EPOCH};

use crate::support::{self, Place};

fn hash(n: u8) -> [u8; 32] {
    [n; 32]
}

fn encode(vector: &[f32]) -> Vec<u8> {
    vector.iter().flat_map(|x| x.to_le_bytes()).collect()
}

fn unix_ms() -> i64 {
    let since = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .expect("after 1970");
    i64::try_from(since.as_millis()).expect("in range")
}

/// A connection to a place's database beside its store.
enum Raw {
    Sqlite(rusqlite::Connection),
    Postgres(postgres::Client),
}

impl Raw {
    fn to(place: &Place) -> Self {
        match place {
            Place::Sqlite(dir) => Self::Sqlite(
                rusqlite::Connection::open(dir.path().join("hub.db")).expect("open SQLite"),
            ),
            Place::Postgres { .. } => Self::Postgres(
                postgres::Client::connect(
                    &place.postgres_url().expect("a PostgreSQL place"),
                    postgres::NoTls,
                )
                .expect("connect"),
            ),
        }
    }

    /// `bytes` as an SQL literal.
    fn blob(&self, bytes: &[u8]) -> String {
        let hex: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
        match self {
            Self::Sqlite(_) => format!("X'{hex}'"),
            Self::Postgres(_) => format!("'\\x{hex}'::bytea"),
        }
    }

    fn execute(&mut self, sql: &str) {
        match self {
            Self::Sqlite(conn) => {
                conn.execute(sql, []).expect("SQLite");
            }
            Self::Postgres(client) => {
                client.execute(sql, &[]).expect("PostgreSQL");
            }
        }
    }

    fn used_at(&mut self, model: &str, hash: [u8; 32]) -> i64 {
        let sql = format!(
            "SELECT used_at_ms FROM embeddings WHERE model = '{model}' AND text_hash = {}",
            self.blob(&hash)
        );
        match self {
            Self::Sqlite(conn) => conn.query_row(&sql, [], |row| row.get(0)).expect("SQLite"),
            Self::Postgres(client) => client.query_one(&sql, &[]).expect("PostgreSQL").get(0),
        }
    }

    fn set_used_at(&mut self, model: &str, hash: [u8; 32], at: i64) {
        let sql = format!(
            "UPDATE embeddings SET used_at_ms = {at} WHERE model = '{model}' AND text_hash = {}",
            self.blob(&hash)
        );
        self.execute(&sql);
    }
}

#[test]
fn vectors_come_back_bit_for_bit_in_the_order_asked_with_misses() {
    support::each_store(|store| {
        let a = vec![0.25, -0.0, f32::MIN_POSITIVE, -1e-38, f32::MAX];
        let c = vec![1.0; 384];
        store
            .put_embeddings("minilm", &[(hash(1), a.clone()), (hash(3), c.clone())])
            .expect("put");
        let got = store
            .embeddings("minilm", &[hash(3), hash(2), hash(1), hash(3)])
            .expect("read");
        assert_eq!(got, vec![Some(c.clone()), None, Some(a.clone()), Some(c)]);
        let bits = |v: &[f32]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
        assert_eq!(
            bits(got[2].as_deref().expect("hit")),
            bits(&a),
            "-0.0 stays -0.0"
        );
        assert_eq!(
            store.embeddings("minilm", &[]).expect("none asked"),
            Vec::<Option<Vec<f32>>>::new()
        );
        store.put_embeddings("minilm", &[]).expect("none given");
    });
}

#[test]
fn a_put_replaces_the_vector_under_the_same_hash() {
    support::each_store(|store| {
        store
            .put_embeddings("m", &[(hash(1), vec![1.0, 2.0])])
            .expect("put");
        store
            .put_embeddings("m", &[(hash(1), vec![3.0])])
            .expect("put again");
        assert_eq!(
            store.embeddings("m", &[hash(1)]).expect("read"),
            vec![Some(vec![3.0])]
        );
        // A hash given twice in one put: the last vector stands.
        store
            .put_embeddings("m", &[(hash(2), vec![1.0]), (hash(2), vec![2.0])])
            .expect("put twice");
        assert_eq!(
            store.embeddings("m", &[hash(2)]).expect("read"),
            vec![Some(vec![2.0])]
        );
    });
}

#[test]
fn a_model_sees_only_its_own_vectors() {
    support::each_store(|store| {
        store
            .put_embeddings("old-model", &[(hash(1), vec![1.0])])
            .expect("put");
        assert_eq!(
            store.embeddings("new-model", &[hash(1)]).expect("read"),
            vec![None]
        );
        store
            .put_embeddings("new-model", &[(hash(1), vec![2.0])])
            .expect("put");
        assert_eq!(
            store.embeddings("old-model", &[hash(1)]).expect("read"),
            vec![Some(vec![1.0])]
        );
        assert_eq!(
            store.embeddings("new-model", &[hash(1)]).expect("read"),
            vec![Some(vec![2.0])]
        );
    });
}

#[test]
fn prune_drops_other_models_and_rows_unused_since_the_cutoff() {
    support::each_place(|place| {
        let store = place.open();
        store
            .put_embeddings("m", &[(hash(1), vec![1.0]), (hash(2), vec![2.0])])
            .expect("put");
        store
            .put_embeddings("other", &[(hash(1), vec![3.0])])
            .expect("put");
        Raw::to(place).set_used_at("m", hash(2), 1_000);
        assert_eq!(store.prune_embeddings("m", 5_000).expect("prune"), 2);
        assert_eq!(
            store.embeddings("m", &[hash(1), hash(2)]).expect("read"),
            vec![Some(vec![1.0]), None]
        );
        assert_eq!(
            store.embeddings("other", &[hash(1)]).expect("read"),
            vec![None]
        );
        assert_eq!(store.prune_embeddings("m", 5_000).expect("again"), 0);
        assert_eq!(
            store.prune_embeddings("m", i64::MAX).expect("all"),
            1,
            "what was used before the cutoff goes"
        );
    });
}

#[test]
fn a_damaged_row_reads_as_a_miss_is_never_marked_and_a_put_repairs_it() {
    support::each_place(|place| {
        let store = place.open();
        store
            .put_embeddings("m", &[(hash(9), vec![0.5])])
            .expect("a good row");
        let mut raw = Raw::to(place);
        let damaged = [
            (1, vec![0u8; 7]),
            (2, Vec::new()),
            (3, encode(&[1.0, f32::NAN])),
            (4, encode(&[f32::INFINITY])),
        ];
        for (n, vector) in &damaged {
            let sql = format!(
                "INSERT INTO embeddings (model, text_hash, vector, used_at_ms) VALUES ('m', {}, {}, 0)",
                raw.blob(&hash(*n)),
                raw.blob(vector)
            );
            raw.execute(&sql);
        }
        let asked: Vec<[u8; 32]> = (1..=4).chain([9]).map(hash).collect();
        let got = store.embeddings("m", &asked).expect("no error");
        assert_eq!(got, vec![None, None, None, None, Some(vec![0.5])]);
        for (n, _) in &damaged {
            assert_eq!(raw.used_at("m", hash(*n)), 0, "a damaged row is not marked");
        }
        store
            .put_embeddings("m", &[(hash(1), vec![7.0])])
            .expect("overwrite");
        assert_eq!(
            store.embeddings("m", &[hash(1)]).expect("read"),
            vec![Some(vec![7.0])]
        );
    });
}

#[test]
fn a_lookup_marks_stale_hits_used_and_leaves_recent_ones_unwritten() {
    support::each_place(|place| {
        let store = place.open();
        store
            .put_embeddings("m", &[(hash(1), vec![1.0]), (hash(2), vec![2.0])])
            .expect("put");
        let mut raw = Raw::to(place);
        let before = unix_ms();
        raw.set_used_at("m", hash(1), 0);
        let recent = before - 60_000;
        raw.set_used_at("m", hash(2), recent);
        store
            .embeddings("m", &[hash(1), hash(2), hash(3)])
            .expect("read");
        assert!(
            raw.used_at("m", hash(1)) >= before,
            "a stale hit is marked used"
        );
        assert_eq!(
            raw.used_at("m", hash(2)),
            recent,
            "a recent hit costs no write"
        );
        assert_eq!(store.prune_embeddings("m", recent).expect("prune"), 0);
    });
}

#[test]
fn thousands_of_hashes_are_one_call() {
    support::each_place(|place| {
        let store = place.open();
        let hashes: Vec<[u8; 32]> = (0..5_000_u32)
            .map(|n| {
                let mut h = [0; 32];
                h[..4].copy_from_slice(&n.to_le_bytes());
                h
            })
            .collect();
        let vectors: Vec<([u8; 32], Vec<f32>)> = hashes
            .iter()
            .step_by(2)
            .map(|h| (*h, vec![f32::from(h[0]); 4]))
            .collect();
        store.put_embeddings("m", &vectors).expect("put");
        Raw::to(place).execute("UPDATE embeddings SET used_at_ms = 0");
        let got = store.embeddings("m", &hashes).expect("read");
        assert_eq!(got.iter().filter(|v| v.is_some()).count(), 2_500);
        assert_eq!(got[4], Some(vec![4.0; 4]));
        assert_eq!(got[5], None);
        assert_eq!(
            store.prune_embeddings("m", 1).expect("prune"),
            0,
            "every hit was marked used"
        );
    });
}

#[test]
fn vectors_survive_reopening_the_store() {
    support::each_place(|place| {
        place
            .open()
            .put_embeddings("m", &[(hash(1), vec![0.5, -0.5])])
            .expect("put");
        let store = place.open();
        assert_eq!(
            store.embeddings("m", &[hash(1), hash(2)]).expect("read"),
            vec![Some(vec![0.5, -0.5]), None]
        );
    });
}
