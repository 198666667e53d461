//! Tasks the hub gave its clients, read back by task id until they expire.

use capa_store::{ClientTask, RunOwner};

use crate::support;

fn task(id: &str, expires_at_ms: i64) -> ClientTask {
    ClientTask {
        id: id.to_owned(),
        surface: "hub".to_owned(),
        detail: r#"{"taskId":"t","status":"working"}"#.to_owned(),
        ended: false,
        owner: RunOwner {
            pid: 42,
            started_ms: 1,
        },
        expires_at_ms,
    }
}

#[test]
fn a_task_reads_back_for_its_surface_until_it_expires_and_its_end_replaces_it() {
    support::each_store(|store| {
        let later = 60_000;
        store.put_client_task(&task("t", later), 10).expect("put");
        assert_eq!(
            store.client_task("t", "hub", 0).expect("read"),
            Some(task("t", later))
        );
        assert_eq!(
            store.client_task("t", "profile:work", 0).expect("read"),
            None
        );
        assert_eq!(store.client_task("t", "hub", later).expect("read"), None);
        let ended = ClientTask {
            ended: true,
            detail: r#"{"taskId":"t","status":"completed"}"#.to_owned(),
            ..task("t", later)
        };
        store.put_client_task(&ended, 10).expect("put again");
        assert_eq!(
            store.client_task("t", "hub", 0).expect("read"),
            Some(ended.clone())
        );
        // A start kept after the end does not undo it.
        store
            .put_client_task(&task("t", later), 10)
            .expect("put late");
        assert_eq!(store.client_task("t", "hub", 0).expect("read"), Some(ended));
        // An expired one goes when the next is put.
        store.put_client_task(&task("old", 20), 10).expect("put");
        store.put_client_task(&task("new", later), 30).expect("put");
        assert_eq!(store.client_task("old", "hub", 0).expect("read"), None);
    });
}

#[test]
fn an_end_kept_before_its_start_stays() {
    support::each_store(|store| {
        let ended = ClientTask {
            ended: true,
            ..task("quick", 60_000)
        };
        store.put_client_task(&ended, 0).expect("put end");
        store
            .put_client_task(&task("quick", 90_000), 0)
            .expect("put start");
        assert_eq!(
            store.client_task("quick", "hub", 0).expect("read"),
            Some(ended)
        );
    });
}

#[test]
fn a_task_outlives_the_hub_that_kept_it() {
    support::each_place(|place| {
        let kept = ClientTask {
            owner: RunOwner {
                pid: u32::MAX,
                started_ms: 1_700_000_000_000,
            },
            ..task("t", 60_000)
        };
        place.open().put_client_task(&kept, 10).expect("put");
        assert_eq!(
            place.open().client_task("t", "hub", 20).expect("read"),
            Some(kept)
        );
    });
}
