//! Runs and their journals: a round trip of every field, and the compare-and-set rules that
//! let two hubs share runs.

use capa_store::{JournalEntry, Lease, RunFilter, RunInProgress, RunOwner, RunRecord, RunState};

use crate::support;

#[test]
fn runs_and_their_journal_round_trip() {
    support::each_store(|store| {
        let run = RunRecord {
            id: "run_1".into(),
            code: "return 1".into(),
            seed: u64::MAX - 7,
            clock_start_ms: 1_700_000_000_000,
            client: Some("test".into()),
            status: RunState::Running,
            envelope: None,
            attempts: 1,
            created_at_ms: 1,
            updated_at_ms: 1,
            resumable: true,
            owner: Some(RunOwner {
                pid: 7,
                started_ms: 5,
            }),
            // A machine hash past i64::MAX: stored in a signed column, read back the same.
            lease: Some(Lease {
                machine: u64::MAX - 3,
                until_ms: 30_005,
            }),
        };
        store.insert_run(&run).expect("insert");
        assert_eq!(
            store.runs_in_progress().expect("in progress"),
            vec![RunInProgress {
                id: "run_1".to_owned(),
                attempts: 1,
                owner: run.owner,
                lease: run.lease,
            }]
        );
        assert_eq!(store.run("run_1").expect("read").expect("present"), run);
        for index in [1, 0] {
            let entry = JournalEntry {
                index,
                address: format!("demo.t{index}"),
                connection: None,
                arguments: "{}".into(),
                ok: true,
                outcome: "42".into(),
                ms: 3,
                args_digest: Some("d".into()),
                in_flight: index == 1,
            };
            store.journal_call("run_1", &entry).expect("journal");
        }
        store
            .finish_run(
                "run_1",
                RunState::Completed,
                "{\"status\":\"completed\"}",
                2,
            )
            .expect("finish");
        let stored = store.run("run_1").expect("read").expect("present");
        assert_eq!(stored.seed, u64::MAX - 7);
        assert_eq!(stored.status, RunState::Completed);
        let journal = store.journal("run_1").expect("journal");
        assert_eq!(
            journal
                .iter()
                .map(|e| (e.index, e.in_flight))
                .collect::<Vec<_>>(),
            vec![(0, false), (1, true)]
        );
        assert!(
            !store.interrupt_run("run_1", 1, 3).expect("interrupt"),
            "completed runs stay"
        );
        assert_eq!(store.recent_runs(10).expect("recent").len(), 1);
        let found = |status: Option<RunState>, source: Option<&str>| {
            store
                .find_runs(&RunFilter {
                    status,
                    source: source.map(str::to_owned),
                    since_ms: Some(1),
                    limit: 10,
                })
                .expect("find")
        };
        let all = found(None, Some("demo"));
        assert_eq!(all.len(), 1);
        assert_eq!(all[0].addresses, vec!["demo.t0", "demo.t1"]);
        assert!(found(Some(RunState::Failed), None).is_empty());
        assert!(found(None, Some("dem")).is_empty());
        assert!(store.run("nope").expect("read").is_none());
    });
}

#[test]
fn a_paused_run_is_settled_only_while_nobody_resumed_it() {
    support::each_store(|store| {
        let paused = |id: &str, status| RunRecord {
            id: id.into(),
            code: "return 1".into(),
            seed: 1,
            clock_start_ms: 0,
            client: None,
            status,
            envelope: None,
            attempts: 1,
            created_at_ms: 1,
            updated_at_ms: 1,
            resumable: true,
            owner: None,
            lease: None,
        };
        store
            .insert_run(&paused("run_a", RunState::AwaitingApproval))
            .expect("insert");
        store
            .insert_run(&paused("run_b", RunState::Completed))
            .expect("insert");
        let ids: Vec<String> = store
            .paused_runs()
            .expect("paused")
            .into_iter()
            .map(|r| r.id)
            .collect();
        assert_eq!(ids, vec!["run_a"]);
        assert!(
            !store
                .settle_paused_run("run_b", 1, RunState::Denied, "{}", 5)
                .expect("settle"),
            "an ended run stays as it ended"
        );
        assert!(
            !store
                .settle_paused_run("run_a", 0, RunState::Denied, "{}", 5)
                .expect("settle"),
            "a resume began meanwhile (another attempt)"
        );
        assert!(
            store
                .settle_paused_run("run_a", 1, RunState::Denied, "{\"x\":1}", 5)
                .expect("settle")
        );
        let run = store.run("run_a").expect("read").expect("present");
        assert_eq!(run.status, RunState::Denied);
        assert_eq!(run.envelope.as_deref(), Some("{\"x\":1}"));
        assert!(store.paused_runs().expect("paused").is_empty());
    });
}

