//! The user's allow / ask / deny rules through a running hub: read from `policy.yaml` at start,
//! changed at run time, and seen by the next search, describe and call.

use capa_core::{ChangedBy, Decision, SearchRequest};
use serde_json::json;

use crate::support::TestHub;

fn search(query: &str) -> SearchRequest {
    SearchRequest {
        query: query.to_owned(),
        namespace: Some("demo".to_owned()),
        limit: Some(25),
    }
}

/// The search line of `address`, if it is shown.
fn line_of<'a>(text: &'a str, address: &str) -> Option<&'a str> {
    text.lines()
        .find(|l| l.trim_start().starts_with(&format!("{address}(")))
}

#[tokio::test]
async fn rules_set_at_run_time_mark_and_hide_tools_in_the_next_search() {
    let t = TestHub::start("").await;
    let text = t.hub.search(&search("note")).await.expect("search");
    let delete = line_of(&text, "demo.delete_note").expect("listed");
    assert!(delete.ends_with("[asks]"), "destructive hint: {text}");
    let write = line_of(&text, "demo.write_note").expect("listed");
    assert!(!write.ends_with("[asks]"), "{text}");

    t.hub
        .set_policy_rule("demo.write_note", None, Decision::Ask, ChangedBy::Person)
        .expect("set ask");
    t.hub
        .set_policy_rule("demo.delete_*", None, Decision::Deny, ChangedBy::Person)
        .expect("set deny");
    let text = t.hub.search(&search("note")).await.expect("search");
    assert!(
        line_of(&text, "demo.write_note").is_some_and(|l| l.ends_with("[asks]")),
        "{text}"
    );
    assert!(line_of(&text, "demo.delete_note").is_none(), "{text}");
    assert!(
        text.contains("1 matching tool is hidden by your policy."),
        "{text}"
    );
    let denied = t
        .call("demo.delete_note", json!({"title": "x"}))
        .await
        .expect_err("denied");
    assert_eq!(denied.code(), "denied");
    let described = t
        .hub
        .describe(&["demo.delete_note".to_owned()])
        .await
        .expect_err("hidden");
    assert_eq!(described.code(), "unknown_target");

    let file = std::fs::read_to_string(t.hub.policy_file()).expect("written");
    assert!(
        file.contains("  - match: demo.delete_*\n    decision: deny\n"),
        "{file}"
    );
    assert!(
        t.hub
            .reset_policy_rule("demo.delete_*", None, ChangedBy::Person)
            .expect("reset")
    );
    let text = t.hub.search(&search("note")).await.expect("search");
    assert!(line_of(&text, "demo.delete_note").is_some(), "{text}");
}

#[tokio::test]
async fn the_verdict_says_why() {
    let t = TestHub::start("").await;
    let catalog = t.hub.catalog();
    let tool = |a: &str| catalog.get(a).cloned().expect("tool");
    assert_eq!(
        t.hub.listing_verdict(&tool("demo.add")).reason,
        "allowed by default"
    );
    assert_eq!(
        t.hub.listing_verdict(&tool("demo.delete_note")).reason,
        "the server marks it destructive (an untrusted hint; set a policy to change it)"
    );
    t.hub
        .set_policy_rule("demo", Some("work"), Decision::Deny, ChangedBy::Person)
        .expect("set");
    let authorization = t.hub.authorize_tool(&tool("demo.add"), Some("work"));
    let capa_core::Authorization::Denied { reason, .. } = authorization else {
        panic!("a rule for the connection in use denies it: {authorization:?}");
    };
    assert_eq!(
        reason,
        "your policy rule \"demo\" for connection \"work\" says deny"
    );
    assert_eq!(
        t.hub.listing_verdict(&tool("demo.add")).decision,
        Decision::Allow,
        "connection rules apply to calls only"
    );
}

#[tokio::test]
async fn a_hand_edit_is_read_on_reload_and_a_broken_one_keeps_the_old_policy() {
    let t = TestHub::start("").await;
    let file = t.hub.policy_file().to_path_buf();
    std::fs::create_dir_all(file.parent().expect("dir")).expect("mkdir");
    std::fs::write(&file, "rules:\n  - match: '*'\n    decision: deny\n").expect("write");
    t.hub.reload_policy().expect("reload");
    assert_eq!(t.hub.policy().rules().len(), 1);
    std::fs::write(&file, "rules:\n  - match: demo\n    decision: sometimes\n").expect("write");
    let e = t.hub.reload_policy().expect_err("broken");
    assert!(
        e.to_string()
            .contains("policy.yaml:3:15: unknown decision `sometimes`"),
        "{e}"
    );
    assert_eq!(
        t.hub.policy().rules()[0].pattern,
        "*",
        "the old policy stays"
    );
}

#[tokio::test]
async fn a_broken_policy_file_stops_the_hub_from_starting() {
    let dir = tempfile::tempdir().expect("tempdir");
    let paths = capa_core::HubPaths::in_dir(dir.path());
    std::fs::create_dir_all(&paths.config_dir).expect("mkdir");
    std::fs::write(paths.policy_file(), "rules:\n  - match: demo\n").expect("write");
    let e = capa_core::Hub::start(capa_core::HubOptions {
        config: capa_config::HubConfig::default(),
        paths,
        redactor: capa_core::Redactor::new(),
        keychain: capa_secrets::Keychain::default(),
        store: None,
    })
    .await
    .expect_err("refused");
    let message = e.to_string();
    assert!(message.starts_with("invalid policy file:\n"), "{message}");
    assert!(
        message.contains("policy.yaml:2:5: missing field `decision`"),
        "{message}"
    );
}
