//! Sources that sign in with OAuth: which ones do, what their sign-ins look like (never a
//! token), and a person's sign-in from the app, where the hub waits for the browser's redirect
//! and then starts the source again with the new tokens.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use capa_config::{SourceConfig, SourceTransport};
use capa_oauth::{OAUTH_FIELD, SignInRequest};
use capa_store::ConnectionRecord;
use capa_upstream::{LogLevel, UpstreamSpec, UpstreamState, UpstreamTransport};
use serde::{Deserialize, Serialize};

use super::source_def::{Origin, SourceDef};
use super::{Connections, Hub};
use crate::approval::SIGN_IN_PREFIX;
use crate::error::CallError;

/// How long a sign-in waits for the person to finish it in the browser.
pub const SIGN_IN_WAIT: Duration = Duration::from_mins(5);

/// The connection a first sign-in is stored as.
pub const DEFAULT_SIGN_IN_NAME: &str = "personal";

/// How the hub names itself to authorization servers (registration, consent pages).
const CLIENT_NAME: &str = "Capabilities";

/// A source's OAuth side for listings.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct OAuthStatus {
    pub connections: Vec<OAuthConnection>,
    /// A sign-in started from the app that has not finished, or that failed.
    pub sign_in: Option<SignInState>,
}

/// One signed-in (or signed-out) connection of an OAuth source.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct OAuthConnection {
    pub name: String,
    pub default: bool,
    /// False once the server stopped accepting it (a refused refresh): sign in again.
    pub signed_in: bool,
}

/// Where a sign-in started from the app is.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SignInState {
    pub connection: String,
    pub state: SignInPhase,
    /// Why it failed, in words.
    pub message: Option<String>,
    /// The authorization URL the browser was sent to, for a person whose browser did not open.
    pub url: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SignInPhase {
    Waiting,
    Failed,
}

/// A sign-in the hub started: the URL to open in the person's browser.
#[derive(Debug, Clone)]
pub struct SignInStarted {
    pub connection: String,
    pub url: String,
}

/// Why a sign-in could not start.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SignInFailure {
    #[error("no configured source `{0}`")]
    UnknownSource(String),
    #[error("{0}")]
    NotOAuth(String),
    #[error("{0}")]
    InvalidName(String),
    #[error("{0}")]
    Failed(String),
    /// A pasted redirect for a source with no sign-in waiting.
    #[error(
        "no sign-in to `{0}` is waiting (it finished, failed or timed out): press Sign in to start again"
    )]
    NotWaiting(String),
    #[error("{0}")]
    Pasted(#[from] capa_oauth::PastedRedirectError),
}

/// Sign-ins in progress or failed, by source id (in memory: a restart ends them), and the
/// connections (source key, name) whose server refused their sign-in while this hub ran: a
/// connection keeps that mark when its upstream is stopped, until someone signs it in again.
#[derive(Debug, Default)]
pub(super) struct SignIns(
    Mutex<BTreeMap<String, SignInState>>,
    /// With the access token that was refused: a mark whose connection now holds another one
    /// (someone signed in again, here or in a terminal) is dropped.
    Mutex<BTreeMap<(String, String), capa_secrets::Secret>>,
    /// Where the waiting sign-ins take a pasted redirect, by source id.
    Mutex<BTreeMap<String, capa_oauth::RedirectInbox>>,
);

impl SignIns {
    fn set(&self, source_id: &str, state: Option<SignInState>) {
        let mut all = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        match state {
            Some(state) => all.insert(source_id.to_owned(), state),
            None => all.remove(source_id),
        };
    }

    fn inboxes(&self) -> std::sync::MutexGuard<'_, BTreeMap<String, capa_oauth::RedirectInbox>> {
        self.2.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn marks(&self) -> std::sync::MutexGuard<'_, BTreeMap<(String, String), capa_secrets::Secret>> {
        self.1.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn is_signed_out(&self, key: &str, name: &str) -> bool {
        self.marks()
            .contains_key(&(key.to_owned(), name.to_owned()))
    }

