//! Pending inputs of runs, their decisions, per-run grants and used request states.

use capa_store::{ApprovalRecord, ApprovalStatus, InputKind, RunRecord, RunState, Store};

use crate::support;

/// Records the run `run_1`, asked by `client`, that the inputs below belong to.
fn add_run(store: &Store, client: Option<&str>) {
    store
        .insert_run(&RunRecord {
            id: "run_1".into(),
            code: "return 1".into(),
            seed: 1,
            clock_start_ms: 0,
            client: client.map(str::to_owned),
            status: RunState::AwaitingApproval,
            envelope: None,
            attempts: 1,
            created_at_ms: 0,
            updated_at_ms: 0,
            resumable: true,
            owner: None,
            lease: None,
        })
        .expect("run");
}

fn pending(index: u32, expires_at_ms: i64) -> ApprovalRecord {
    ApprovalRecord {
        id: format!("apr_{index}"),
        run_id: "run_1".into(),
        call_index: index,
        kind: InputKind::Approval,
        address: "demo.add_note".into(),
        source: "demo".into(),
        connection: None,
        preview: "{}".into(),
        reason: "your policy".into(),
        args_digest: "d".into(),
        status: ApprovalStatus::Pending,
        scope: None,
        decided_via: None,
        created_at_ms: 0,
        expires_at_ms,
        decided_at_ms: None,
        client: None,
    }
}

fn connection_input(index: u32) -> ApprovalRecord {
    ApprovalRecord {
        kind: InputKind::Connection,
        connection: Some("work".into()),
        ..pending(index, i64::MAX)
    }
}

#[test]
fn an_input_keeps_the_client_that_asks_else_names_its_runs() {
    support::each_store(|store| {
        add_run(store, Some("older-client 1"));
        let mut asked = pending(0, i64::MAX);
        asked.client = Some("claude-code 2.1.3".into());
        let stored = store.insert_approval(&asked).expect("insert");
        assert_eq!(stored.client.as_deref(), Some("claude-code 2.1.3"));
        // An input recorded without its client (as before schema 9): its run's.
        let stored = store
            .insert_approval(&pending(1, i64::MAX))
            .expect("insert");
        assert_eq!(stored.client.as_deref(), Some("older-client 1"));
        let clients: Vec<Option<String>> = store
            .pending_approvals(0)
            .expect("pending")
            .into_iter()
            .map(|a| a.client)
            .collect();
        assert_eq!(
            clients,
            [
                Some("claude-code 2.1.3".into()),
                Some("older-client 1".into())
            ]
        );
    });
}

#[test]
fn an_input_reads_back_as_recorded() {
    support::each_store(|store| {
        add_run(store, None);
        let record = ApprovalRecord {
            id: "apr_full".into(),
            call_index: 4_000_000_000,
            connection: Some("work".into()),
            preview: r#"{"title":"ünïcode"}"#.into(),
            status: ApprovalStatus::Approved,
            scope: Some("run".into()),
            decided_via: Some("page".into()),
            created_at_ms: 1_700_000_000_000,
            expires_at_ms: i64::MAX,
            decided_at_ms: Some(1_700_000_000_500),
            client: Some("cursor 1.0".into()),
            ..pending(0, 0)
        };
        assert_eq!(store.insert_approval(&record).expect("insert"), record);
        assert_eq!(
            store.approval("apr_full").expect("read"),
            Some(record.clone())
        );
        assert_eq!(
            store
                .approval_for_call("run_1", 4_000_000_000)
                .expect("read"),
            Some(record)
        );
        assert_eq!(store.approval("apr_none").expect("read"), None);
        assert_eq!(store.approval_for_call("run_1", 1).expect("read"), None);
    });
}

#[test]
fn a_runs_inputs_are_in_call_order() {
    support::each_store(|store| {
        add_run(store, None);
        for index in [2, 0, 1] {
            store
                .insert_approval(&pending(index, i64::MAX))
                .expect("insert");
        }
        let indexes: Vec<u32> = store
            .approvals_of_run("run_1")
            .expect("read")
            .iter()
            .map(|a| a.call_index)
            .collect();
        assert_eq!(indexes, [0, 1, 2]);
        assert!(store.approvals_of_run("run_2").expect("read").is_empty());
    });
}

