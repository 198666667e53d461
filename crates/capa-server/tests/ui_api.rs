//! The web UI's local API on a real hub and server: the one-time login link, the session cookie
//! and its CSRF token, sources added and removed through the global file, connections whose
//! secret is never echoed, run history, paused approvals and the event stream.

#[expect(
    dead_code,
    reason = "shared by the test binaries; this one starts its hub with `serve_hub_with` only"
)]
mod support;

use support::HubFiles;

use std::sync::Arc;
use std::time::Duration;

use capa_core::{ExecuteRequest, Hub};
use reqwest::StatusCode;
use reqwest::header::{COOKIE, LOCATION, ORIGIN, SET_COOKIE};
use serde_json::{Value, json};

/// Deletes a note (destructive: asks) after writing it.
const ASKING: &str = "await demo.write_note({ title: 'n', text: 'x' }); return await demo.delete_note({ title: 'n' });";

const GLOBAL: &str =
    "# my own comment: keep me\nservers: []\noptions:\n  demo: true # the demo stays\n";

/// Under these variables a missing part fails a test instead of being accepted: `scripts/test`
/// sets both, a developer running one test by hand may have no keychain or no built UI.
const ALL: &[&str] = &["CAPA_REQUIRE_ALL"];
const KEYCHAIN: &[&str] = &["CAPA_REQUIRE_ALL", "CAPA_REQUIRE_KEYCHAIN"];

