//! A host call that waits for a person suspends the run; one that finds the run cannot go on
//! aborts it. Neither is something the guest can catch.

use std::time::Duration;

use capa_sandbox::{RunStatus, ToolFailure};
use serde_json::json;

use crate::support::*;

/// `slack.post_message` waits for a person; everything else answers after `ms`.
fn asks_for_slack(ms: u64) -> std::sync::Arc<FakeHost> {
    FakeHost::new(move |c| {
        if c.address == "slack.post_message" {
            (
                Duration::ZERO,
                Err(ToolFailure::new("suspend", "needs approval")),
            )
        } else {
            (Duration::from_millis(ms), Ok(json!({"index": c.index})))
        }
    })
}

#[tokio::test]
async fn a_suspended_call_stops_the_run_where_the_guest_cannot_catch_it() {
    let host = asks_for_slack(0);
    let out = run_with(
        input(
            r#"
            try { await slack.post_message({ text: "hi" }); } catch (e) { return "caught"; }
            return "went on";
            "#,
        ),
        &host,
    )
    .await;
    assert_eq!(out.status, RunStatus::Suspended, "{out:#?}");
    assert_eq!(out.result, None);
    assert_eq!(out.error, None);
    assert_eq!(out.calls.len(), 1);
    assert!(!out.calls[0].ok);
}

#[tokio::test]
async fn calls_in_flight_finish_and_queued_calls_never_start() {
    let host = asks_for_slack(50);
    let mut run_input = input(
        r"
        const a = github.get_repo({});
        const b = slack.post_message({});
        const c = github.search_issues({});
        return await Promise.all([a, b, c]);
        ",
    );
    // One slot: a runs, b and c queue; b starts once a is done and suspends; c never starts.
    run_input.limits.max_concurrent = 1;
    let out = run_with(run_input, &host).await;
    assert_eq!(out.status, RunStatus::Suspended, "{out:#?}");
    let started: Vec<String> = host
        .calls
        .lock()
        .expect("calls")
        .iter()
        .map(|c| c.address.clone())
        .collect();
    assert_eq!(started, ["github.get_repo", "slack.post_message"]);
    assert!(out.calls[0].ok, "the allowed call finished: {out:#?}");
}

#[tokio::test]
async fn an_allowed_call_in_flight_finishes_before_the_run_stops() {
    let host = asks_for_slack(80);
    let out = run_with(
        input("return await Promise.all([github.get_repo({}), slack.post_message({})]);"),
        &host,
    )
    .await;
    assert_eq!(out.status, RunStatus::Suspended, "{out:#?}");
    assert_eq!(out.calls.len(), 2);
    assert!(out.calls[0].ok, "{out:#?}");
    assert!(out.notices.is_empty(), "nothing was cancelled: {out:#?}");
}

#[tokio::test]
async fn an_abort_fails_the_run_with_the_hosts_error() {
    let host = FakeHost::new(|_| {
        (
            Duration::ZERO,
            Err(ToolFailure::new(
                "abort",
                "call 0 was github.get_repo before",
            )),
        )
    });
    let out = run_with(
        input("try { await github.create_issue({}); } catch (e) { return 'caught'; }"),
        &host,
    )
    .await;
    assert_eq!(error_code(&out), "replay_diverged");
    assert!(
        out.error
            .as_ref()
            .is_some_and(|e| e.message.contains("before"))
    );
}

/// A source whose tools are not known yet (it waits for its first sign-in): any member is a call
/// of `<source>.<member>` the host can pause, names generic code reads are not calls, the global
/// stays read-only, and a tool of another source is still refused.
#[tokio::test]
async fn an_unlisted_source_calls_any_member_and_only_its_own() {
    let host = FakeHost::echo();
    let mut i = input(
        r#"
        const a = await notes.create_note({ title: "x" });
        const b = await notes["list-notes"]();
        const probes = [
          notes.create_note === notes.create_note,
          typeof notes.then,
          JSON.stringify(notes),
          "anything" in notes,
          await notes === notes,
          `${notes}`,
          typeof notes.hasOwnProperty,
        ];
        let writes;
        try { notes.x = 1; writes = "wrote"; } catch (e) { writes = e.message; }
        let other;
        try { await notez.create_note({}); } catch (e) { other = e.name + ": " + e.message; }
        return { a, b, probes, writes, other };
        "#,
    );
    let mut namespaces = i.namespaces.to_vec();
    namespaces.push(capa_sandbox::Namespace {
        global: "notes".into(),
        tools: Vec::new(),
        unlisted_source: Some("notes".into()),
    });
    i.namespaces = namespaces.into();
    let out = run_with(i, &host).await;
    let v = value(&out);
    assert_eq!(v["a"]["address"], json!("notes.create_note"), "{v:#}");
    assert_eq!(v["a"]["arguments"], json!({ "title": "x" }));
    assert_eq!(v["b"]["address"], json!("notes.list-notes"));
    assert_eq!(
        v["probes"],
        json!([
            true,
            "undefined",
            "{}",
            true,
            true,
            "[object Object]",
            "function"
        ])
    );
    assert_eq!(v["writes"], json!("notes is read-only"));
    assert!(
        v["other"]
            .as_str()
            .is_some_and(|m| m.starts_with("ReferenceError")),
        "{v:#}"
    );
}