#[test]
fn a_decision_is_taken_once() {
    support::each_store(|store| {
        add_run(store, None);
        store.insert_approval(&pending(0, 1_000)).expect("insert");
        assert!(
            store
                .decide_approval("apr_0", ApprovalStatus::Approved, Some("once"), "cli", 10)
                .expect("decide")
        );
        assert!(
            !store
                .decide_approval("apr_0", ApprovalStatus::Denied, None, "page", 11)
                .expect("decide again"),
            "the second decision must be refused"
        );
        let stored = store.approval("apr_0").expect("read").expect("present");
        assert_eq!(stored.status, ApprovalStatus::Approved);
        assert_eq!(stored.scope.as_deref(), Some("once"));
        assert_eq!(stored.decided_via.as_deref(), Some("cli"));
        assert_eq!(stored.decided_at_ms, Some(10));
        assert!(
            !store
                .decide_approval("apr_none", ApprovalStatus::Approved, None, "cli", 12)
                .expect("decide unknown")
        );
    });
}

#[test]
fn a_decision_raced_by_two_hubs_counts_once() {
    support::each_place(|place| {
        let hubs = [place.open(), place.open()];
        add_run(&hubs[0], None);
        hubs[0]
            .insert_approval(&pending(0, i64::MAX))
            .expect("insert");
        let wins = std::thread::scope(|scope| {
            let deciders: Vec<_> = (0..8)
                .map(|n| {
                    let hub = &hubs[n % 2];
                    let status = if n % 2 == 0 {
                        ApprovalStatus::Approved
                    } else {
                        ApprovalStatus::Denied
                    };
                    scope.spawn(move || {
                        hub.decide_approval("apr_0", status, None, "cli", 10)
                            .expect("decide")
                    })
                })
                .collect();
            deciders
                .into_iter()
                .map(|d| d.join().expect("decider"))
                .filter(|won| *won)
                .count()
        });
        assert_eq!(wins, 1, "exactly one decision counts");
        assert_ne!(
            hubs[1].approval("apr_0").expect("read").map(|a| a.status),
            Some(ApprovalStatus::Pending)
        );
    });
}

#[test]
fn the_same_call_keeps_its_first_record_and_expiry_is_final() {
    support::each_store(|store| {
        add_run(store, None);
        store.insert_approval(&pending(0, 100)).expect("insert");
        let mut again = pending(0, 999);
        again.id = "apr_other".into();
        assert_eq!(store.insert_approval(&again).expect("again").id, "apr_0");
        assert_eq!(store.approval("apr_other").expect("read"), None);
        assert!(store.pending_approvals(50).expect("pending").len() == 1);
        assert!(store.pending_approvals(100).expect("pending").is_empty());
        assert!(
            !store
                .decide_approval("apr_0", ApprovalStatus::Approved, Some("once"), "cli", 101)
                .expect("decide")
        );
        let stored = store.approval("apr_0").expect("read").expect("kept");
        assert_eq!(stored.status, ApprovalStatus::Expired);
        assert_eq!(stored.decided_at_ms, Some(100));
    });
}

#[test]
fn expiry_marks_only_overdue_pending_inputs() {
    support::each_store(|store| {
        add_run(store, None);
        store.insert_approval(&pending(0, 100)).expect("insert");
        store.insert_approval(&pending(1, 200)).expect("insert");
        store.insert_approval(&pending(2, 100)).expect("insert");
        assert!(
            store
                .decide_approval("apr_2", ApprovalStatus::Denied, None, "cli", 50)
                .expect("decide")
        );
        assert_eq!(store.expire_approvals(99).expect("expire"), 0);
        assert_eq!(store.expire_approvals(150).expect("expire"), 1);
        assert_eq!(store.expire_approvals(150).expect("expire again"), 0);
        let statuses: Vec<ApprovalStatus> = store
            .approvals_of_run("run_1")
            .expect("read")
            .iter()
            .map(|a| a.status)
            .collect();
        assert_eq!(
            statuses,
            [
                ApprovalStatus::Expired,
                ApprovalStatus::Pending,
                ApprovalStatus::Denied
            ]
        );
        // A decision in time still counts after the expiry of the others.
        assert!(
            store
                .decide_approval("apr_1", ApprovalStatus::Approved, Some("once"), "app", 199)
                .expect("decide")
        );
    });
}

