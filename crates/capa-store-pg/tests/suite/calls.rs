//! The history of tool calls: records survive reopening, newest first, deferred ones too.

use capa_store::{CallRecord, CallStatus};

use crate::support;

fn call(address: &str, status: CallStatus) -> CallRecord {
    CallRecord {
        address: address.into(),
        connection: Some("personal".into()),
        client: Some("test".into()),
        started_at_ms: 1,
        duration_ms: 2,
        status,
        error_code: Some("tool_error".into()),
        error_message: Some("boom \"quoted\" \\ back".into()),
        request_bytes: 10,
        response_bytes: 20,
    }
}

#[test]
fn calls_survive_reopening_the_store() {
    support::each_place(|place| {
        let store = place.open();
        let first = call("demo.echo", CallStatus::ToolError);
        let id = store.record_call(&first).expect("record");
        store.defer_call_record(call("demo.add", CallStatus::Ok));
        drop(store);
        let store = place.open();
        let calls = store.recent_calls(10).expect("list");
        assert_eq!(
            calls
                .iter()
                .map(|c| c.call.address.as_str())
                .collect::<Vec<_>>(),
            vec!["demo.add", "demo.echo"],
            "newest first, the deferred one written"
        );
        assert_eq!(calls[1].id, id);
        assert_eq!(calls[1].call, first);
        assert_eq!(calls[0].call.status, CallStatus::Ok);
        assert_eq!(store.recent_calls(1).expect("list").len(), 1);
        assert_eq!(
            store.schema_version().expect("version"),
            capa_store::SCHEMA_VERSION
        );
    });
}
