//! Results kept past a run and read back by handle: the bounds by age and bytes, and pieces of
//! a body that are the same bytes on every backend.

use capa_store::{HandleBounds, HandleOf, HandleRecord, JsonType, Store};

use crate::support;

fn record(id: &str, body: &str, at: i64) -> HandleRecord {
    HandleRecord {
        id: id.to_owned(),
        run_id: "run_1".to_owned(),
        client: Some("claude-code".to_owned()),
        of: HandleOf::Result,
        value_type: JsonType::String,
        body: body.to_owned(),
        created_at_ms: at,
    }
}

const ROOMY: HandleBounds = HandleBounds {
    keep_ms: 1_000,
    max_total_bytes: 1_000,
};

const ROOMY_BYTES: HandleBounds = HandleBounds {
    keep_ms: 1_000,
    max_total_bytes: 1_000_000,
};

/// The ids of run `run_1`'s kept handles, in the order the store lists them.
fn listed(store: &Store) -> Vec<String> {
    store
        .handles_of_run("run_1", 0)
        .expect("list")
        .into_iter()
        .map(|h| h.id)
        .collect()
}

#[test]
fn a_kept_handle_reads_back_whole() {
    support::each_store(|store| {
        let body = "\"quotes \\\" and é\"";
        store
            .put_handle(&record("h_a", body, 10), ROOMY)
            .expect("put");
        let got = store.handle("h_a", 0).expect("read").expect("kept");
        assert_eq!(got, record("h_a", body, 10));
        assert_eq!(store.handle("h_nope", 0).expect("read"), None);
        let listed = store.handles_of_run("run_1", 0).expect("list");
        assert_eq!(listed.len(), 1);
        assert_eq!(listed[0].bytes, body.len() as u64);
        let logs = HandleRecord {
            client: None,
            of: HandleOf::Logs,
            ..record("h_logs", "a\nb", 11)
        };
        store.put_handle(&logs, ROOMY).expect("put logs");
        assert_eq!(store.handle("h_logs", 0).expect("read"), Some(logs));
    });
}

#[test]
fn the_oldest_go_first_past_the_byte_bound() {
    support::each_store(|store| {
        let bounds = HandleBounds {
            keep_ms: 1_000_000,
            max_total_bytes: 25,
        };
        let mut dropped = Vec::new();
        for (i, id) in (0u8..).zip(["h_1", "h_2", "h_3"]) {
            dropped.push(
                store
                    .put_handle(&record(id, &"x".repeat(10), i64::from(i)), bounds)
                    .expect("put"),
            );
        }
        assert_eq!(dropped, [Some(0), Some(0), Some(1)]);
        assert_eq!(
            store.handle("h_1", 0).expect("read"),
            None,
            "oldest dropped"
        );
        assert!(store.handle("h_2", 0).expect("read").is_some());
        assert!(store.handle("h_3", 0).expect("read").is_some());
        // One body alone over the bound is not kept at all, and takes nothing else with it.
        let kept = store
            .put_handle(&record("h_big", &"x".repeat(26), 9), bounds)
            .expect("put");
        assert_eq!(kept, None);
        assert!(store.handle("h_big", 0).expect("read").is_none());
        assert!(store.handle("h_3", 0).expect("read").is_some());
    });
}

#[test]
fn of_handles_made_at_the_same_time_the_first_kept_goes_first() {
    support::each_store(|store| {
        let bounds = HandleBounds {
            keep_ms: 1_000_000,
            max_total_bytes: 25,
        };
        for id in ["h_b", "h_c", "h_a"] {
            store
                .put_handle(&record(id, &"x".repeat(10), 5), bounds)
                .expect("put");
        }
        assert_eq!(listed(store), ["h_c", "h_a"]);
    });
}

#[test]
fn a_run_s_handles_are_listed_by_time_then_as_kept() {
    support::each_store(|store| {
        for (id, at) in [("h_b", 5), ("h_a", 5), ("h_c", 3)] {
            store.put_handle(&record(id, "1", at), ROOMY).expect("put");
        }
        let other = HandleRecord {
            run_id: "run_2".into(),
            ..record("h_other", "1", 4)
        };
        store.put_handle(&other, ROOMY).expect("put");
        assert_eq!(listed(store), ["h_c", "h_b", "h_a"]);
    });
}

#[test]
fn handles_past_the_keep_time_are_dropped() {
    support::each_store(|store| {
        store
            .put_handle(&record("h_old", "1", 0), ROOMY)
            .expect("put");
        let dropped = store
            .put_handle(&record("h_new", "2", 1_001), ROOMY)
            .expect("put");
        assert_eq!(dropped, Some(1));
        assert_eq!(store.handle("h_old", 0).expect("read"), None);
        assert!(store.handle("h_new", 0).expect("read").is_some());
    });
}

