//! OAuth sources against a real authorization server and MCP server (tests/support/
//! oauth-server.mjs: the TypeScript SDK's auth router and bearer middleware with refresh-token
//! rotation and short lifetimes), with the real OS keychain: sign in, call, refresh on expiry,
//! survive a restart, pause when the sign-in is revoked, go on after signing in again. The
//! browser step follows the server's redirects (`--auto-approve`); the Chromium-driven consent
//! page is `tests/node/ui-oauth.test.mjs`.

use std::time::Duration;

use capa_secrets::{Keychain, Secret, SecretKey};
use serde_json::Value;
use tokio::io::AsyncBufReadExt;

use crate::support::{
    TestHub, eventually, execute_json, installed, keychain_or_skip, repo_root, text,
};

pub(crate) struct AuthServer {
    child: tokio::process::Child,
    pub(crate) mcp_url: String,
    admin_url: String,
}

impl AuthServer {
    pub(crate) async fn start(args: &[&str]) -> Self {
        let mut child = tokio::process::Command::new(installed("node_modules/.bin/node"))
            .arg(repo_root().join("tests/support/oauth-server.mjs"))
            .args(["--port", "0", "--auto-approve"])
            .args(args)
            .stdout(std::process::Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .expect("the OAuth test server starts");
        let stdout = child.stdout.take().expect("stdout");
        let mut lines = tokio::io::BufReader::new(stdout).lines();
        let line = tokio::time::timeout(Duration::from_secs(30), lines.next_line())
            .await
            .expect("the server says where it listens")
            .expect("reads")
            .expect("a line");
        let ready: Value = serde_json::from_str(&line).expect("JSON");
        Self {
            child,
            mcp_url: ready["mcpUrl"].as_str().expect("mcpUrl").to_owned(),
            admin_url: ready["adminUrl"].as_str().expect("adminUrl").to_owned(),
        }
    }

    async fn admin(&self, verb: &str) -> Value {
        let client = reqwest::Client::new();
        let url = format!("{}/{verb}", self.admin_url);
        let response = if verb == "stats" {
            client.get(url).send().await
        } else {
            client.post(url).send().await
        };
        response
            .expect("admin answers")
            .json()
            .await
            .unwrap_or(Value::Null)
    }
}

impl Drop for AuthServer {
    fn drop(&mut self) {
        let _ = self.child.start_kill();
    }
}

pub(crate) fn yaml(url: &str) -> String {
    format!(
        "options:\n  demo: false\n  toolExposure: code\nservers:\n  - id: notes\n    type: mcp\n    def:\n      url: {url}\n      oauth: true\n"
    )
}

/// Starts a sign-in and plays the person's browser: the server approves at once and redirects
/// to the hub's loopback callback.
pub(crate) async fn sign_in(t: &TestHub) {
    let started = t
        .hub
        .begin_sign_in("notes", None)
        .await
        .expect("the sign-in starts");
    assert_eq!(started.connection, "personal");
    assert!(
        started.url.contains("code_challenge_method=S256"),
        "{}",
        started.url
    );
    assert!(started.url.contains("resource="), "{}", started.url);
    let page = reqwest::get(&started.url)
        .await
        .expect("the browser follows the redirects")
        .text()
        .await
        .expect("a page");
    assert!(page.contains("Signed in"), "{page}");
    let hub = t.hub.clone();
    let ready = eventually(Duration::from_secs(30), || {
        hub.sources()
            .list()
            .iter()
            .any(|s| s.id == "notes" && s.state == capa_core::SourceState::Ready && s.tools > 0)
    })
    .await;
    assert!(ready, "{:#?}", t.source("notes"));
}

/// The stored token set's access and refresh tokens.
fn stored_tokens(keychain: &Keychain) -> (String, String) {
    let value = keychain
        .get_large(&SecretKey::new(
            "notes",
            "personal",
            capa_oauth::OAUTH_FIELD,
        ))
        .expect("the keychain reads")
        .expect("a token set is stored");
    let set: Value = serde_json::from_str(value.expose()).expect("JSON");
    let tokens = &set["credentials"]["token_response"];
    (
        tokens["access_token"].as_str().expect("access").to_owned(),
        tokens["refresh_token"]
            .as_str()
            .expect("refresh")
            .to_owned(),
    )
}

fn assert_nowhere(t: &TestHub, secrets: &[&str]) {
    let database = std::fs::read(t.hub.paths().database()).expect("database");
    let logs: String = t
        .hub
        .sources()
        .log_after("notes", 0)
        .map(|page| {
            page.lines
                .iter()
                .map(|l| l.text.clone())
                .collect::<Vec<_>>()
                .join("\n")
        })
        .unwrap_or_default();
    let sources = serde_json::to_string(&t.hub.sources().list()).expect("json");
    for secret in secrets {
        assert!(
            !database
                .windows(secret.len())
                .any(|w| w == secret.as_bytes()),
            "a token is in the database"
        );
        assert!(!logs.contains(secret), "a token is in the source's log");
        assert!(
            !sources.contains(secret),
            "a token is in the source listing"
        );
        assert_eq!(
            t.hub.redact(secret),
            "[redacted]",
            "the redactor knows every token"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_person_signs_in_and_the_sign_in_refreshes_survives_a_restart_and_pauses_when_revoked() {
    let Some(keychain) = keychain_or_skip("oauth") else {
        return;
    };
    let server = AuthServer::start(&["--token-ttl", "3"]).await;
    let t = TestHub::start_with(&yaml(&server.mcp_url), keychain.clone()).await;

    // Nobody signed in: the source waits for one and says how.
    let status = t.source("notes");
    assert_eq!(status.state, capa_core::SourceState::NeedsConnection);
    assert!(
        status
            .last_error
            .as_deref()
            .is_some_and(|e| e.starts_with("Sign in to `notes` to continue")),
        "{status:#?}"
    );
    assert_eq!(status.oauth.expect("an OAuth source").connections, vec![]);

    sign_in(&t).await;
    let who = execute_json(&t, Some("return await notes.whoami({})"), None).await;
    assert_eq!(who["status"], "completed", "{who:#}");
    let (access, refresh) = stored_tokens(&keychain);
    let listed = t.source("notes").oauth.expect("oauth").connections;
    assert_eq!(listed.len(), 1);
    assert!(listed[0].signed_in && listed[0].default);

    // The access token lives 3 s: after it expired the next call refreshes, and the rotated
    // refresh token is in the keychain at once.
    tokio::time::sleep(Duration::from_secs(4)).await;
    let again = execute_json(&t, Some("return await notes.add({ a: 2, b: 3 })"), None).await;
    assert_eq!(again["status"], "completed", "{again:#}");
    assert!(again["result"].to_string().contains('5'), "{again:#}");
    assert!(server.admin("stats").await["refreshGrants"].as_u64() >= Some(1));
    let (access_2, refresh_2) = stored_tokens(&keychain);
    assert_ne!(access, access_2);
    assert_ne!(refresh, refresh_2, "the rotated refresh token was saved");
    assert_nowhere(&t, &[&access, &refresh, &access_2, &refresh_2]);

    // A new hub on the same data and keychain is signed in without asking.
    let TestHub { hub, dir, .. } = t;
    hub.shutdown().await;
    drop(hub);
    let t = TestHub::start_in(dir, &yaml(&server.mcp_url), keychain.clone()).await;
    let hub = t.hub.clone();
    assert!(
        eventually(Duration::from_secs(30), || {
            hub.sources()
                .list()
                .iter()
                .any(|s| s.id == "notes" && s.state == capa_core::SourceState::Ready)
        })
        .await,
        "{:#?}",
        t.source("notes")
    );
    let after = execute_json(&t, Some("return await notes.echo({ text: 'hi' })"), None).await;
    assert_eq!(after["status"], "completed", "{after:#}");

    // Revoked at the server (tokens and refresh tokens): the refresh is refused, the run waits
    // for a sign-in, and the model is told what to ask of the person, with no link.
    server.admin("revoke").await;
    let paused = execute_json(&t, Some("return await notes.whoami({})"), None).await;
    assert_eq!(paused["status"], "awaiting_connection", "{paused:#}");
    let item = &paused["pending"][0];
    assert_eq!(
        item["summary"],
        "Sign in to notes to continue (notes.whoami)"
    );
    let message = item["message"].as_str().expect("message");
    assert!(
        message.contains("capa connections login notes"),
        "{message}"
    );
    assert!(
        !message.contains("http"),
        "no address for the model: {message}"
    );
    let run = paused["runId"].as_str().expect("runId").to_owned();
    let listed = t.source("notes").oauth.expect("oauth").connections;
    assert!(!listed[0].signed_in, "{listed:?}");

    // Signing in again lets the same run go on.
    sign_in(&t).await;
    let resumed = execute_json(&t, None, Some(&run)).await;
    assert_eq!(resumed["status"], "completed", "{resumed:#}");
    assert!(
        text(&resumed["result"]).contains("client")
            || resumed["result"].to_string().contains("client"),
        "{resumed:#}"
    );
}

#[tokio::test(flavor = "current_thread")]
async fn a_token_set_over_the_entry_limit_is_stored_in_parts_and_read_back_whole() {
    let Some(keychain) = keychain_or_skip("parts") else {
        return;
    };
    let key = SecretKey::new("big", "personal", capa_oauth::OAUTH_FIELD);
    // 20 KB, with quotes, backslashes and multi-byte characters, as a JWT-heavy token set might be.
    let large = format!("{{\"t\":\"{}\"}}", "ab\\\"cé€".repeat(2500));
    keychain
        .set_large(&key, &Secret::new(large.clone()))
        .expect("stored");
    let parts = (1..100)
        .take_while(|i| {
            keychain
                .get(&SecretKey::new("big", "personal", &format!("oauth#1.{i}")))
                .expect("reads")
                .is_some()
        })
        .count()
        + 1;
    assert!(parts > 10, "{parts} parts");
    for i in 0..parts {
        let field = if i == 0 {
            "oauth".to_owned()
        } else {
            format!("oauth#1.{i}")
        };
        let part = keychain
            .get(&SecretKey::new("big", "personal", &field))
            .expect("reads")
            .expect("a part");
        // Windows Credential Manager keeps 2,560 bytes, and `keyring` stores UTF-16 there.
        assert!(part.expose().encode_utf16().count() * 2 <= 2560, "part {i}");
    }
    let read = keychain.get_large(&key).expect("reads").expect("stored");
    assert_eq!(read.expose(), large);

    // A shorter value leaves no parts of the longer one behind; deleting removes them all.
    keychain
        .set_large(&key, &Secret::new("short".to_owned()))
        .expect("stored");
    assert_eq!(
        keychain
            .get_large(&key)
            .expect("reads")
            .expect("stored")
            .expose(),
        "short"
    );
    assert!(
        keychain
            .get(&SecretKey::new("big", "personal", "oauth#1.1"))
            .expect("reads")
            .is_none()
    );
    keychain
        .set_large(&key, &Secret::new(large.clone()))
        .expect("stored");
    // A new large value replaces the parts of the last one (a new generation of part names).
    let larger = format!("{large}{}", "x".repeat(5000));
    keychain
        .set_large(&key, &Secret::new(larger.clone()))
        .expect("stored");
    assert_eq!(
        keychain
            .get_large(&key)
            .expect("reads")
            .expect("stored")
            .expose(),
        larger
    );
    assert!(
        keychain
            .get(&SecretKey::new("big", "personal", "oauth#1.1"))
            .expect("reads")
            .is_none(),
        "the last generation's parts are gone"
    );
    // A part that goes missing makes the value read as damaged, never as another value.
    keychain
        .delete(&SecretKey::new("big", "personal", "oauth#2.3"))
        .expect("deleted");
    assert!(matches!(
        keychain.get_large(&key),
        Err(capa_secrets::SecretError::Damaged { .. })
    ));
    keychain.delete_large(&key).expect("deleted");
    assert!(keychain.get_large(&key).expect("reads").is_none());
    assert!(
        keychain
            .get(&SecretKey::new("big", "personal", "oauth#1.3"))
            .expect("reads")
            .is_none()
    );
}

/// Plays a browser on another device: it follows the authorization server's redirects up to the
/// hub's loopback callback, which it cannot reach, and gives the address it ended on.
async fn address_on_another_device(authorization_url: &str) -> String {
    let stop_at_loopback = reqwest::redirect::Policy::custom(|attempt| {
        if attempt.url().host_str() == Some("127.0.0.1") && attempt.url().path() == "/callback" {
            attempt.stop()
        } else {
            attempt.follow()
        }
    });
    let client = reqwest::Client::builder()
        .redirect(stop_at_loopback)
        .build()
        .expect("a client");
    let response = client
        .get(authorization_url)
        .send()
        .await
        .expect("the authorization server answers");
    assert!(response.status().is_redirection(), "{}", response.status());
    let location = response
        .headers()
        .get(reqwest::header::LOCATION)
        .expect("a redirect")
        .to_str()
        .expect("text");
    response.url().join(location).expect("a URL").to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sign_in_finished_on_another_device_takes_the_address_its_browser_ended_on() {
    use capa_core::SignInFailure;
    use capa_oauth::PastedRedirectError;

    let Some(keychain) = keychain_or_skip("oauth") else {
        return;
    };
    let server = AuthServer::start(&[]).await;
    let t = TestHub::start_with(&yaml(&server.mcp_url), keychain.clone()).await;
    let not_waiting = t
        .hub
        .connections()
        .finish_sign_in_from("notes", "?code=a&state=b")
        .await;
    assert!(
        matches!(not_waiting, Err(SignInFailure::NotWaiting(_))),
        "{not_waiting:?}"
    );

    let first = t.hub.begin_sign_in("notes", None).await.expect("starts");
    let stale = address_on_another_device(&first.url).await;
    let started = t
        .hub
        .begin_sign_in("notes", None)
        .await
        .expect("starts again");
    let address = address_on_another_device(&started.url).await;
    assert!(address.starts_with("http://127.0.0.1:"), "{address}");
    assert!(address.contains("code="), "{address}");

    // What is not this sign-in's redirect is refused in words, and the sign-in keeps waiting.
    let refusals = [
        ("https://example.com/", PastedRedirectError::NotARedirect),
        (started.url.as_str(), PastedRedirectError::NotARedirect),
        (stale.as_str(), PastedRedirectError::OtherSignIn),
    ];
    for (pasted, expected) in refusals {
        let refused = t
            .hub
            .connections()
            .finish_sign_in_from("notes", pasted)
            .await;
        match refused {
            Err(SignInFailure::Pasted(e)) => assert_eq!(e, expected, "{pasted}"),
            other => panic!("{pasted}: {other:?}"),
        }
    }
    let waiting = t.source("notes").oauth.expect("oauth").sign_in;
    assert_eq!(
        waiting.map(|s| s.state),
        Some(capa_core::SignInPhase::Waiting)
    );

    t.hub
        .connections()
        .finish_sign_in_from("notes", &format!("  {address}\n"))
        .await
        .expect("the pasted redirect is taken");
    let hub = t.hub.clone();
    let ready = eventually(Duration::from_secs(30), || {
        hub.sources()
            .list()
            .iter()
            .any(|s| s.id == "notes" && s.state == capa_core::SourceState::Ready && s.tools > 0)
    })
    .await;
    assert!(ready, "{:#?}", t.source("notes"));
    let who = execute_json(&t, Some("return await notes.whoami({})"), None).await;
    assert_eq!(who["status"], "completed", "{who:#}");
    // The same address again: that sign-in is over.
    let again = t
        .hub
        .connections()
        .finish_sign_in_from("notes", &address)
        .await;
    assert!(
        matches!(again, Err(SignInFailure::NotWaiting(_))),
        "{again:?}"
    );
}

/// A source that names a Client ID Metadata Document, at an authorization server that does not
/// advertise taking them (the SDK's router): the hub registers as before (RFC 7591), and the
/// client id it signed in with is the registered one, not the document's address. The other
/// way, a server that takes documents, is the conformance suite's `auth/basic-cimd`
/// (tests/conformance/auth-client.sh).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_metadata_document_the_server_does_not_take_falls_back_to_registration() {
    let Some(keychain) = keychain_or_skip("oauth") else {
        return;
    };
    let server = AuthServer::start(&[]).await;
    let file = yaml(&server.mcp_url).replace(
        "oauth: true",
        "oauth: { clientMetadataUrl: \"https://example.com/capabilities/client.json\" }",
    );
    let t = TestHub::start_with(&file, keychain.clone()).await;
    sign_in(&t).await;
    let who = execute_json(&t, Some("return await notes.whoami({})"), None).await;
    assert_eq!(who["status"], "completed", "{who:#}");
    let client_id = who["result"]["clientId"].as_str().expect("clientId");
    assert!(
        !client_id.is_empty() && !client_id.contains("example.com"),
        "the registered client id, not the document's address: {who:#}"
    );
}