#[test]
fn an_approval_is_used_once_and_only_when_approved() {
    support::each_store(|store| {
        add_run(store, None);
        store
            .insert_approval(&pending(0, i64::MAX))
            .expect("insert");
        assert!(!store.use_approval("apr_0").expect("use pending"));
        assert!(
            store
                .decide_approval("apr_0", ApprovalStatus::Approved, Some("once"), "cli", 1)
                .expect("decide")
        );
        assert!(store.use_approval("apr_0").expect("use"));
        assert!(!store.use_approval("apr_0").expect("use again"));
        assert_eq!(
            store.approval("apr_0").expect("read").map(|a| a.status),
            Some(ApprovalStatus::Used)
        );
    });
}

#[test]
fn only_connection_inputs_are_forgotten_or_ended_with_their_run() {
    support::each_store(|store| {
        add_run(store, None);
        store
            .insert_approval(&pending(0, i64::MAX))
            .expect("insert");
        store.insert_approval(&connection_input(1)).expect("insert");
        store.insert_approval(&connection_input(2)).expect("insert");
        store.forget_connection_input("apr_0").expect("forget");
        assert!(
            store.approval("apr_0").expect("read").is_some(),
            "an approval is never forgotten"
        );
        store.forget_connection_input("apr_1").expect("forget");
        assert_eq!(store.approval("apr_1").expect("read"), None);
        // Its call may now record the approval it needs.
        let mut approval = pending(1, i64::MAX);
        approval.id = "apr_1b".into();
        assert_eq!(
            store.insert_approval(&approval).expect("insert").id,
            "apr_1b"
        );

        assert_eq!(
            store.end_connection_inputs_of_run("run_1", 7).expect("end"),
            1
        );
        let ended = store.approval("apr_2").expect("read").expect("kept");
        assert_eq!(ended.status, ApprovalStatus::Expired);
        assert_eq!(ended.decided_via.as_deref(), Some("run_ended"));
        assert_eq!(ended.decided_at_ms, Some(7));
        assert_eq!(
            store.approval("apr_0").expect("read").map(|a| a.status),
            Some(ApprovalStatus::Pending)
        );
        assert_eq!(
            store
                .end_connection_inputs_of_run("run_1", 8)
                .expect("end again"),
            0
        );
    });
}

#[test]
fn states_are_consumed_once_and_grants_are_per_run() {
    support::each_store(|store| {
        add_run(store, None);
        assert!(store.consume_state("abc", 1).expect("first"));
        assert!(!store.consume_state("abc", 2).expect("second"));
        store
            .grant_for_run("run_1", "demo.add_note")
            .expect("grant");
        store
            .grant_for_run("run_1", "demo.add_note")
            .expect("grant again");
        assert!(
            store
                .is_granted_for_run("run_1", "demo.add_note")
                .expect("granted")
        );
        assert!(
            !store
                .is_granted_for_run("run_1", "demo.other")
                .expect("not granted")
        );
        assert!(
            !store
                .is_granted_for_run("run_2", "demo.add_note")
                .expect("not this run's")
        );
    });
}

#[test]
fn a_state_raced_by_two_hubs_is_consumed_once() {
    support::each_place(|place| {
        let hubs = [place.open(), place.open()];
        let firsts = std::thread::scope(|scope| {
            let consumers: Vec<_> = (0..8)
                .map(|n| {
                    let hub = &hubs[n % 2];
                    scope.spawn(move || hub.consume_state("raced", 1).expect("consume"))
                })
                .collect();
            consumers
                .into_iter()
                .map(|c| c.join().expect("consumer"))
                .filter(|first| *first)
                .count()
        });
        assert_eq!(firsts, 1, "exactly one caller is first");
    });
}

#[test]
fn decisions_and_used_states_outlive_the_hub() {
    support::each_place(|place| {
        {
            let store = place.open();
            add_run(&store, None);
            store
                .insert_approval(&pending(0, i64::MAX))
                .expect("insert");
            assert!(
                store
                    .decide_approval("apr_0", ApprovalStatus::Approved, Some("run"), "page", 5)
                    .expect("decide")
            );
            store
                .grant_for_run("run_1", "demo.add_note")
                .expect("grant");
            assert!(store.consume_state("abc", 1).expect("first"));
        }
        let store = place.open();
        let stored = store.approval("apr_0").expect("read").expect("kept");
        assert_eq!(stored.status, ApprovalStatus::Approved);
        assert_eq!(stored.scope.as_deref(), Some("run"));
        assert!(
            store
                .is_granted_for_run("run_1", "demo.add_note")
                .expect("granted")
        );
        assert!(!store.consume_state("abc", 2).expect("used before"));
    });
}
