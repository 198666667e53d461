//! A person's sign-in: discovery and registration, the authorization URL for their browser, and
//! the redirect back on a loopback port (RFC 8252), where the code is exchanged for tokens that
//! go straight to the keychain.

use std::collections::HashMap;
use std::time::Duration;

use axum::extract::{RawQuery, State};
use axum::response::Html;
use capa_secrets::Secret;
use reqwest::header::{ACCEPT, CONTENT_TYPE, WWW_AUTHENTICATE};
use rmcp::transport::auth::{
    AuthError, AuthorizationManager, AuthorizationRequest, AuthorizationSession,
};
use tokio::net::TcpListener;
use tokio::sync::{mpsc, oneshot};

use crate::connect::describe;
use crate::store::TokenStore;
use crate::token_set::{TokenSet, TokenSummary};

/// The path of the loopback redirect.
const CALLBACK_PATH: &str = "/callback";

/// What to sign in to.
#[derive(Debug, Clone)]
pub struct SignInRequest {
    /// The MCP endpoint (the protected resource).
    pub url: String,
    /// A client registered beforehand; without one the hub registers itself (RFC 7591).
    pub client_id: Option<String>,
    pub client_secret: Option<Secret>,
    /// Scopes to ask for; empty: those the server's challenge or metadata name.
    pub scopes: Vec<String>,
    /// How the hub names itself at registration, shown on the consent page.
    pub client_name: String,
    /// The https address of a Client ID Metadata Document describing the hub (SEP-991): its
    /// client id where the authorization server supports such documents and no `client_id` is
    /// set, before registering.
    pub client_metadata_url: Option<String>,
}

/// Why a sign-in did not complete, in words for the person.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SignInError {
    #[error("could not start the sign-in to {url}: {reason}")]
    Setup { url: String, reason: String },
    #[error("the sign-in was refused: {0}")]
    Refused(String),
    #[error("nobody finished the sign-in in the browser within {} min", .0.as_secs() / 60)]
    TimedOut(Duration),
    #[error("the authorization server did not give tokens: {0}")]
    Exchange(String),
    #[error("the tokens could not be stored: {0}")]
    Store(String),
}

/// A sign-in waiting for the browser's redirect.
pub struct PendingSignIn {
    session: AuthorizationSession,
    listener: TcpListener,
    store: TokenStore,
    expected_state: String,
    /// Where redirects arrive: the loopback listener's requests and pasted addresses alike.
    redirects: (mpsc::Sender<Callback>, mpsc::Receiver<Callback>),
}

/// Hands a sign-in the address a browser ended on, for a person who signed in on another
/// device: that browser's redirect to this computer's loopback port fails there, and the
/// address it shows carries the code and the state the listener would have received.
#[derive(Clone)]
pub struct RedirectInbox {
    tx: mpsc::Sender<Callback>,
    expected_state: String,
}

impl std::fmt::Debug for RedirectInbox {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RedirectInbox").finish_non_exhaustive()
    }
}

/// Why a pasted address was not taken; the sign-in keeps waiting.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum PastedRedirectError {
    // Said to the person as they are (the app's dialog), so whole sentences.
    #[error(
        "This is not the address the browser ended on. After you sign in, the browser goes to an address that starts with http://127.0.0.1 and holds code= and state=: copy that whole address."
    )]
    NotARedirect,
    #[error(
        "This address belongs to another sign-in (an older try?): copy the address from the sign-in you started last."
    )]
    OtherSignIn,
    #[error("This sign-in is over: start it again.")]
    Over,
}

impl RedirectInbox {
    /// Whether `other` hands redirects to the same sign-in as this one.
    pub fn same_sign_in(&self, other: &Self) -> bool {
        self.tx.same_channel(&other.tx)
    }

    /// Gives the sign-in the address its browser ended on (a whole URL, or its query), and
    /// waits for the code's exchange: `Ok` once it was tried, whatever the server answered
    /// (the sign-in's own outcome says that).
    pub async fn deliver(&self, address: &str) -> Result<(), PastedRedirectError> {
        let params = pasted_params(address).ok_or(PastedRedirectError::NotARedirect)?;
        if params.get("state") != Some(&self.expected_state) {
            return Err(if params.contains_key("state") {
                PastedRedirectError::OtherSignIn
            } else {
                PastedRedirectError::NotARedirect
            });
        }
        let (reply, answer) = oneshot::channel();
        self.tx
            .send((params, reply))
            .await
            .map_err(|_| PastedRedirectError::Over)?;
        answer
            .await
            .map(drop)
            .map_err(|_| PastedRedirectError::Over)
    }
}