#[test]
fn pieces_are_read_without_the_whole_body() {
    support::each_store(|store| {
        let body = "é".repeat(1000);
        store
            .put_handle(&record("h_p", &body, 10), ROOMY_BYTES)
            .expect("put");
        let info = store.handle_info("h_p", 0).expect("info").expect("kept");
        assert_eq!(info.summary.bytes, 2000);
        assert_eq!(info.client.as_deref(), Some("claude-code"));
        assert_eq!(info.run_id, "run_1");
        let piece = store
            .handle_bytes("h_p", 3, 4)
            .expect("read")
            .expect("kept");
        assert_eq!(piece, body.as_bytes()[3..7]);
        // Past the end: what there is, then nothing; an unknown handle is `None`.
        assert_eq!(
            store
                .handle_bytes("h_p", 1998, 10)
                .expect("read")
                .map(|p| p.len()),
            Some(2)
        );
        assert_eq!(
            store.handle_bytes("h_p", 5000, 10).expect("read"),
            Some(Vec::new())
        );
        assert_eq!(store.handle_bytes("h_nope", 0, 10).expect("read"), None);
    });
}

#[test]
fn every_range_reads_the_body_s_own_bytes() {
    support::each_store(|store| {
        // One, two, three and four bytes a character, so that ranges cut each kind.
        let body = "aé€😀".repeat(3);
        store
            .put_handle(&record("h_r", &body, 10), ROOMY_BYTES)
            .expect("put");
        let bytes = body.as_bytes();
        let size = bytes.len();
        let expected = |start: u64, len: usize| {
            let start = usize::try_from(start).unwrap_or(usize::MAX).min(size);
            bytes[start..start + len.min(size - start)].to_vec()
        };
        let mut ranges: Vec<(u64, usize)> = Vec::new();
        for start in 0..=size as u64 + 1 {
            for len in [0, 1, 2, 3, 5, size - 1, size, size + 7] {
                ranges.push((start, len));
            }
        }
        ranges.extend([
            (0, usize::MAX),
            (u64::MAX, 1),
            (u64::MAX, usize::MAX),
            (u64::from(u32::MAX), 4),
            (2_147_483_646, 4),
            (2_147_483_647, 4),
        ]);
        for (start, len) in ranges {
            let piece = store
                .handle_bytes("h_r", start, len)
                .expect("read")
                .expect("kept");
            assert_eq!(piece, expected(start, len), "{len} bytes from {start}");
        }
    });
}

#[test]
fn a_handle_past_its_time_reads_as_gone_before_any_insert() {
    support::each_store(|store| {
        store
            .put_handle(&record("h_t", "1", 100), ROOMY)
            .expect("put");
        assert!(store.handle("h_t", 100).expect("read").is_some());
        assert!(store.handle("h_t", 101).expect("read").is_none());
        assert!(store.handle_info("h_t", 101).expect("info").is_none());
        assert!(store.handles_of_run("run_1", 101).expect("list").is_empty());
    });
}

#[test]
fn handles_kept_at_once_stay_within_the_byte_bound() {
    support::each_store(|store| {
        let bounds = HandleBounds {
            keep_ms: 1_000_000,
            max_total_bytes: 25,
        };
        std::thread::scope(|scope| {
            for n in 0..8 {
                scope.spawn(move || {
                    store
                        .put_handle(&record(&format!("h_{n}"), &"x".repeat(10), 1), bounds)
                        .expect("put");
                });
            }
        });
        let kept = store.handles_of_run("run_1", 0).expect("list");
        assert_eq!(
            kept.iter().map(|h| h.bytes).sum::<u64>(),
            20,
            "two handles of ten bytes: {kept:?}"
        );
    });
}

/// A tool's string result may hold U+0000 (PostgreSQL's `text` cannot: bodies are bytes there);
/// read whole and in pieces, it is the same.
#[test]
fn a_body_with_nul_characters_reads_back_whole_and_in_pieces() {
    support::each_store(|store| {
        let body = "\u{0}head\u{0}é\u{0}";
        store
            .put_handle(&record("h_nul", body, 10), ROOMY)
            .expect("put");
        assert_eq!(
            store.handle("h_nul", 0).expect("read"),
            Some(record("h_nul", body, 10))
        );
        assert_eq!(
            store.handle_bytes("h_nul", 1, 5).expect("read"),
            Some(body.as_bytes()[1..6].to_vec())
        );
    });
}
