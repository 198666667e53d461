//! The login link, the session cookie and its CSRF key, and what the bearer token alone cannot do.

use reqwest::StatusCode;
use reqwest::header::{COOKIE, LOCATION, ORIGIN, SET_COOKIE};
use serde_json::{Value, json};

use crate::harness::{ASKING, Ui, serve_ui};

#[tokio::test]
async fn a_login_link_works_once_and_sets_a_strict_http_only_cookie() {
    let ui = serve_ui(capa_secrets::Keychain::default()).await;
    let link = ui.link();
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
    let (cookie, csrf) = ui.login().await;
    reads_need_the_key(&ui, &cookie, &csrf).await;
    writes_need_the_key_and_our_origin(&ui, &cookie, &csrf).await;
    ui.server.shutdown().await;
}

/// Reads with the cookie: refused without the key, from another site, with two live sessions
/// or another port's cookie; a stale planted value does not lock the person out.
async fn reads_need_the_key(ui: &Ui, cookie: &str, csrf: &str) {
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
}

/// Writes with the cookie need the key and our origin; the bearer token needs neither, and
/// nothing at all gets a 401.
async fn writes_need_the_key_and_our_origin(ui: &Ui, cookie: &str, csrf: &str) {
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
    assert_eq!(
        ui.hub
            .approvals()
            .pending_of(&run_id)
            .expect("pending")
            .len(),
        1
    );

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