/// The redirect's parameters from what a person pasted: a URL (any host: the other device's
/// browser shows the loopback address it could not reach) or its bare query. Only an address
/// with a `state` and a `code` or an `error` is a redirect.
fn pasted_params(address: &str) -> Option<HashMap<String, String>> {
    let address = address.trim();
    let query = match reqwest::Url::parse(address) {
        Ok(url) => url.query()?.to_owned(),
        Err(_) => address.trim_start_matches('?').to_owned(),
    };
    let params = query_pairs(&query);
    (params.contains_key("state") && (params.contains_key("code") || params.contains_key("error")))
        .then_some(params)
}

impl std::fmt::Debug for PendingSignIn {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PendingSignIn")
            .field("store", &self.store)
            .finish_non_exhaustive()
    }
}

/// Starts a sign-in: listens on a loopback port, finds the authorization server (from the 401's
/// `WWW-Authenticate`, else well-known URLs), registers when no client is configured, and builds
/// the authorization URL (PKCE S256, `resource`, scopes). Tokens land in `store` on
/// [`PendingSignIn::finish`].
pub async fn begin(
    mut request: SignInRequest,
    store: TokenStore,
) -> Result<PendingSignIn, SignInError> {
    // After a step-up (a 403 `insufficient_scope`), the granted scopes and those asked for,
    // with the configured ones.
    for scope in store.step_up_scopes().await {
        if !request.scopes.contains(&scope) {
            request.scopes.push(scope);
        }
    }
    let setup = |reason: String| SignInError::Setup {
        url: request.url.clone(),
        reason,
    };
    let listener = TcpListener::bind(("127.0.0.1", 0))
        .await
        .map_err(|e| setup(format!("cannot listen on a loopback port: {e}")))?;
    let port = listener
        .local_addr()
        .map_err(|e| setup(e.to_string()))?
        .port();
    let redirect_uri = format!("http://127.0.0.1:{port}{CALLBACK_PATH}");
    let challenge = challenge_of(&request.url).await;
    let mut manager = AuthorizationManager::new(request.url.as_str())
        .await
        .map_err(|e| setup(describe(&e)))?;
    manager.set_credential_store(store.clone());
    let metadata = manager
        .resolve_metadata_from_challenge(challenge.as_deref())
        .await
        .map_err(|e| setup(describe(&e)))?
        .metadata;
    manager.set_metadata(metadata.clone());
    let mut authorization =
        AuthorizationRequest::new(&redirect_uri).with_client_name(&request.client_name);
    if let Some(challenge) = &challenge {
        authorization = authorization.with_challenge(challenge);
    }
    if !request.scopes.is_empty() {
        authorization = authorization.with_scopes(request.scopes.clone());
    }
    let (authorization, client_secret) = identify_client(
        &request,
        &mut manager,
        &metadata,
        &redirect_uri,
        authorization,
    )
    .await
    .map_err(|e| setup(describe(&e)))?;
    let session = AuthorizationSession::new(manager, authorization)
        .await
        .map_err(|(_, e)| setup(describe(&e)))?;
    // The person's browser goes there: a web address, nothing a discovery document could
    // smuggle in (`javascript:`, `file:`).
    let parsed = reqwest::Url::parse(&session.auth_url).ok();
    if !parsed
        .as_ref()
        .is_some_and(|u| matches!(u.scheme(), "https" | "http"))
    {
        return Err(setup(
            "the authorization server's sign-in address is not an http(s) URL".to_owned(),
        ));
    }
    let expected_state = parsed
        .and_then(|u| {
            u.query_pairs()
                .find(|(k, _)| k == "state")
                .map(|(_, v)| v.into_owned())
        })
        .ok_or_else(|| setup("the authorization URL has no state".to_owned()))?;
    // What a restart needs; written with the tokens by the exchange's save.
    store.stage(TokenSet {
        v: TokenSet::VERSION,
        credentials: None,
        metadata: Some(metadata),
        client_secret,
        redirect_uri: Some(redirect_uri),
        wanted_scopes: Vec::new(),
    });
    Ok(PendingSignIn {
        session,
        listener,
        store,
        expected_state,
        redirects: mpsc::channel(4),
    })
}