fn running(id: &str, owner: RunOwner, lease: Lease) -> RunRecord {
    RunRecord {
        id: id.into(),
        code: "return 1".into(),
        seed: 1,
        clock_start_ms: 0,
        client: None,
        status: RunState::Running,
        envelope: None,
        attempts: 1,
        created_at_ms: 1,
        updated_at_ms: 1,
        resumable: true,
        owner: Some(owner),
        lease: Some(lease),
    }
}

#[test]
fn a_hub_renews_only_the_leases_of_the_runs_it_runs() {
    support::each_store(|store| {
        let (ours, theirs) = (
            RunOwner {
                pid: 11,
                started_ms: 100,
            },
            RunOwner {
                pid: 11,
                started_ms: 200,
            },
        );
        let lease = |machine, until_ms| Lease { machine, until_ms };
        store
            .insert_run(&running("run_a", ours, lease(1, 10)))
            .expect("a");
        store
            .insert_run(&running("run_b", theirs, lease(1, 10)))
            .expect("b");
        // The same process on another machine (another pid namespace) is another holder.
        store
            .insert_run(&running("run_c", ours, lease(2, 10)))
            .expect("c");
        store
            .insert_run(&running("run_d", ours, lease(1, 10)))
            .expect("d");
        store
            .finish_run("run_d", RunState::Completed, "{}", 5)
            .expect("ended");
        assert_eq!(store.renew_leases(ours, 1, 99).expect("renew"), 1);
        let until = |id: &str| {
            store
                .run(id)
                .expect("read")
                .and_then(|r| r.lease)
                .map(|l| l.until_ms)
        };
        assert_eq!(until("run_a"), Some(99));
        assert_eq!(until("run_b"), Some(10));
        assert_eq!(until("run_c"), Some(10));
        assert_eq!(until("run_d"), Some(10), "an ended run's lease stays");
    });
}

#[test]
fn an_attempt_takes_the_run_with_its_owner_and_lease_once() {
    support::each_store(|store| {
        let first = RunOwner {
            pid: 1,
            started_ms: 1,
        };
        let dead = Lease {
            machine: 1,
            until_ms: 5,
        };
        store
            .insert_run(&running("run_x", first, dead))
            .expect("insert");
        assert!(
            !store.interrupt_run("run_x", 0, 6).expect("interrupt"),
            "a read of another attempt interrupts nothing"
        );
        assert!(store.interrupt_run("run_x", 1, 6).expect("interrupt"));
        let next = RunOwner {
            pid: 2,
            started_ms: 2,
        };
        let held = Lease {
            machine: 2,
            until_ms: 30_006,
        };
        assert!(
            store
                .start_attempt("run_x", 6, next, held, 1)
                .expect("start")
        );
        assert!(
            !store
                .start_attempt("run_x", 6, first, dead, 1)
                .expect("start"),
            "a second hub resuming the same attempt loses"
        );
        let run = store.run("run_x").expect("read").expect("present");
        assert_eq!((run.status, run.attempts), (RunState::Running, 2));
        assert_eq!((run.owner, run.lease), (Some(next), Some(held)));
    });
}

/// Model code may hold U+0000 (PostgreSQL's `text` cannot: the code is bytes there).
#[test]
fn a_run_s_code_with_a_nul_character_round_trips() {
    support::each_store(|store| {
        let run = RunRecord {
            code: "return \"a\u{0}b\" + '\u{0}' // \u{0}".into(),
            ..running(
                "run_nul",
                RunOwner {
                    pid: 1,
                    started_ms: 1,
                },
                Lease {
                    machine: 1,
                    until_ms: 1,
                },
            )
        };
        store.insert_run(&run).expect("insert");
        assert_eq!(store.run("run_nul").expect("read").expect("present"), run);
    });
}