    fn get(&self, source_id: &str) -> Option<SignInState> {
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(source_id)
            .cloned()
    }
}

/// What signing in to `config` asks the authorization server for. Only `url` sources without
/// a static `Authorization` header sign in.
pub fn sign_in_request(config: &SourceConfig) -> Result<SignInRequest, SignInFailure> {
    let SourceTransport::Http {
        url,
        headers,
        oauth,
    } = &config.transport
    else {
        return Err(SignInFailure::NotOAuth(format!(
            "`{}` is a local (command) server; it gets its credentials through `env`, not a sign-in",
            config.id
        )));
    };
    if headers
        .keys()
        .any(|k| k.eq_ignore_ascii_case("authorization"))
    {
        return Err(SignInFailure::NotOAuth(format!(
            "`{}` sends a static token in its `Authorization` header; remove the header to sign in with OAuth instead",
            config.id
        )));
    }
    let settings = oauth.clone().unwrap_or_default();
    Ok(SignInRequest {
        url: url.clone(),
        client_id: settings.client_id,
        client_secret: None,
        scopes: settings.scopes,
        client_name: CLIENT_NAME.to_owned(),
        client_metadata_url: settings.client_metadata_url,
    })
}

/// Fills the client secret a source's `oauth.clientSecret: ${secret:NAME}` names from field
/// NAME of connection `name` (stored with `capa connections set`).
pub fn fill_client_secret(
    connections: &crate::ConnectionVault,
    config: &SourceConfig,
    name: &str,
    request: &mut SignInRequest,
) -> Result<(), SignInFailure> {
    let SourceTransport::Http {
        oauth: Some(oauth), ..
    } = &config.transport
    else {
        return Ok(());
    };
    let Some(field) = &oauth.client_secret else {
        return Ok(());
    };
    let missing = || {
        SignInFailure::Failed(format!(
            "the client secret of `{}` is not stored: run `capa connections set {} {name} --field {field}` (it reads the secret from stdin), then sign in again",
            config.id, config.id
        ))
    };
    let resolved = connections
        .resolve(&connections.key_of(config), Some(name))
        .map_err(|e| SignInFailure::Failed(e.to_string()))?
        .ok_or_else(missing)?;
    let secret = resolved.secrets.get(field).ok_or_else(missing)?;
    request.client_secret = Some(secret.clone());
    Ok(())
}

fn is_oauth_record(record: &ConnectionRecord, key: &str) -> bool {
    record.source == key && record.fields.iter().any(|f| f == OAUTH_FIELD)
}