/// How the hub is known to the authorization server, in the order of the MCP authorization
/// spec (2026-07-28, "Client registration"): a client registered beforehand, then a Client ID
/// Metadata Document where the server takes one, then registration. Returns `authorization`
/// with the client, and the client's secret when it has one.
async fn identify_client(
    request: &SignInRequest,
    manager: &mut AuthorizationManager,
    metadata: &rmcp::transport::auth::AuthorizationMetadata,
    redirect_uri: &str,
    mut authorization: AuthorizationRequest,
) -> Result<(AuthorizationRequest, Option<String>), AuthError> {
    let mut client_secret = request
        .client_secret
        .as_ref()
        .map(|s| s.expose().to_owned());
    let metadata_document = request
        .client_metadata_url
        .as_deref()
        .filter(|_| takes_metadata_documents(metadata));
    let client_id = match &request.client_id {
        Some(id) => Some(id.clone()),
        // The document's address is the client id; the server fetches the document there.
        None if metadata_document.is_some() => None,
        // Registered here rather than inside rmcp's session, so that a secret the server
        // returns is kept for refreshes after a restart.
        None if metadata.registration_endpoint.is_some() => {
            let scopes: Vec<&str> = request.scopes.iter().map(String::as_str).collect();
            let registered = manager
                .register_client(&request.client_name, redirect_uri, &scopes)
                .await?;
            client_secret.clone_from(&registered.client_secret);
            Some(registered.client_id)
        }
        None => None,
    };
    if let Some(id) = client_id {
        authorization = authorization.with_preregistered_client(id);
        if let Some(secret) = &client_secret {
            authorization = authorization.with_client_secret(secret);
        }
    } else if let Some(url) = metadata_document {
        authorization = authorization.with_client_metadata_url(url);
    }
    Ok((authorization, client_secret))
}

/// Whether the authorization server says it takes Client ID Metadata Documents as client ids
/// (`client_id_metadata_document_supported: true` in its metadata).
fn takes_metadata_documents(metadata: &rmcp::transport::auth::AuthorizationMetadata) -> bool {
    metadata
        .additional_fields
        .get("client_id_metadata_document_supported")
        .and_then(serde_json::Value::as_bool)
        .unwrap_or(false)
}

/// The `WWW-Authenticate` challenge of an unauthenticated request, when the server sends a 401
/// with one: `initialize` first, then `tools/list` for a server that lets the handshake through
/// and asks for a token (and its scope) only for the calls after it. Any other answer leaves
/// discovery to the well-known URLs.
async fn challenge_of(url: &str) -> Option<String> {
    let initialize = serde_json::json!({
        "jsonrpc": "2.0", "id": 0, "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                   "clientInfo": {"name": "capabilities", "version": env!("CARGO_PKG_VERSION")}},
    });
    let list = serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"});
    for body in [initialize, list] {
        if let Some(challenge) = challenge_to(url, &body).await {
            return Some(challenge);
        }
    }
    None
}

async fn challenge_to(url: &str, body: &serde_json::Value) -> Option<String> {
    let response = reqwest::Client::new()
        .post(url)
        .header(ACCEPT, "application/json, text/event-stream")
        .header(CONTENT_TYPE, "application/json")
        .body(body.to_string())
        .timeout(Duration::from_secs(20))
        .send()
        .await
        .ok()?;
    if response.status() != reqwest::StatusCode::UNAUTHORIZED {
        return None;
    }
    response
        .headers()
        .get(WWW_AUTHENTICATE)?
        .to_str()
        .ok()
        .map(str::to_owned)
}

type Callback = (HashMap<String, String>, oneshot::Sender<Html<String>>);

impl PendingSignIn {
    /// The URL to open in the person's browser. It carries the PKCE challenge and the state, no
    /// secret; still, it is for the person, never for a model.
    pub fn authorization_url(&self) -> &str {
        &self.session.auth_url
    }

    pub fn redirect_uri(&self) -> &str {
        &self.session.redirect_uri
    }

    /// Where a pasted redirect goes, for as long as [`PendingSignIn::finish`] waits.
    pub fn inbox(&self) -> RedirectInbox {
        RedirectInbox {
            tx: self.redirects.0.clone(),
            expected_state: self.expected_state.clone(),
        }
    }

    /// Waits up to `limit` for the browser's redirect (or a pasted one, [`RedirectInbox`]),
    /// exchanges the code and stores the tokens. A request with another `state` (a stale tab,
    /// another local process) is answered and ignored; the wait goes on.
    pub async fn finish(self, limit: Duration) -> Result<TokenSummary, SignInError> {
        let (tx, mut rx) = self.redirects;
        let app = axum::Router::new()
            .route(CALLBACK_PATH, axum::routing::get(callback))
            .with_state(tx);
        let server = tokio::spawn(async move {
            let _ = axum::serve(self.listener, app).await;
        });
        // The wait for the person is bounded; the exchange that follows is not cut short by it
        // (tokens stored with no connection recorded would be lost).
        let expected = self.expected_state.clone();
        let arrived = tokio::time::timeout(limit, async {
            while let Some((params, reply)) = rx.recv().await {
                if params.get("state") == Some(&expected) {
                    return Some((params, reply));
                }
                let _ = reply.send(page(
                    "This sign-in link is out of date",
                    "Start the sign-in again from Capabilities.",
                ));
            }
            None
        })
        .await;
        let outcome = match arrived {
            Err(_) => Err(SignInError::TimedOut(limit)),
            Ok(None) => Err(SignInError::Exchange(
                "the redirect listener stopped".into(),
            )),
            Ok(Some((params, reply))) => {
                let (outcome, answer) =
                    exchange(&self.session, &self.store, &expected, &params).await;
                let _ = reply.send(answer);
                outcome
            }
        };
        // The page was answered before this point; give it a moment to reach the browser.
        tokio::time::sleep(Duration::from_millis(100)).await;
        server.abort();
        outcome
    }
}

