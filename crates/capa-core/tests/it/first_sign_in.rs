//! Sign-in on first use (issue 43): code that calls a source nobody signed in to yet, so whose
//! tools are unknown, pauses its run `awaiting_connection` instead of failing on the source's
//! global; after the person signs in, `resume` replays the run against the real tools. A tool
//! the policy asks for is asked once the sign-in made it known. Against the real OAuth test
//! server and the OS keychain, as `oauth.rs`.

use capa_core::{ChangedBy, Choice, Decision};
use serde_json::Value;

use crate::oauth::{AuthServer, sign_in, yaml};
use crate::support::{TestHub, execute_json, keychain_or_skip};

fn run_id(envelope: &Value) -> String {
    envelope["runId"].as_str().expect("runId").to_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_that_calls_a_never_signed_in_source_waits_for_the_sign_in_then_goes_on() {
    let Some(keychain) = keychain_or_skip("first sign-in") else {
        return;
    };
    let server = AuthServer::start(&[]).await;
    let t = TestHub::start_with(&yaml(&server.mcp_url), keychain).await;
    assert_eq!(
        t.source("notes").state,
        capa_core::SourceState::NeedsConnection
    );

    // `search` says the source is there and what it waits for.
    let found = t
        .hub
        .search(&capa_core::SearchRequest {
            query: "add two numbers".to_owned(),
            ..Default::default()
        })
        .await
        .expect("search");
    assert!(
        found.contains("notes") && found.contains("sign-in"),
        "{found}"
    );
    // `describe` of it, or of a tool of it, says the same rather than "unknown".
    for target in ["notes", "notes.add"] {
        let described = t
            .hub
            .describe(&[target.to_owned()])
            .await
            .expect("describe");
        assert!(
            described.starts_with(
                "notes  (needs a sign-in; its tools are listed once the user signs in."
            ),
            "{target}: {described}"
        );
    }

    // Random numbers around the call: the replay after the sign-in gives the same ones.
    let code = "const before = Math.random();\n\
                const sum = await notes.add({ a: 2, b: 3 });\n\
                return { before, sum, after: Math.random() };";
    let paused = execute_json(&t, Some(code), None).await;
    assert_eq!(paused["status"], "awaiting_connection", "{paused:#}");
    let pending = paused["pending"].as_array().expect("pending");
    assert_eq!(pending.len(), 1, "{paused:#}");
    assert_eq!(pending[0]["kind"], "connection");
    assert_eq!(
        pending[0]["summary"],
        "Sign in to notes to continue (notes.add)"
    );
    assert!(
        !paused.to_string().contains("http"),
        "no address for the model: {paused:#}"
    );
    let id = run_id(&paused);

    // Resumed before anyone signed in: the same envelope, with what to ask of the person, and
    // nothing ran.
    let early = execute_json(&t, None, Some(&id)).await;
    assert_eq!(early, paused);
    assert!(t.store().journal(&id).expect("journal").is_empty());

    sign_in(&t).await;
    let done = execute_json(&t, None, Some(&id)).await;
    assert_eq!(done["status"], "completed", "{done:#}");
    assert!(done["result"]["sum"].to_string().contains('5'), "{done:#}");
    let inputs = t.store().approvals_of_run(&id).expect("inputs");
    assert_eq!(inputs.len(), 1);
    assert_eq!(
        inputs[0].status,
        capa_store::ApprovalStatus::Resolved,
        "the sign-in settled the input: {inputs:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tool_the_policy_asks_for_is_asked_once_the_sign_in_made_it_known() {
    let Some(keychain) = keychain_or_skip("first sign-in") else {
        return;
    };
    let server = AuthServer::start(&[]).await;
    let t = TestHub::start_with(&yaml(&server.mcp_url), keychain).await;
    t.hub
        .set_policy_rule("notes.echo", None, Decision::Ask, ChangedBy::Person)
        .expect("a rule for a tool nobody has seen yet");

    let paused = execute_json(&t, Some("return await notes.echo({ text: 'hi' });"), None).await;
    assert_eq!(paused["status"], "awaiting_connection", "{paused:#}");
    let id = run_id(&paused);

    sign_in(&t).await;
    let asks = execute_json(&t, None, Some(&id)).await;
    assert_eq!(asks["status"], "awaiting_approval", "{asks:#}");
    assert_eq!(asks["pending"][0]["address"], "notes.echo");
    t.hub
        .approvals()
        .decide_run(&id, Choice::Once, "test")
        .expect("approve");
    let done = execute_json(&t, None, Some(&id)).await;
    assert_eq!(done["status"], "completed", "{done:#}");
    assert!(done["result"].to_string().contains("hi"), "{done:#}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_guessed_tool_that_is_not_there_fails_the_run_and_asks_nobody_any_more() {
    let Some(keychain) = keychain_or_skip("first sign-in") else {
        return;
    };
    let server = AuthServer::start(&[]).await;
    let t = TestHub::start_with(&yaml(&server.mcp_url), keychain).await;
    let paused = execute_json(
        &t,
        Some("return await notes.create_note({ title: 'x' });"),
        None,
    )
    .await;
    assert_eq!(paused["status"], "awaiting_connection", "{paused:#}");
    let id = run_id(&paused);

    sign_in(&t).await;
    let failed = execute_json(&t, None, Some(&id)).await;
    assert_eq!(failed["status"], "failed", "{failed:#}");
    let message = failed["error"]["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("notes.create_note is not a tool"),
        "{failed:#}"
    );
    // Nobody is asked to connect for a run that ended: its input is over.
    let inputs = t.store().approvals_of_run(&id).expect("inputs");
    assert_eq!(inputs.len(), 1);
    assert_eq!(
        inputs[0].status,
        capa_store::ApprovalStatus::Expired,
        "{inputs:?}"
    );
    assert!(t.store().pending_approvals(0).expect("pending").is_empty());
}