impl Hub {
    /// Starts a person's sign-in to `source_id` as connection `connection` (else the default
    /// OAuth connection, else `personal`): the URL to send their browser to. The hub then waits
    /// for the redirect (up to [`SIGN_IN_WAIT`]), stores the tokens and starts the source again.
    pub async fn begin_sign_in(
        self: &Arc<Self>,
        source_id: &str,
        connection: Option<&str>,
    ) -> Result<SignInStarted, SignInFailure> {
        let config = self
            .sources()
            .config(source_id)
            .ok_or_else(|| SignInFailure::UnknownSource(source_id.to_owned()))?;
        let mut request = sign_in_request(&config)?;
        let key = self.connection_key(source_id);
        let name = match connection {
            Some(name) => name.to_owned(),
            None => self
                .store
                .connections()
                .unwrap_or_default()
                .into_iter()
                .find(|c| is_oauth_record(c, &key) && c.is_default)
                .map_or_else(|| DEFAULT_SIGN_IN_NAME.to_owned(), |c| c.name),
        };
        if !crate::is_connection_name(&name) {
            return Err(SignInFailure::InvalidName(format!(
                "connection name {name:?} is not valid: use lower-case letters, digits, `-` and `_`, for example `personal` or `work`"
            )));
        }
        fill_client_secret(&self.connections, &config, &name, &mut request)?;
        let store = self.connections.token_store(&key, &name);
        let pending = capa_oauth::sign_in(request, store)
            .await
            .map_err(|e| SignInFailure::Failed(self.redact(&e.to_string())))?;
        let url = pending.authorization_url().to_owned();
        // A new try replaces the last one's inbox: its address is "another sign-in" now.
        let inbox = pending.inbox();
        self.sign_ins
            .inboxes()
            .insert(source_id.to_owned(), inbox.clone());
        self.sign_ins.set(
            source_id,
            Some(SignInState {
                connection: name.clone(),
                state: SignInPhase::Waiting,
                message: None,
                url: Some(url.clone()),
            }),
        );
        self.log_source(
            source_id,
            LogLevel::Info,
            &format!("sign-in started for connection `{name}`; waiting for the browser"),
        );
        let hub = Arc::downgrade(self);
        let id = source_id.to_owned();
        let connection = name.clone();
        tokio::spawn(async move {
            let outcome = pending.finish(SIGN_IN_WAIT).await;
            let Some(hub) = hub.upgrade() else { return };
            hub.sign_ins
                .inboxes()
                .retain(|_, kept| !kept.same_sign_in(&inbox));
            match outcome {
                Ok(_) => hub.signed_in(&id, &key, &connection).await,
                Err(e) => {
                    let message = hub.redact(&e.to_string());
                    hub.log_source(&id, LogLevel::Warn, &format!("sign-in failed: {message}"));
                    hub.sign_ins.set(
                        &id,
                        Some(SignInState {
                            connection,
                            state: SignInPhase::Failed,
                            message: Some(message),
                            url: None,
                        }),
                    );
                    hub.rebuild_catalog();
                }
            }
        });
        Ok(SignInStarted {
            connection: name,
            url,
        })
    }

    /// Whether `def` signs in with OAuth: it says so, it holds a sign-in, or its server asked
    /// for one (a 401) and it has no token of its own.
    pub(super) fn is_oauth(&self, def: &SourceDef) -> bool {
        self.is_oauth_among(def, &self.store.connections().unwrap_or_default())
    }

    /// [`Hub::is_oauth`] with the stored connections read already (a listing reads them once).
    fn is_oauth_among(&self, def: &SourceDef, connections: &[ConnectionRecord]) -> bool {
        let Origin::Config(config) = &def.origin else {
            return false;
        };
        let SourceTransport::Http { oauth, .. } = &config.transport else {
            return false;
        };
        if oauth.is_some() {
            return true;
        }
        let key = self.connection_key(&def.id);
        let signed = connections.iter().any(|c| is_oauth_record(c, &key));
        signed || self.asked_for_sign_in(&def.id)
    }

    fn asked_for_sign_in(&self, source_id: &str) -> bool {
        self.lock_upstreams()
            .get(&(source_id.to_owned(), None))
            .is_some_and(|u| u.status().state == UpstreamState::NeedsSignIn)
    }

    pub(super) fn oauth_status(
        &self,
        def: &SourceDef,
        key: &str,
        connections: &[ConnectionRecord],
    ) -> Option<OAuthStatus> {
        if !self.is_oauth_among(def, connections) {
            return None;
        }
        let upstreams = self.lock_upstreams().clone();
        let listed = connections
            .iter()
            .filter(|c| is_oauth_record(c, key))
            .map(|c| {
                let upstream = upstreams
                    .get(&(def.id.clone(), Some(c.name.clone())))
                    .or_else(|| {
                        c.is_default
                            .then(|| upstreams.get(&(def.id.clone(), None)))
                            .flatten()
                    });
                let refused =
                    upstream.is_some_and(|u| u.status().state == UpstreamState::NeedsSignIn);
                OAuthConnection {
                    name: c.name.clone(),
                    default: c.is_default,
                    signed_in: !refused && !self.sign_ins.is_signed_out(key, &c.name),
                }
            })
            .collect();
        Some(OAuthStatus {
            connections: listed,
            sign_in: self.sign_ins.get(&def.id),
        })
    }