/// The code of a redirect exchanged for tokens (stored by the exchange's save), and the page
/// the browser gets.
async fn exchange(
    session: &AuthorizationSession,
    store: &TokenStore,
    state: &str,
    params: &HashMap<String, String>,
) -> (Result<TokenSummary, SignInError>, Html<String>) {
    if let Some(error) = params.get("error") {
        let detail = params
            .get("error_description")
            .map_or_else(String::new, |d| format!(" ({d})"));
        return (
            Err(SignInError::Refused(format!("{error}{detail}"))),
            page(
                "Sign-in refused",
                "The sign-in was not completed. You can close this tab.",
            ),
        );
    }
    let Some(code) = params.get("code") else {
        return (
            Err(SignInError::Exchange("the redirect carried no code".into())),
            page("Sign-in failed", "The redirect carried no code."),
        );
    };
    let exchanged = session
        .handle_callback_with_issuer(code, state, params.get("iss").map(String::as_str))
        .await;
    let failed = || page("Sign-in failed", "Start it again from Capabilities.");
    match exchanged {
        Ok(_) => match store.summary().await {
            Ok(Some(summary)) => (
                Ok(summary),
                page(
                    "Signed in",
                    "Capabilities is connected. You can close this tab.",
                ),
            ),
            Ok(None) => (
                Err(SignInError::Store("nothing was stored".into())),
                failed(),
            ),
            Err(e) => (Err(SignInError::Store(e.to_string())), failed()),
        },
        Err(AuthError::CredentialStoreError(m)) => (Err(SignInError::Store(m)), failed()),
        Err(other) => (Err(SignInError::Exchange(describe(&other))), failed()),
    }
}

async fn callback(
    State(tx): State<mpsc::Sender<Callback>>,
    RawQuery(query): RawQuery,
) -> Html<String> {
    let params = query_pairs(query.as_deref().unwrap_or_default());
    let (reply, answer) = oneshot::channel();
    if tx.send((params, reply)).await.is_err() {
        return page(
            "Sign-in closed",
            "This sign-in is over. You can close this tab.",
        );
    }
    answer.await.unwrap_or_else(|_| {
        page(
            "Sign-in closed",
            "This sign-in is over. You can close this tab.",
        )
    })
}

/// The decoded pairs of a query string (the first of a repeated name wins).
fn query_pairs(query: &str) -> HashMap<String, String> {
    let mut pairs = HashMap::new();
    if let Ok(url) = reqwest::Url::parse(&format!("http://127.0.0.1/?{query}")) {
        for (name, value) in url.query_pairs() {
            pairs
                .entry(name.into_owned())
                .or_insert_with(|| value.into_owned());
        }
    }
    pairs
}

/// A plain page for the browser tab (no script, nothing from the request echoed).
fn page(title: &str, text: &str) -> Html<String> {
    Html(format!(
        "<!doctype html><html><head><meta charset=\"utf-8\"><title>{title} · Capabilities</title></head>\
         <body style=\"font-family: system-ui, sans-serif; margin: 4rem auto; max-width: 32rem\">\
         <h1>{title}</h1><p>{text}</p></body></html>"
    ))
}

#[cfg(test)]
mod tests {
    use super::pasted_params;

    #[test]
    fn a_pasted_redirect_is_read_from_a_whole_address_or_its_query() {
        let whole = pasted_params(
            "  http://127.0.0.1:41234/callback?code=abc&state=xyz&iss=https%3A%2F%2Fa\n",
        )
        .expect("a redirect");
        assert_eq!(whole["code"], "abc");
        assert_eq!(whole["state"], "xyz");
        assert_eq!(whole["iss"], "https://a");
        let query = pasted_params("?code=abc&state=xyz").expect("a redirect");
        assert_eq!(query["code"], "abc");
        let refused = pasted_params("http://127.0.0.1:1/callback?error=access_denied&state=s")
            .expect("a refusal is a redirect too");
        assert_eq!(refused["error"], "access_denied");
    }

    #[test]
    fn an_address_without_state_and_code_is_not_a_redirect() {
        for address in [
            "",
            "hello",
            "http://127.0.0.1:41234/callback",
            "http://127.0.0.1:41234/callback?code=abc",
            "https://auth.example/authorize?state=xyz&client_id=c",
        ] {
            assert!(pasted_params(address).is_none(), "{address}");
        }
    }
}
