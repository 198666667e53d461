//! Leases (issue 44): a run whose attempt a hub on another machine holds is left to it while
//! its lease lasts, whatever this machine's process table says; once the lease ran out it is
//! marked `interrupted` and a resume here replays it.

use capa_core::{Choice, ExecuteRequest};
use capa_domain::clock::now_ms;
use capa_store::{Lease, RunOwner, RunState};

use crate::support::{TestHub, execute_json};

const DELETES: &str = r#"await demo.write_note({ title: "d", text: "1" });
await demo.delete_note({ title: "d" });
return "deleted";"#;

/// A machine that is not this one.
const ELSEWHERE: u64 = 0xfeed_f00d;

#[tokio::test]
async fn a_run_held_elsewhere_is_resumed_here_once_its_lease_runs_out() {
    let hub = TestHub::start("options: { toolExposure: code }\n").await;
    let paused = execute_json(&hub, Some(DELETES), None).await;
    assert_eq!(paused["status"], "awaiting_approval", "{paused:#}");
    let id = paused["runId"].as_str().expect("runId").to_owned();
    hub.hub
        .approvals()
        .decide_run(&id, Choice::Once, "test")
        .expect("approve");

    // A replica on another machine took the attempt. Its pid is one that lives here, which
    // says nothing about a process on another machine.
    let replica = RunOwner {
        pid: std::process::id(),
        started_ms: 1,
    };
    let now = now_ms();
    let store = hub.store();
    let attempts = store.run(&id).expect("read").expect("run").attempts;
    let live = Lease {
        machine: ELSEWHERE,
        until_ms: now + 60_000,
    };
    assert!(
        store
            .start_attempt(&id, now, replica, live, attempts)
            .expect("start")
    );
    let refused = hub
        .hub
        .execute(ExecuteRequest {
            code: None,
            resume: Some(id.clone()),
            client: None,
        })
        .await
        .expect_err("the run is another hub's while its lease lasts");
    assert!(
        refused.to_string().contains("another Capabilities hub"),
        "{refused}"
    );
    assert!(hub.hub.runs().renew_leases(now_ms()).is_empty());

    // The replica died: its lease ran out without a renewal.
    let ran_out = Lease {
        machine: ELSEWHERE,
        until_ms: now - 1,
    };
    assert!(
        store
            .start_attempt(&id, now, replica, ran_out, attempts + 1)
            .expect("start")
    );
    assert_eq!(hub.hub.runs().renew_leases(now_ms()), vec![id.clone()]);
    assert_eq!(
        store.run(&id).expect("read").expect("run").status,
        RunState::Interrupted
    );
    let done = execute_json(&hub, None, Some(&id)).await;
    assert_eq!(done["status"], "completed", "{done:#}");
    assert_eq!(done["result"], "deleted", "{done:#}");
    let run = store.run(&id).expect("read").expect("run");
    let lease = run.lease.expect("the attempt here holds a lease");
    assert_ne!(lease.machine, ELSEWHERE);
    assert!(lease.until_ms > now, "{lease:?}");
}
