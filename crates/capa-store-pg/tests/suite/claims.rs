//! Form claims: which hub process asks a client's form about an input.

use capa_store::{InputClaim, RunOwner};

use crate::support;

const OWNER: RunOwner = RunOwner {
    pid: 9,
    started_ms: 1,
};

fn claim(until_ms: Option<i64>) -> InputClaim {
    InputClaim {
        approval_id: "apr_1".into(),
        owner: OWNER,
        channel: "{}".into(),
        until_ms,
    }
}

#[test]
fn a_claim_is_seen_until_its_deadline_and_dropped_only_by_its_owner() {
    support::each_store(|store| {
        let claim = claim(Some(100));
        store.put_input_claim(&claim).expect("put");
        assert_eq!(store.input_claim("apr_1", 99).expect("read"), Some(claim));
        assert_eq!(
            store.input_claim("apr_1", 100).expect("read"),
            None,
            "past its deadline"
        );
        let other = RunOwner {
            pid: 9,
            started_ms: 2,
        };
        store.drop_input_claim("apr_1", other).expect("drop");
        assert!(
            store.input_claim("apr_1", 50).expect("read").is_some(),
            "not theirs to drop"
        );
        store.drop_input_claim("apr_1", OWNER).expect("drop");
        assert!(store.input_claim("apr_1", 50).expect("read").is_none());
    });
}

#[test]
fn the_last_claim_put_replaces_the_one_before() {
    support::each_store(|store| {
        store.put_input_claim(&claim(Some(100))).expect("put");
        let released = InputClaim {
            owner: RunOwner {
                pid: u32::MAX,
                started_ms: 1_700_000_000_000,
            },
            channel: r#"{"kind":"clientForm","client":"Claude Code"}"#.into(),
            ..claim(None)
        };
        store.put_input_claim(&released).expect("put again");
        // Without a deadline it stands at any time.
        assert_eq!(
            store.input_claim("apr_1", i64::MAX).expect("read"),
            Some(released)
        );
        assert_eq!(store.input_claim("apr_2", 0).expect("read"), None);
    });
}