    /// For a call of a tool the catalog does not have: when its namespace is a source that waits
    /// for a connection or a sign-in (and so lists no tools), that is the error to give, since
    /// the tool may well exist once the person acted.
    pub(crate) fn waiting_for_connection(&self, address: &str) -> Option<CallError> {
        let namespace = address.split('.').next()?;
        let status = self
            .sources()
            .list()
            .into_iter()
            .find(|s| s.id == namespace)?;
        if status.state != capa_domain::SourceState::NeedsConnection {
            return None;
        }
        let reason = status
            .last_error
            .unwrap_or_else(|| "it has no connection".to_owned());
        let message = if status.oauth.is_some() && !reason.starts_with(SIGN_IN_PREFIX) {
            format!("Sign in to `{namespace}` to continue: {reason}")
        } else {
            reason
        };
        Some(CallError::NeedsConnection {
            source_id: namespace.to_owned(),
            message,
        })
    }

    /// How to reach an OAuth source under a connection: its URL with the connection's token set.
    pub(super) fn oauth_spec(
        &self,
        def: &SourceDef,
        connection: Option<&str>,
    ) -> Result<UpstreamSpec, CallError> {
        let Origin::Config(config) = &def.origin else {
            return Err(Self::sign_in_needed(&def.id, connection));
        };
        let SourceTransport::Http { url, headers, .. } = &config.transport else {
            return Err(Self::sign_in_needed(&def.id, connection));
        };
        let key = self.connection_key(&def.id);
        let records = self.store.connections().unwrap_or_default();
        let record = records.iter().find(|c| {
            is_oauth_record(c, &key)
                && match connection {
                    Some(name) => c.name == name,
                    None => c.is_default,
                }
        });
        let Some(record) = record else {
            return Err(Self::sign_in_needed(&def.id, connection));
        };
        // Headers may name secrets too (an API key beside the sign-in): those of the same
        // connection, stored with `capa connections set`.
        let secrets = self
            .connections
            .resolve(&key, Some(&record.name))
            .ok()
            .flatten()
            .map(|r| r.secrets)
            .unwrap_or_default();
        let mut filled = BTreeMap::new();
        for (name, value) in headers {
            let value = capa_config::secret_ref::substitute(value, |secret| {
                secrets.get(secret).map(|s| s.expose().to_owned())
            })
            .map_err(|missing| CallError::NeedsConnection {
                source_id: def.id.clone(),
                message: format!(
                    "connection `{}` of `{}` has no secret `{missing}`: run `capa connections set {} {} --field {missing}`",
                    record.name, def.id, def.id, record.name
                ),
            })?;
            filled.insert(name.clone(), value);
        }
        Ok(UpstreamSpec {
            source_id: def.id.clone(),
            connection: Some(record.name.clone()),
            transport: UpstreamTransport::Http {
                url: url.clone(),
                headers: filled,
                oauth: Some(self.connections.token_store(&key, &record.name)),
            },
            call_timeout: self.config.upstream_timeout,
        })
    }

    fn sign_in_needed(source_id: &str, connection: Option<&str>) -> CallError {
        let name = connection.unwrap_or(DEFAULT_SIGN_IN_NAME);
        CallError::NeedsConnection {
            source_id: source_id.to_owned(),
            message: format!(
                "Sign in to `{source_id}` to continue: nobody has signed in as connection `{name}`; sign in from Capabilities (Sources, Sign in) or with `capa connections login {source_id} --connection {name}`"
            ),
        }
    }

