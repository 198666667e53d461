//! A canary secret set as a connection never leaves the hub in clear: not in tool results (the
//! upstream echoes its environment), not in logs (the upstream prints it to stderr), not in the
//! database. Uses the real OS keychain (gnome-keyring in CI, through tests/support/with-keyring.sh).

use std::sync::{Arc, Mutex};
use std::time::Duration;

use capa_secrets::Secret;
use serde_json::json;

use crate::support::{TestHub, everything_js, keychain_or_skip};

#[derive(Clone, Default)]
struct Captured(Arc<Mutex<Vec<u8>>>);

impl std::io::Write for Captured {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().expect("lock").extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// Stores `secret` as the `personal` connection of the hub's first source, and restarts it.
async fn store_secret(t: &TestHub, secret: &str) {
    let source = t.hub.config().sources[0].clone();
    t.hub
        .connections()
        .set(
            &source,
            "personal",
            None,
            Secret::new(secret.to_owned()),
            false,
        )
        .expect("set connection");
    t.hub.connections().reload().await;
    t.hub.settled(Duration::from_secs(30)).await;
}

#[tokio::test(flavor = "current_thread")]
async fn a_canary_secret_never_appears_in_results_logs_or_the_database() {
    let Some(keychain) = keychain_or_skip("it") else {
        return;
    };
    // A quote and a backslash: `get-env` answers JSON, which escapes them.
    let canary = format!(r#"can"a\ry-{}-{}"#, std::process::id(), 0x5eed_u32);
    let escaped = serde_json::to_string(&canary).expect("json");
    let escaped = escaped.trim_matches('"').to_owned();
    // The child prints its secret to stderr (which the hub logs) and serves `get-env`. (`printf`,
    // not `echo`: dash's echo would turn the canary's `\r` into a carriage return.)
    let yaml = format!(
        "servers:\n  - id: ev\n    type: mcp\n    def:\n      command: sh\n      args: [-c, 'printf \"my token is %s\\n\" \"$CANARY\" >&2; exec node {} stdio']\n      env: {{ CANARY: \"${{secret:canary}}\" }}\n",
        everything_js()
    );
    let t = TestHub::start_with(&yaml, keychain.clone()).await;
    let captured = Captured::default();
    let writer = {
        let captured = captured.clone();
        capa_core::redacting_writer(&t.redactor, move || captured.clone())
    };
    let subscriber = tracing_subscriber::fmt()
        .with_writer(writer)
        .with_max_level(tracing::Level::DEBUG)
        .finish();
    let _guard = tracing::subscriber::set_default(subscriber);

    assert_eq!(
        t.source("ev").state,
        capa_core::SourceState::NeedsConnection
    );
    store_secret(&t, &canary).await;
    assert_eq!(
        t.source("ev").state,
        capa_core::SourceState::Ready,
        "{:?}",
        t.source("ev")
    );
    assert_eq!(t.source("ev").connections, vec!["personal*"]);

    let env = t.call("ev.get-env", json!({})).await.expect("get-env");
    let shown = env.to_string();
    assert!(
        shown.contains("[redacted]"),
        "the env should show the redacted canary: {shown}"
    );
    assert!(!shown.contains(&canary));
    assert!(!shown.contains(&escaped));

    // Guest code never holds the value: the result is redacted before it enters the sandbox,
    // so nothing the code does with it (here: hand back every character code) gets it out.
    let code = "const text = JSON.stringify(await ev.get_env({})); return [text.includes(\"[redacted]\"), Array.from(text).map((c) => c.charCodeAt(0))];";
    let envelope = crate::support::execute_json(&t, Some(code), None).await;
    assert_eq!(envelope["status"], "completed", "{envelope}");
    assert_eq!(envelope["result"][0], true, "{envelope}");
    let seen: String = envelope["result"][1]
        .as_array()
        .expect("codes")
        .iter()
        .filter_map(|c| char::from_u32(u32::try_from(c.as_u64()?).ok()?))
        .collect();
    assert!(seen.contains("[redacted]"), "{seen}");
    assert!(
        !seen.contains(&canary) && !seen.contains(&escaped),
        "{seen}"
    );

    // Code that holds the value itself is refused before it runs: the hub could not keep it,
    // so such a run could never go on after an approval.
    let holding = format!(
        "return await ev.get_env({{ note: {} }});",
        serde_json::to_string(&canary).expect("literal")
    );
    let refused = crate::support::execute_json(&t, Some(&holding), None).await;
    assert_eq!(refused["status"], "failed", "{refused}");
    assert_eq!(refused["error"]["code"], "secret_in_code", "{refused}");
    assert_eq!(refused["calls"], json!([]), "{refused}");
    assert!(!refused.to_string().contains(&escaped), "{refused}");

    // The upstream's stderr line reaches the log on its own time: wait for it, not for a while.
    let read_logs = || String::from_utf8_lossy(&captured.0.lock().expect("lock")).to_string();
    let logged = crate::support::eventually(Duration::from_secs(10), || {
        read_logs().contains("my token is [redacted]")
    })
    .await;
    let logs = read_logs();
    assert!(
        logged,
        "the stderr line should be logged, redacted:\n{logs}"
    );
    assert!(!logs.contains(&canary));

    t.hub.shutdown().await;
    for entry in std::fs::read_dir(t.dir.path().join("data")).expect("data dir") {
        let path = entry.expect("entry").path();
        let bytes = std::fs::read(&path).unwrap_or_default();
        for form in [&canary, &escaped] {
            let found = bytes.windows(form.len()).any(|w| w == form.as_bytes());
            assert!(!found, "canary ({form}) found in {}", path.display());
        }
    }
    t.hub
        .connections()
        .remove("ev", "personal")
        .expect("cleanup");
}

/// A hostile upstream (`tests/fixtures/leaky_server.py`) puts its secret in a tool's description,
/// title and parameter description, in progress messages, and in a prompt and a resource: none
/// of it reaches the catalog (so search, describe and listings), the caller's progress sink, nor
/// the relayed prompts and resources.
#[tokio::test]
async fn a_secret_in_tool_definitions_or_progress_is_redacted() {
    let Some(keychain) = keychain_or_skip("leaky") else {
        return;
    };
    let canary = format!("le\"ak\\y-{}", std::process::id());
    let script = crate::support::installed("tests/fixtures/leaky_server.py");
    let python = crate::support::installed("tests/.venv/bin/python");
    let yaml = format!(
        "servers:\n  - id: leaky\n    type: mcp\n    def:\n      command: \"{python}\"\n      args: [\"{script}\"]\n      env: {{ LEAK: \"${{secret:leak}}\" }}\n"
    );
    let t = TestHub::start_with(&yaml, keychain.clone()).await;
    store_secret(&t, &canary).await;
    let escaped = serde_json::to_string(&canary).expect("json");
    let escaped = escaped.trim_matches('"').to_owned();
    let leaks = |text: &str| text.contains(&canary) || text.contains(&escaped);

    let catalog = t.hub.catalog();
    let hello = catalog.get("leaky.hello").expect("hello listed");
    let definition = serde_json::to_string(&hello.definition).expect("json");
    assert!(!leaks(&definition), "{definition}");
    assert!(definition.contains("[redacted]"), "{definition}");
    let described = t
        .hub
        .describe(&["leaky.hello".to_owned()])
        .await
        .expect("describe");
    assert!(!leaks(&described), "{described}");
    let found = t
        .hub
        .search(&capa_core::SearchRequest {
            query: "hello token".to_owned(),
            ..capa_core::SearchRequest::default()
        })
        .await
        .expect("search");
    assert!(!leaks(&found), "{found}");

    let (sink, mut reports) = tokio::sync::mpsc::unbounded_channel();
    let context = capa_core::CallContext {
        progress: Some(sink),
        ..Default::default()
    };
    let permit = crate::support::permit(&t.hub, "leaky.work").await;
    t.hub
        .call(permit, Some(serde_json::Map::new()), &context)
        .await
        .expect("work");
    drop(context);
    let mut messages = Vec::new();
    while let Some(report) = reports.recv().await {
        messages.extend(report.message);
    }
    assert!(!messages.is_empty(), "the upstream reported progress");
    for message in &messages {
        assert!(!leaks(message), "{message}");
    }
    assert!(
        messages.iter().any(|m| m.contains("[redacted]")),
        "{messages:?}"
    );

    let prompts = serde_json::to_string(&t.hub.prompts_in(None).await).expect("json");
    assert!(prompts.contains("leaky.leak_prompt"), "{prompts}");
    assert!(
        !leaks(&prompts) && prompts.contains("[redacted]"),
        "{prompts}"
    );
    let got = t
        .hub
        .get_prompt_in(None, "leaky.leak_prompt", None, None)
        .await
        .expect("prompt");
    let got = serde_json::to_string(&got).expect("json");
    assert!(!leaks(&got) && got.contains("[redacted]"), "{got}");
    let resources = serde_json::to_string(&t.hub.resources_in(None).await).expect("json");
    assert!(resources.contains("leaky://token"), "{resources}");
    assert!(!leaks(&resources), "{resources}");
    let read = t
        .hub
        .read_resource_in(None, "leaky://token", None)
        .await
        .expect("read");
    let read = serde_json::to_string(&read).expect("json");
    assert!(!leaks(&read) && read.contains("[redacted]"), "{read}");
    t.hub.shutdown().await;
    t.hub
        .connections()
        .remove("leaky", "personal")
        .expect("cleanup");
}

/// A run that copies a tool result holding a stored secret into another call: the guest sees
/// `[redacted]`, and a call whose arguments hold it is refused (`secret_in_arguments`) instead
/// of writing the literal `[redacted]` into a note (issue 41: a copied file lost its content
/// silently, and the approval preview showed `[redacted]`).
#[tokio::test(flavor = "current_thread")]
async fn a_secret_hidden_from_the_guest_is_never_written_as_redacted() {
    let Some(keychain) = keychain_or_skip("it") else {
        return;
    };
    let canary = format!("canary-copy-{}-{}", std::process::id(), 0x0c0f_u32);
    let yaml = format!(
        "servers:\n  - id: ev\n    type: mcp\n    def:\n      command: node\n      args: [{}, stdio]\n      env: {{ CANARY: \"${{secret:canary}}\" }}\noptions: {{ toolExposure: code }}\n",
        everything_js()
    );
    let t = TestHub::start_with(&yaml, keychain.clone()).await;
    store_secret(&t, &canary).await;
    let code = r#"
const env = JSON.stringify(await ev.get_env({}));
try {
  await demo.write_note({ title: "copy", text: env });
  return "written";
} catch (e) {
  return [e.code, e.message, env.includes("[redacted]")];
}"#;
    let envelope = crate::support::execute_json(&t, Some(code), None).await;
    assert_eq!(envelope["status"], "completed", "{envelope}");
    assert_eq!(envelope["result"][0], "secret_in_arguments", "{envelope}");
    assert_eq!(
        envelope["result"][2], true,
        "the guest saw the marker: {envelope}"
    );
    let message = envelope["result"][1].as_str().unwrap_or_default();
    assert!(
        message.contains("demo.write_note") && message.contains("nothing was written"),
        "{message}"
    );
    let notes =
        crate::support::execute_json(&t, Some("return await demo.list_notes({});"), None).await;
    assert!(
        !notes["result"].to_string().contains("copy"),
        "a note was written: {notes}"
    );
    assert!(!envelope.to_string().contains(&canary), "{envelope}");
    t.hub
        .connections()
        .remove("ev", "personal")
        .expect("cleanup");
}