/// The first of `names` that is set, if any.
fn required_by(names: &[&'static str]) -> Option<&'static str> {
    names
        .iter()
        .copied()
        .find(|name| std::env::var_os(name).is_some())
}

struct Ui {
    _dir: tempfile::TempDir,
    hub: Arc<Hub>,
    server: capa_server::HttpServer,
    token: String,
    base: String,
    client: reqwest::Client,
}

/// A hub whose global capabilities file (with a comment) is in a temp dir, served on loopback.
async fn serve_ui(keychain: capa_secrets::Keychain) -> Ui {
    serve_ui_with(HubFiles::Global(GLOBAL), keychain).await
}

async fn serve_ui_with(files: HubFiles<'_>, keychain: capa_secrets::Keychain) -> Ui {
    let served = support::serve_hub_with(files, keychain).await;
    let base = format!("http://{}", served.server.addr);
    let client = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .expect("client");
    Ui {
        _dir: served._dir,
        hub: served.hub,
        server: served.server,
        token: served.token,
        base,
        client,
    }
}

impl Ui {
    /// A login link made in process, as the desktop app makes them (`POST /api/ui/link` with
    /// the token opens one in the browser and never returns it).
    async fn link(&self) -> String {
        self.server.ui().issue_url().expect("link")
    }

    /// Follows a fresh link: the `capa_ui_<port>=<id>` cookie pair and the session's key (from
    /// the redirect to `/app/?session=<key>`).
    async fn login(&self) -> (String, String) {
        let response = self
            .client
            .get(self.link().await)
            .send()
            .await
            .expect("login");
        assert_eq!(response.status(), StatusCode::SEE_OTHER);
        let cookie = response.headers()[SET_COOKIE]
            .to_str()
            .expect("cookie")
            .to_owned();
        let pair = cookie.split(';').next().expect("pair").to_owned();
        let location = response.headers()[LOCATION].to_str().expect("location");
        let key = location
            .strip_prefix("/app/?session=")
            .unwrap_or_else(|| panic!("{location}"))
            .to_owned();
        let session: Value = self
            .client
            .get(format!("{}/api/session", self.base))
            .header(COOKIE, &pair)
            .header("X-Capa-Csrf", &key)
            .send()
            .await
            .expect("session")
            .json()
            .await
            .expect("json");
        assert_eq!(session["csrf"].as_str(), Some(key.as_str()), "{session}");
        (pair, key)
    }

    /// A request with the session cookie and its CSRF token.
    fn with_session(
        &self,
        method: reqwest::Method,
        path: &str,
        (cookie, csrf): &(String, String),
    ) -> reqwest::RequestBuilder {
        self.client
            .request(method, format!("{}{path}", self.base))
            .header(COOKIE, cookie)
            .header("X-Capa-Csrf", csrf)
            .header(ORIGIN, &self.base)
    }

    async fn tool_addresses(&self, session: &(String, String)) -> Vec<String> {
        let tools: Vec<Value> = self
            .with_session(reqwest::Method::GET, "/api/tools", session)
            .send()
            .await
            .expect("tools")
            .json()
            .await
            .expect("json");
        tools
            .iter()
            .filter_map(|t| t["address"].as_str().map(str::to_owned))
            .collect()
    }

    async fn execute(&self, code: &str) -> Value {
        let envelope = self
            .hub
            .execute(ExecuteRequest {
                code: Some(code.to_owned()),
                resume: None,
                client: Some("ui-test".to_owned()),
            })
            .await
            .expect("envelope");
        serde_json::to_value(envelope).expect("json")
    }
}

#[tokio::test]
async fn a_login_link_works_once_and_sets_a_strict_http_only_cookie() {
    let ui = serve_ui(capa_secrets::Keychain::default()).await;
    let link = ui.link().await;
    assert!(
        link.starts_with(&format!("{}/app/login/", ui.base)),
        "{link}"
    );
    let first = ui.client.get(&link).send().await.expect("first");
    assert_eq!(first.status(), StatusCode::SEE_OTHER);
    let location = first.headers()[LOCATION].to_str().expect("location");
    assert!(location.starts_with("/app/?session="), "{location}");
    let cookie = first.headers()[SET_COOKIE].to_str().expect("cookie");
    let port = ui.base.rsplit(':').next().expect("port");
    assert!(cookie.starts_with(&format!("capa_ui_{port}=")), "{cookie}");
    for flag in ["HttpOnly", "SameSite=Strict", "Path=/"] {
        assert!(cookie.contains(flag), "{cookie} lacks {flag}");
    }
    let again = ui.client.get(&link).send().await.expect("again");
    assert_eq!(again.status(), StatusCode::GONE);
    assert!(again.text().await.expect("body").contains("capa ui"));
    // The in-process path (the desktop app) gives working links too.
    let path = ui.server.ui().issue_link();
    let response = ui
        .client
        .get(format!("{}{path}", ui.base))
        .send()
        .await
        .expect("in-process link");
    assert_eq!(response.status(), StatusCode::SEE_OTHER);
    ui.server.shutdown().await;
}

/// A cookie reaches every port of the host, so another local service the browser visits gets
/// it: alone it reads nothing and writes nothing; sent twice (planted by another port) or from
/// another site it is refused.
#[tokio::test]
async fn cookie_sessions_need_their_key_for_reads_and_writes() {
    let ui = serve_ui(capa_secrets::Keychain::default()).await;
    let session = ui.login().await;
    let (cookie, csrf) = &session;
    let get = |headers: &[(&str, &str)]| {
        let mut request = ui
            .client
            .get(format!("{}/api/policy", ui.base))
            .header(COOKIE, cookie);
        for (name, value) in headers {
            request = request.header(*name, *value);
        }
        request.send()
    };
    let replayed = get(&[]).await.expect("get");
    assert_eq!(replayed.status(), StatusCode::FORBIDDEN);
    let refusal: Value = replayed.json().await.expect("json");
    assert_eq!(refusal["error"]["code"], "csrf", "{refusal}");
    let session_read = ui
        .client
        .get(format!("{}/api/session", ui.base))
        .header(COOKIE, cookie)
        .send()
        .await
        .expect("session");
    assert_eq!(
        session_read.status(),
        StatusCode::FORBIDDEN,
        "the key is not handed out"
    );
    assert_eq!(
        get(&[("X-Capa-Csrf", csrf)]).await.expect("get").status(),
        StatusCode::OK
    );
    let cross_site = get(&[("X-Capa-Csrf", csrf), ("Sec-Fetch-Site", "same-site")])
        .await
        .expect("get");
    assert_eq!(cross_site.status(), StatusCode::FORBIDDEN);
    // A stale value another port planted under our name does not lock the person out; two
    // live sessions at once are refused (which one is ours cannot be told).
    let read_with = |cookies: String, key: &str| {
        ui.client
            .get(format!("{}/api/policy", ui.base))
            .header(COOKIE, cookies)
            .header("X-Capa-Csrf", key.to_owned())
            .send()
    };
    let planted = format!("{}; {cookie}", cookie.replace('=', "=planted"));
    assert_eq!(
        read_with(planted, csrf).await.expect("get").status(),
        StatusCode::OK
    );
    let (second, _) = ui.login().await;
    let twice = read_with(format!("{cookie}; {second}"), csrf)
        .await
        .expect("get");
    assert_eq!(twice.status(), StatusCode::FORBIDDEN);
    let refusal: Value = twice.json().await.expect("json");
    assert_eq!(refusal["error"]["code"], "duplicate_cookie", "{refusal}");
    // Another port's cookie name is not ours.
    let other_port = cookie.replacen("capa_ui_", "capa_ui_1", 1);
    let other = ui
        .client
        .get(format!("{}/api/policy", ui.base))
        .header(COOKIE, other_port)
        .header("X-Capa-Csrf", csrf)
        .send()
        .await
        .expect("get");
    assert_eq!(other.status(), StatusCode::UNAUTHORIZED);
    let rule = json!({"pattern": "demo.add", "decision": "ask"});
    let put = |csrf: Option<&str>, origin: &str| {
        let mut request = ui
            .client
            .put(format!("{}/api/policy/rule", ui.base))
            .header(COOKIE, cookie)
            .header(ORIGIN, origin)
            .json(&rule);
        if let Some(csrf) = csrf {
            request = request.header("X-Capa-Csrf", csrf);
        }
        request
    };
    let without = put(None, &ui.base).send().await.expect("put");
    assert_eq!(without.status(), StatusCode::FORBIDDEN);
    let refusal: Value = without.json().await.expect("json");
    assert_eq!(refusal["error"]["code"], "csrf", "{refusal}");
    let wrong = put(Some("nope"), &ui.base).send().await.expect("put");
    assert_eq!(wrong.status(), StatusCode::FORBIDDEN);
    let cross = put(Some(csrf), "http://evil.example")
        .send()
        .await
        .expect("put");
    assert_eq!(cross.status(), StatusCode::FORBIDDEN);
    let right = put(Some(csrf), &ui.base).send().await.expect("put");
    assert_eq!(right.status(), StatusCode::OK);
    let body: Value = right.json().await.expect("json");
    assert!(body["rules"].to_string().contains("demo.add"), "{body}");
    // The bearer token still works, without any CSRF token.
    let bearer = ui
        .client
        .delete(format!("{}/api/policy/rule", ui.base))
        .bearer_auth(&ui.token)
        .json(&json!({"pattern": "demo.add"}))
        .send()
        .await
        .expect("delete");
    assert_eq!(bearer.status(), StatusCode::OK);
    // No cookie, no token: 401; a stale cookie too.
    let anonymous = ui
        .client
        .get(format!("{}/api/policy", ui.base))
        .header(
            COOKIE,
            format!(
                "capa_ui_{}=stale",
                ui.base.rsplit(':').next().expect("port")
            ),
        )
        .send()
        .await
        .expect("get");
    assert_eq!(anonymous.status(), StatusCode::UNAUTHORIZED);
    ui.server.shutdown().await;
}

#[tokio::test]
async fn a_source_added_through_the_api_serves_its_tools_and_the_file_keeps_its_comments() {
    let ui = serve_ui(capa_secrets::Keychain::default()).await;
    let session = ui.login().await;
    let script =
        support::repo_file("node_modules/@modelcontextprotocol/server-everything/dist/index.js");
    let added = ui
        .with_session(reqwest::Method::POST, "/api/sources", &session)
        .json(&json!({
            "id": "everything",
            "description": "the reference server",
            "command": "node",
            "args": [script, "stdio"],
        }))
        .send()
        .await
        .expect("add");
    assert_eq!(
        added.status(),
        StatusCode::OK,
        "{}",
        added.text().await.unwrap_or_default()
    );
    let file = ui.hub.paths().global_config();
    let text = std::fs::read_to_string(&file).expect("read");
    assert!(text.starts_with("# my own comment: keep me\n"), "{text}");
    assert!(text.contains("demo: true # the demo stays"), "{text}");
    assert!(text.contains("id: \"everything\""), "{text}");
    let mut addresses = Vec::new();
    for _ in 0..150 {
        addresses = ui.tool_addresses(&session).await;
        if addresses.iter().any(|a| a.starts_with("everything.")) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(
        addresses.iter().any(|a| a == "everything.echo"),
        "{addresses:?}"
    );
    let sources: Value = ui
        .with_session(reqwest::Method::GET, "/api/sources", &session)
        .send()
        .await
        .expect("sources")
        .json()
        .await
        .expect("json");
    let everything = sources
        .as_array()
        .and_then(|s| s.iter().find(|s| s["id"] == "everything"))
        .expect("listed");
    assert_eq!(everything["origin"], "config");
    assert_eq!(everything["editable"], true);
    assert_eq!(everything["def"]["command"], "node");
    let replaced = ui
        .with_session(reqwest::Method::PUT, "/api/sources/everything", &session)
        .json(&json!({"description": "edited", "command": "node", "args": [script, "stdio"]}))
        .send()
        .await
        .expect("replace");
    assert_eq!(
        replaced.status(),
        StatusCode::OK,
        "{}",
        replaced.text().await.unwrap_or_default()
    );
    let text = std::fs::read_to_string(&file).expect("read");
    assert!(text.contains("description: \"edited\""), "{text}");
    assert!(text.starts_with("# my own comment: keep me\n"), "{text}");
    // The demo is built in: read-only.
    let demo = ui
        .with_session(reqwest::Method::DELETE, "/api/sources/demo", &session)
        .send()
        .await
        .expect("delete demo");
    assert_eq!(demo.status(), StatusCode::CONFLICT);
    let removed = ui
        .with_session(reqwest::Method::DELETE, "/api/sources/everything", &session)
        .send()
        .await
        .expect("remove");
    assert_eq!(
        removed.status(),
        StatusCode::OK,
        "{}",
        removed.text().await.unwrap_or_default()
    );
    assert_eq!(std::fs::read_to_string(&file).expect("read"), GLOBAL);
    let addresses = ui.tool_addresses(&session).await;
    assert!(
        !addresses.iter().any(|a| a.starts_with("everything.")),
        "{addresses:?}"
    );
    ui.server.shutdown().await;
}

/// On a fresh install the hub starts with no capabilities file; the Sources page's first source
/// creates the global one. From then on the hub says it reads that file, so `capa mcp` and the
/// CLI (which now find the file) forward to this hub instead of starting one of their own —
/// also once the source is removed again and the file stays.
#[tokio::test]
async fn the_first_source_added_in_the_ui_makes_the_global_file_one_the_hub_reads() {
    let ui = serve_ui_with(HubFiles::NoneYet, capa_secrets::Keychain::default()).await;
    let files = |ui: &Ui| {
        let request = ui
            .client
            .get(format!("{}/api/config", ui.base))
            .bearer_auth(&ui.token);
        async move {
            let config: Value = request
                .send()
                .await
                .expect("config")
                .json()
                .await
                .expect("json");
            config["files"].clone()
        }
    };
    assert_eq!(files(&ui).await, json!([]), "a fresh install reads no file");
    let session = ui.login().await;
    let added = ui
        .with_session(reqwest::Method::POST, "/api/sources", &session)
        .json(&json!({"id": "echo", "command": "node", "args": ["-e", ""]}))
        .send()
        .await
        .expect("add");
    assert_eq!(
        added.status(),
        StatusCode::OK,
        "{}",
        added.text().await.unwrap_or_default()
    );
    let global = ui.hub.paths().global_config();
    assert!(global.is_file(), "the first source creates the global file");
    assert_eq!(files(&ui).await, json!([global]));
    let removed = ui
        .with_session(reqwest::Method::DELETE, "/api/sources/echo", &session)
        .send()
        .await
        .expect("remove");
    assert_eq!(removed.status(), StatusCode::OK);
    assert!(global.is_file());
    assert_eq!(files(&ui).await, json!([global]), "still read once emptied");
    ui.server.shutdown().await;
}

#[tokio::test]
async fn a_connection_secret_is_never_echoed() {
    let keychain =
        capa_secrets::Keychain::new(format!("capabilities-ui-api-{}", std::process::id()));
    let ui = serve_ui(keychain).await;
    let session = ui.login().await;
    let added = ui
        .with_session(reqwest::Method::POST, "/api/sources", &session)
        .json(&json!({
            "id": "needs-key",
            "command": "node",
            "args": ["-e", "0"],
            "env": {"API_KEY": "${secret:token}"},
        }))
        .send()
        .await
        .expect("add");
    assert_eq!(added.status(), StatusCode::OK);
    let canary = "canary-ui-secret-4f1d";
    let put = ui
        .with_session(reqwest::Method::PUT, "/api/connections", &session)
        .json(&json!({"source": "needs-key", "name": "work", "secret": canary}))
        .send()
        .await
        .expect("put");
    let status = put.status();
    let body = put.text().await.expect("body");
    assert!(!body.contains(canary), "{body}");
    // With a keychain it is stored; without one the error says so (and still never echoes), which
    // only a developer's run by hand may accept.
    match required_by(KEYCHAIN) {
        Some(by) => assert_eq!(
            status,
            StatusCode::OK,
            "{by} is set, so the keychain must store the connection (run under tests/support/with-keyring.sh): {body}"
        ),
        None => assert!(
            status == StatusCode::OK || status == StatusCode::SERVICE_UNAVAILABLE,
            "{status}: {body}"
        ),
    }
    let listed = ui
        .with_session(reqwest::Method::GET, "/api/connections", &session)
        .send()
        .await
        .expect("list")
        .text()
        .await
        .expect("body");
    assert!(!listed.contains(canary), "{listed}");
    if status == StatusCode::OK {
        assert!(listed.contains("\"work\""), "{listed}");
        let removed = ui
            .with_session(
                reqwest::Method::DELETE,
                "/api/connections/needs-key/work",
                &session,
            )
            .send()
            .await
            .expect("remove");
        assert_eq!(removed.status(), StatusCode::OK);
    }
    ui.server.shutdown().await;
}

#[tokio::test]
async fn runs_are_listed_and_detailed_and_app_decisions_say_so() {
    let ui = serve_ui(capa_secrets::Keychain::default()).await;
    let session = ui.login().await;
    let envelope = ui.execute(ASKING).await;
    assert_eq!(envelope["status"], "awaiting_approval", "{envelope}");
    let run_id = envelope["runId"].as_str().expect("run id").to_owned();
    let list: Value = ui
        .with_session(
            reqwest::Method::GET,
            "/api/runs?status=awaiting_approval&source=demo&limit=5",
            &session,
        )
        .send()
        .await
        .expect("runs")
        .json()
        .await
        .expect("json");
    let runs = list["runs"].as_array().expect("runs");
    assert_eq!(runs.len(), 1, "{list}");
    assert_eq!(runs[0]["id"], run_id.as_str());
    assert_eq!(runs[0]["client"], "ui-test");
    assert!(runs[0]["addresses"].to_string().contains("demo.write_note"));
    let none: Value = ui
        .with_session(reqwest::Method::GET, "/api/runs?status=completed", &session)
        .send()
        .await
        .expect("runs")
        .json()
        .await
        .expect("json");
    assert_eq!(none["runs"], json!([]));
    let approvals: Value = ui
        .with_session(reqwest::Method::GET, "/api/approvals", &session)
        .send()
        .await
        .expect("approvals")
        .json()
        .await
        .expect("json");
    assert_eq!(approvals["paused"], false);
    let decided = ui
        .with_session(reqwest::Method::POST, "/api/approvals/decide", &session)
        .json(&json!({"runId": run_id, "choice": "deny"}))
        .send()
        .await
        .expect("decide");
    assert_eq!(decided.status(), StatusCode::OK);
    let detail: Value = ui
        .with_session(
            reqwest::Method::GET,
            &format!("/api/runs/{run_id}"),
            &session,
        )
        .send()
        .await
        .expect("detail")
        .json()
        .await
        .expect("json");
    let run = &detail["run"];
    assert_eq!(run["code"], ASKING);
    assert_eq!(run["envelope"]["status"], "awaiting_approval");
    assert_eq!(run["calls"][0]["address"], "demo.write_note");
    assert_eq!(run["calls"][0]["ok"], true);
    assert!(
        run["calls"][0]["arguments"]["text"]
            .as_str()
            .is_some_and(|t| t.contains("title"))
    );
    assert_eq!(run["approvals"][0]["address"], "demo.delete_note");
    assert_eq!(run["approvals"][0]["status"], "denied");
    assert_eq!(run["approvals"][0]["decidedVia"], "app");
    let missing = ui
        .with_session(reqwest::Method::GET, "/api/runs/run_nope", &session)
        .send()
        .await
        .expect("detail");
    assert_eq!(missing.status(), StatusCode::NOT_FOUND);
    ui.server.shutdown().await;
}

#[tokio::test]
async fn while_approvals_are_paused_an_asking_call_is_denied_in_the_guest() {
    let ui = serve_ui(capa_secrets::Keychain::default()).await;
    let session = ui.login().await;
    let paused = ui
        .with_session(reqwest::Method::POST, "/api/approvals/pause", &session)
        .json(&json!({"paused": true}))
        .send()
        .await
        .expect("pause");
    assert_eq!(paused.status(), StatusCode::OK);
    assert!(ui.hub.approvals_paused());
    let code = "try { await demo.delete_note({ title: 'n' }); return 'ran'; } catch (e) { return `${e.code}: ${e.message}`; }";
    let envelope = ui.execute(code).await;
    assert_eq!(envelope["status"], "completed", "{envelope}");
    assert_eq!(
        envelope["result"],
        "denied: approvals are paused in Capabilities"
    );
    assert!(ui.hub.pending_inputs().expect("pending").is_empty());
    ui.hub.set_approvals_paused(false);
    let envelope = ui.execute(code).await;
    assert_eq!(envelope["status"], "awaiting_approval", "{envelope}");
    ui.server.shutdown().await;
}

/// Reads SSE `data:` lines until one satisfies `wanted`.
async fn next_data(
    response: &mut reqwest::Response,
    buffer: &mut String,
    wanted: impl Fn(&Value) -> bool,
) -> Value {
    loop {
        while let Some(end) = buffer.find('\n') {
            let line: String = buffer.drain(..=end).collect();
            if let Some(data) = line.trim_end().strip_prefix("data: ") {
                let value: Value = serde_json::from_str(data).expect("event json");
                if wanted(&value) {
                    return value;
                }
            }
        }
        let chunk = tokio::time::timeout(Duration::from_secs(20), response.chunk())
            .await
            .expect("an event in time")
            .expect("chunk")
            .expect("stream open");
        buffer.push_str(&String::from_utf8_lossy(&chunk));
    }
}

#[tokio::test]
async fn the_event_stream_reports_a_new_pending_approval() {
    let ui = serve_ui(capa_secrets::Keychain::default()).await;
    let session = ui.login().await;
    let mut response = ui
        .with_session(reqwest::Method::GET, "/api/events", &session)
        .send()
        .await
        .expect("events");
    assert_eq!(response.status(), StatusCode::OK);
    assert!(
        response.headers()["content-type"]
            .to_str()
            .expect("type")
            .starts_with("text/event-stream")
    );
    let mut buffer = String::new();
    let first = next_data(&mut response, &mut buffer, |_| true).await;
    assert_eq!(first["pending"], 0, "{first}");
    assert_eq!(first["paused"], false);
    assert_eq!(first["sources"]["ready"], 1, "{first}");
    let mut pending = ui.hub.watch_pending();
    let envelope = ui.execute(ASKING).await;
    assert_eq!(envelope["status"], "awaiting_approval");
    assert_eq!(*pending.borrow_and_update(), 1);
    let next = next_data(&mut response, &mut buffer, |v| v["pending"] == 1).await;
    assert_eq!(next["pending"], 1);
    drop(response);
    ui.server.shutdown().await;
}

#[tokio::test]
async fn the_ui_is_served_with_strict_headers_or_a_clear_error_when_not_built() {
    let ui = serve_ui(capa_secrets::Keychain::default()).await;
    let response = ui
        .client
        .get(format!("{}/app/settings/sources", ui.base))
        .send()
        .await
        .expect("app");
    let headers = response.headers().clone();
    assert!(
        headers["content-security-policy"]
            .to_str()
            .expect("csp")
            .starts_with("default-src 'self'; style-src 'self' 'unsafe-inline'"),
        "{headers:?}"
    );
    assert_eq!(headers["x-frame-options"], "DENY");
    assert_eq!(headers["x-content-type-options"], "nosniff");
    let status = response.status();
    let body = response.text().await.expect("body");
    match status {
        // Built (CAPA_UI_DIR or the repository's layout): the single-page app's index.
        StatusCode::OK => assert!(
            body.contains("<html") || body.contains("<!doctype"),
            "{body}"
        ),
        StatusCode::SERVICE_UNAVAILABLE => {
            assert!(body.contains("npm run build:ui"), "{body}");
            if let Some(by) = required_by(ALL) {
                panic!("{by} is set, so the UI must be served: build it with `npm run build:ui`");
            }
        }
        other => panic!("unexpected {other}: {body}"),
    }
    ui.server.shutdown().await;
}

/// The bearer token is what every local process that reads the token file holds: with it alone
/// nothing can be approved, no login link (a UI session could approve) comes back, and a policy
/// change that loosens the policy waits for a person's confirmation in the UI's session.
#[tokio::test]
async fn the_token_alone_cannot_approve_get_a_login_link_or_loosen_the_policy() {
    let ui = serve_ui(capa_secrets::Keychain::default()).await;
    let envelope = ui.execute(ASKING).await;
    assert_eq!(envelope["status"], "awaiting_approval", "{envelope}");
    let run_id = envelope["runId"].as_str().expect("run id").to_owned();
    let bearer = |method: reqwest::Method, path: &str| {
        ui.client
            .request(method, format!("{}{path}", ui.base))
            .bearer_auth(&ui.token)
    };
    let decided = bearer(reqwest::Method::POST, "/api/approvals/decide")
        .json(&json!({"runId": run_id, "choice": "approve_once"}))
        .send()
        .await
        .expect("decide");
    assert_eq!(decided.status(), StatusCode::FORBIDDEN);
    let refusal: Value = decided.json().await.expect("json");
    assert_eq!(refusal["error"]["code"], "person_required", "{refusal}");
    assert_eq!(ui.hub.pending_of_run(&run_id).expect("pending").len(), 1);

    let link: Value = bearer(reqwest::Method::POST, "/api/ui/link")
        .json(&json!({}))
        .send()
        .await
        .expect("link")
        .json()
        .await
        .expect("json");
    assert!(link.get("url").is_none(), "{link}");
    assert!(!link.to_string().contains("/app/login/"), "{link}");

    let loosened: Value = bearer(reqwest::Method::PUT, "/api/policy/rule")
        .json(&json!({"pattern": "demo.delete_note", "decision": "allow"}))
        .send()
        .await
        .expect("put")
        .json()
        .await
        .expect("json");
    assert_eq!(
        loosened["held"][0]["target"], "demo.delete_note",
        "{loosened}"
    );
    let still_asks = ui
        .hub
        .authorize("demo.delete_note", None)
        .await
        .expect("known");
    assert!(
        matches!(still_asks, capa_core::Authorization::NeedsPerson(_)),
        "{still_asks:?}"
    );
    let confirm = bearer(reqwest::Method::POST, "/api/policy/confirm")
        .send()
        .await
        .expect("confirm");
    assert_eq!(confirm.status(), StatusCode::FORBIDDEN);

    let session = ui.login().await;
    let confirmed: Value = ui
        .with_session(reqwest::Method::POST, "/api/policy/confirm", &session)
        .send()
        .await
        .expect("confirm")
        .json()
        .await
        .expect("json");
    assert_eq!(confirmed["held"], json!([]), "{confirmed}");
    let allowed = ui
        .hub
        .authorize("demo.delete_note", None)
        .await
        .expect("known");
    assert!(
        matches!(allowed, capa_core::Authorization::Allowed(_)),
        "{allowed:?}"
    );
    ui.server.shutdown().await;
}

/// `capa ui --print` at a terminal: the link's secret is made outside the hub and handed over in
/// a private file of the data dir, taken once.
#[cfg(unix)]
#[tokio::test]
async fn a_terminal_hands_a_login_link_over_through_a_private_file() {
    use std::os::unix::fs::OpenOptionsExt;
    let ui = serve_ui(capa_secrets::Keychain::default()).await;
    let dir = capa_server::ui::handoff::dir(&ui.hub.paths().data_dir);
    std::fs::create_dir_all(&dir).expect("dir");
    let name = "0123456789abcdef".repeat(2);
    let secret = "fedcba9876543210".repeat(4);
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(dir.join(&name))
        .expect("file");
    std::io::Write::write_all(&mut file, secret.as_bytes()).expect("write");
    let handoff = |name: String| {
        ui.client
            .post(format!("{}/api/ui/link", ui.base))
            .bearer_auth(&ui.token)
            .json(&json!({ "handoff": name }))
            .send()
    };
    let taken = handoff(name.clone()).await.expect("handoff");
    assert_eq!(taken.status(), StatusCode::OK);
    let again = handoff(name).await.expect("handoff again");
    assert_eq!(again.status(), StatusCode::FORBIDDEN);
    let login = ui
        .client
        .get(format!("{}/app/login/{secret}", ui.base))
        .send()
        .await
        .expect("login");
    assert_eq!(login.status(), StatusCode::SEE_OTHER);
    ui.server.shutdown().await;
}

/// `POST /api/call` (what `capa call` and `capa sh` use) goes through the authorizer: a tool
/// that asks does not run for the token; the call is recorded as pending, a person's decision
/// in the UI's session lets exactly one call with the same arguments run, once.
#[tokio::test]
async fn a_direct_call_that_asks_waits_for_a_person_and_runs_once() {
    let ui = serve_ui(capa_secrets::Keychain::default()).await;
    let call = |body: Value| {
        ui.client
            .post(format!("{}/api/call", ui.base))
            .bearer_auth(&ui.token)
            .json(&body)
            .send()
    };
    let json = |r: reqwest::Response| async move { r.json::<Value>().await.expect("json") };
    let wrote = json(
        call(json!({"address": "demo.write_note", "arguments": {"title": "keep", "text": "x"}}))
            .await
            .expect("write"),
    )
    .await;
    assert_eq!(wrote["ok"], true, "{wrote}");
    let delete = json!({"address": "demo.delete_note", "arguments": {"title": "keep"}});
    let first = json(call(delete.clone()).await.expect("call")).await;
    assert_eq!(first["error"]["code"], "approval_required", "{first}");
    let id = first["approval"]["id"].as_str().expect("id").to_owned();
    assert!(
        first["approval"]["runId"]
            .as_str()
            .expect("call id")
            .starts_with("call_")
    );
    let pending = json!({"address": "demo.delete_note", "arguments": {"title": "keep"}, "approval": id, "waitMs": 200});
    let waited = json(call(pending.clone()).await.expect("call")).await;
    assert_eq!(waited["error"]["code"], "approval_pending", "{waited}");
    // Another call cannot spend this approval.
    let other =
        json!({"address": "demo.delete_note", "arguments": {"title": "other"}, "approval": id});
    let refused = json(call(other).await.expect("call")).await;
    assert_eq!(
        refused["error"]["code"], "approval_for_other_call",
        "{refused}"
    );
    let notes = ui.hub.execute(ExecuteRequest {
        code: Some("return await demo.list_notes({})".to_owned()),
        ..ExecuteRequest::default()
    });
    let listed = serde_json::to_value(notes.await.expect("envelope")).expect("json");
    assert!(
        listed["result"].to_string().contains("keep"),
        "nothing ran: {listed}"
    );

    let session = ui.login().await;
    let decided = ui
        .with_session(reqwest::Method::POST, "/api/approvals/decide", &session)
        .json(&json!({"approvalId": id, "choice": "approve_once"}))
        .send()
        .await
        .expect("decide");
    assert_eq!(decided.status(), StatusCode::OK);
    let ran = json(call(pending.clone()).await.expect("call")).await;
    assert_eq!(ran["ok"], true, "{ran}");
    let again = json(call(pending).await.expect("call")).await;
    assert_eq!(
        again["error"]["code"], "already_decided",
        "spent once: {again}"
    );
    ui.server.shutdown().await;
}

/// A source added with the bearer token alone (a command the hub would run) does not start
/// until a person confirms it in the UI's session.
#[tokio::test]
async fn a_source_added_with_the_token_waits_for_a_person() {
    let ui = serve_ui(capa_secrets::Keychain::default()).await;
    let everything =
        support::repo_file("node_modules/@modelcontextprotocol/server-everything/dist/index.js");
    let added = ui
        .client
        .post(format!("{}/api/sources", ui.base))
        .bearer_auth(&ui.token)
        .json(&json!({"id": "planted", "command": "node", "args": [everything, "stdio"]}))
        .send()
        .await
        .expect("add");
    assert_eq!(added.status(), StatusCode::OK);
    let state = |hub: &Hub| {
        hub.sources()
            .into_iter()
            .find(|s| s.id == "planted")
            .map(|s| (s.state, s.pid))
    };
    let (held, pid) = state(&ui.hub).expect("listed");
    assert_eq!(held, "needs_confirmation");
    assert_eq!(pid, None, "no process was started");
    let refused = ui
        .client
        .post(format!("{}/api/sources/planted/confirm", ui.base))
        .bearer_auth(&ui.token)
        .send()
        .await
        .expect("confirm");
    assert_eq!(refused.status(), StatusCode::FORBIDDEN);
    let session = ui.login().await;
    let confirmed = ui
        .with_session(
            reqwest::Method::POST,
            "/api/sources/planted/confirm",
            &session,
        )
        .send()
        .await
        .expect("confirm");
    assert_eq!(confirmed.status(), StatusCode::OK);
    ui.hub.settled(Duration::from_secs(30)).await;
    assert_eq!(state(&ui.hub).expect("listed").0, "ready");
    ui.server.shutdown().await;
}
