//! Pinned tool definitions, and the definition a pending input was asked under.

use capa_store::{ApprovalRecord, ApprovalStatus, InputKind, PinStatus, PinnedTool};

use crate::support;

fn pin(source: &str, tool: &str, digest: &str, status: PinStatus) -> PinnedTool {
    PinnedTool {
        source: source.into(),
        tool: tool.into(),
        digest: digest.into(),
        definition: format!("{{\"name\":\"{tool}\"}}"),
        status,
    }
}

/// Every pin, in one order whatever order the backend answers in.
fn sorted(mut pins: Vec<PinnedTool>) -> Vec<PinnedTool> {
    pins.sort_by(|a, b| (&a.source, &a.tool).cmp(&(&b.source, &b.tool)));
    pins
}

#[test]
fn a_pin_survives_reopening_and_is_replaced_on_accept() {
    support::each_place(|place| {
        let pinned = pin("evil", "wipe", "d1", PinStatus::Approved);
        place.open().pin_tool(&pinned, 1).expect("pin");
        let store = place.open();
        assert_eq!(store.pinned_tools().expect("pins"), vec![pinned.clone()]);
        let blocked = PinnedTool {
            status: PinStatus::Blocked,
            digest: "d2".into(),
            ..pinned
        };
        store.pin_tool(&blocked, 2).expect("block");
        assert_eq!(store.pinned_tools().expect("pins"), vec![blocked]);
    });
}

#[test]
fn a_listing_is_pinned_at_once_and_the_last_pin_of_a_tool_stands() {
    support::each_store(|store| {
        store.pin_tools(&[], 1).expect("nothing to pin");
        assert!(store.pinned_tools().expect("pins").is_empty());
        store
            .pin_tool(&pin("a", "kept", "d0", PinStatus::Approved), 1)
            .expect("pin");
        let mut listing: Vec<PinnedTool> = (0..2_000)
            .map(|n| pin("big", &format!("t{n}"), &format!("d{n}"), PinStatus::New))
            .collect();
        listing.push(pin("big", "t7", "again", PinStatus::Blocked));
        store.pin_tools(&listing, 2).expect("pin the listing");
        let pins = sorted(store.pinned_tools().expect("pins"));
        assert_eq!(pins.len(), 2_001);
        assert_eq!(pins[0], pin("a", "kept", "d0", PinStatus::Approved));
        let t7 = pins.iter().find(|p| p.tool == "t7").expect("t7");
        assert_eq!(*t7, pin("big", "t7", "again", PinStatus::Blocked));
        let t8 = pins.iter().find(|p| p.tool == "t8").expect("t8");
        assert_eq!(*t8, pin("big", "t8", "d8", PinStatus::New));
    });
}

#[test]
fn an_input_keeps_the_definition_it_was_asked_under() {
    support::each_store(|store| {
        store
            .insert_approval(&ApprovalRecord {
                id: "apr_0".into(),
                run_id: "run_1".into(),
                call_index: 0,
                kind: InputKind::Approval,
                address: "demo.add_note".into(),
                source: "demo".into(),
                connection: None,
                preview: "{}".into(),
                reason: "a new tool".into(),
                args_digest: "d".into(),
                status: ApprovalStatus::Pending,
                scope: None,
                decided_via: None,
                created_at_ms: 0,
                expires_at_ms: i64::MAX,
                decided_at_ms: None,
                client: None,
            })
            .expect("input");
        assert_eq!(store.input_definition("apr_0").expect("read"), None);
        store.set_input_definition("apr_0", "def1").expect("record");
        assert_eq!(
            store.input_definition("apr_0").expect("read").as_deref(),
            Some("def1")
        );
        // An input that is not there records nothing, and reads as nothing recorded.
        store
            .set_input_definition("apr_nope", "def2")
            .expect("record nothing");
        assert_eq!(store.input_definition("apr_nope").expect("read"), None);
    });
}