    /// Marks the connections of `upstreams` (about to stop) whose server refused their sign-in,
    /// and drops the marks of connections signed in again since (their keychain entry holds
    /// another access token now).
    pub(super) async fn remember_signed_out(&self, upstreams: &[Arc<capa_upstream::Upstream>]) {
        let marked: Vec<(String, String)> = self.sign_ins.marks().keys().cloned().collect();
        for (key, name) in marked {
            let now = self
                .connections
                .token_store(&key, &name)
                .access_token()
                .await;
            let mut marks = self.sign_ins.marks();
            if marks.get(&(key.clone(), name.clone())) != now.as_ref() {
                marks.remove(&(key, name));
            }
        }
        for upstream in upstreams {
            let spec = upstream.spec();
            let (
                Some(name),
                UpstreamTransport::Http {
                    oauth: Some(used), ..
                },
            ) = (&spec.connection, &spec.transport)
            else {
                continue;
            };
            if upstream.status().state != UpstreamState::NeedsSignIn {
                continue;
            }
            let key = self.connection_key(&spec.source_id);
            let refused = used.access_token().await;
            let now = self
                .connections
                .token_store(&key, name)
                .access_token()
                .await;
            // Not when the keychain holds other tokens already: someone just signed in again.
            if let Some(refused) = refused.filter(|r| now.as_ref() == Some(r)) {
                self.sign_ins.marks().insert((key, name.clone()), refused);
            }
        }
    }

    /// Tokens of `connection` are stored: record the connection and start the source with it.
    async fn signed_in(&self, source_id: &str, key: &str, connection: &str) {
        let first = !self
            .store
            .connections()
            .unwrap_or_default()
            .iter()
            .any(|c| is_oauth_record(c, key) && c.is_default);
        if let Err(e) = self.connections.record_oauth(key, connection, first) {
            tracing::error!(source = %source_id, error = %e, "could not record a sign-in");
        }
        self.sign_ins.set(source_id, None);
        self.log_source(
            source_id,
            LogLevel::Info,
            &format!("signed in as connection `{connection}`"),
        );
        self.connections().reload().await;
    }
}

impl Connections<'_> {
    /// Finishes the waiting sign-in to `source_id` with the address a browser ended on, for a
    /// person who signed in on another device (or in a browser whose redirect to this
    /// computer's loopback port failed). The address's `state` must be this sign-in's, the
    /// check the loopback listener makes; the outcome is the sign-in's, as after a redirect.
    pub async fn finish_sign_in_from(
        self,
        source_id: &str,
        address: &str,
    ) -> Result<(), SignInFailure> {
        if self.hub.sources().config(source_id).is_none() {
            return Err(SignInFailure::UnknownSource(source_id.to_owned()));
        }
        let inbox = self.hub.sign_ins.inboxes().get(source_id).cloned();
        let inbox = inbox.ok_or_else(|| SignInFailure::NotWaiting(source_id.to_owned()))?;
        match inbox.deliver(address).await {
            Err(capa_oauth::PastedRedirectError::Over) => {
                Err(SignInFailure::NotWaiting(source_id.to_owned()))
            }
            other => Ok(other?),
        }
    }

    /// Waits until `source_id` is signed in as `connection` (else its default sign-in) and
    /// ready, at most `limit`; true when it is.
    pub async fn wait_signed_in(
        self,
        source_id: &str,
        connection: Option<&str>,
        limit: Duration,
    ) -> bool {
        let deadline = tokio::time::Instant::now() + limit;
        // A failure from before this wait (an earlier try) ends it only once a new try began.
        let phase = |hub: &Hub| hub.sign_ins.get(source_id).map(|s| s.state);
        let mut stale_failure = phase(self.hub) == Some(SignInPhase::Failed);
        loop {
            let ready = self.hub.sources().list().into_iter().any(|s| {
                s.id == source_id
                    // A named connection starts at its first call; the default one at once.
                    && (connection.is_some() || s.state == capa_domain::SourceState::Ready)
                    && s.oauth.is_some_and(|o| {
                        o.connections.iter().any(|c| {
                            c.signed_in
                                && match connection {
                                    Some(name) => c.name == name,
                                    None => c.default,
                                }
                        })
                    })
            });
            if ready {
                return true;
            }
            let now = phase(self.hub);
            stale_failure &= now != Some(SignInPhase::Waiting);
            let failed = now == Some(SignInPhase::Failed) && !stale_failure;
            if failed || tokio::time::Instant::now() >= deadline {
                return false;
            }
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    }
}
