//! A source turned off (`disabled: true`): listed as off, not started, no tools; turned on by a
//! file edit it waits for a person across a restart; a person's switch starts it.

use std::time::Duration;

use capa_core::{ChangedBy, SourceState, SourceSwitch};

use crate::support::{TestHub, eventually, everything_js};

fn file(disabled: bool) -> String {
    format!(
        "servers:\n  - id: everything\n    type: mcp\n{}    def:\n      command: node\n      args: [{:?}, stdio]\noptions:\n  demo: false\n",
        if disabled { "    disabled: true\n" } else { "" },
        everything_js()
    )
}

#[tokio::test]
async fn a_source_off_is_listed_and_turned_on_by_a_file_edit_it_waits_for_a_person() {
    let t = TestHub::start(&file(true)).await;
    let off = t.source("everything");
    assert_eq!(off.state, SourceState::Off);
    assert_eq!(off.last_error, None, "off is not an error");
    assert!(t.addresses().is_empty());
    t.hub.shutdown().await;

    // The file is edited (by hand, a script, an agent): the source is on in the file.
    let dir = t.dir;
    let t = TestHub::start_in(dir, &file(false), capa_secrets::Keychain::default()).await;
    let waiting = t.source("everything");
    assert_eq!(waiting.state, SourceState::NeedsConfirmation, "{waiting:?}");
    assert!(
        waiting
            .last_error
            .as_deref()
            .is_some_and(|e| e.contains("turned off")),
        "{waiting:?}"
    );
    assert!(t.addresses().is_empty());
    // Without a person the switch does not start it either.
    let held = t
        .hub
        .sources()
        .switch("everything", true, ChangedBy::Unconfirmed)
        .await
        .expect("switch");
    assert_eq!(held, SourceSwitch::Held);

    let on = t
        .hub
        .sources()
        .switch("everything", true, ChangedBy::Person)
        .await
        .expect("switch");
    assert_eq!(on, SourceSwitch::On);
    let hub = t.hub.clone();
    assert!(
        eventually(Duration::from_secs(30), || hub
            .catalog()
            .tools()
            .iter()
            .any(|tool| tool.address.namespace == "everything"))
        .await,
        "the source serves its tools again"
    );
    let off = t
        .hub
        .sources()
        .switch("everything", false, ChangedBy::Unconfirmed)
        .await
        .expect("switch");
    assert_eq!(off, SourceSwitch::Off, "anyone may turn it off");
    assert!(t.addresses().is_empty());
    t.hub.shutdown().await;
}
