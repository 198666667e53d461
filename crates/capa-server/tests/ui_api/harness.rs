//! A hub with the web UI's API on loopback, and a client that logs in the way a browser does.

use std::sync::Arc;

use capa_core::{ExecuteRequest, Hub};
use reqwest::StatusCode;
use reqwest::header::{COOKIE, LOCATION, ORIGIN, SET_COOKIE};
use serde_json::Value;

use crate::support::{self, HubFiles};

/// Deletes a note (destructive: asks) after writing it.
pub(crate) const ASKING: &str = "await demo.write_note({ title: 'n', text: 'x' }); return await demo.delete_note({ title: 'n' });";

pub(crate) const GLOBAL: &str =
    "# my own comment: keep me\nservers: []\noptions:\n  demo: true # the demo stays\n";

/// Under these variables a missing part fails a test instead of being accepted: `scripts/test`
/// sets both, a developer running one test by hand may have no keychain or no built UI.
pub(crate) const ALL: &[&str] = &["CAPA_REQUIRE_ALL"];
pub(crate) const KEYCHAIN: &[&str] = &["CAPA_REQUIRE_ALL", "CAPA_REQUIRE_KEYCHAIN"];

/// The first of `names` that is set, if any.
pub(crate) fn required_by(names: &[&'static str]) -> Option<&'static str> {
    names
        .iter()
        .copied()
        .find(|name| std::env::var_os(name).is_some())
}

pub(crate) struct Ui {
    pub(crate) _dir: tempfile::TempDir,
    pub(crate) hub: Arc<Hub>,
    pub(crate) server: capa_server::HttpServer,
    pub(crate) token: String,
    pub(crate) base: String,
    pub(crate) client: reqwest::Client,
}

/// A hub whose global capabilities file (with a comment) is in a temp dir, served on loopback.
pub(crate) async fn serve_ui(keychain: capa_secrets::Keychain) -> Ui {
    serve_ui_with(HubFiles::Global(GLOBAL), keychain).await
}

#[expect(
    clippy::used_underscore_binding,
    reason = "the temp dir is only kept alive, by the one that outlives the hub"
)]
pub(crate) async fn serve_ui_with(files: HubFiles<'_>, keychain: capa_secrets::Keychain) -> Ui {
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
    pub(crate) fn link(&self) -> String {
        self.server.ui().issue_url().expect("link")
    }

    /// Follows a fresh link: the `capa_ui_<port>=<id>` cookie pair and the session's key (from
    /// the redirect to `/app/?session=<key>`).
    pub(crate) async fn login(&self) -> (String, String) {
        let response = self.client.get(self.link()).send().await.expect("login");
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
    pub(crate) fn with_session(
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

    pub(crate) async fn tool_addresses(&self, session: &(String, String)) -> Vec<String> {
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

    pub(crate) async fn execute(&self, code: &str) -> Value {
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
