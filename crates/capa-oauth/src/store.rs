//! [`TokenStore`]: one OAuth connection's token set in the OS keychain, as rmcp's
//! `CredentialStore`.
//!
//! rmcp reads the credentials before every request, so the set is cached in memory after the
//! first read; every save (a sign-in, a refresh, a rotated refresh token) goes to the keychain
//! at once, before rmcp uses the new token: a refresh token that was used and not saved would be
//! lost with the hub (a peer lost sign-ins that way).

use std::fmt;
use std::sync::{Arc, Mutex, PoisonError};

use async_trait::async_trait;
use capa_secrets::{Keychain, Secret, SecretError, SecretKey};
use rmcp::transport::auth::{
    AuthError, CredentialRefreshGuard, CredentialStore, StoredCredentials,
};

use crate::token_set::{TokenSet, TokenSummary};

/// Called with every secret value the store reads or writes, so that the hub redacts it.
pub type OnSecret = Arc<dyn Fn(&str) + Send + Sync>;

/// The token set of one connection (`source key / connection / oauth`). Clones share the cache.
#[derive(Clone)]
pub struct TokenStore {
    inner: Arc<Inner>,
}

/// What the store knows of the keychain entry without reading it.
#[derive(Clone)]
enum Cache {
    Unread,
    Absent,
    Present(Box<TokenSet>),
}

struct Inner {
    keychain: Keychain,
    key: SecretKey,
    on_secret: OnSecret,
    cache: Mutex<Cache>,
    /// Refreshes of this connection one at a time: a rotated refresh token is spent by the first.
    refresh: Arc<tokio::sync::Mutex<()>>,
    /// Read-change-write of the stored set one at a time (a refresh's save, a step-up's scope),
    /// so that neither writes back a set read before the other's change. Not `refresh`: rmcp
    /// saves while it holds that one.
    writes: tokio::sync::Mutex<()>,
}

impl fmt::Debug for TokenStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TokenStore")
            .field("key", &self.inner.key)
            .finish_non_exhaustive()
    }
}

impl TokenStore {
    pub fn new(keychain: Keychain, key: SecretKey, on_secret: OnSecret) -> Self {
        Self {
            inner: Arc::new(Inner {
                keychain,
                key,
                on_secret,
                cache: Mutex::new(Cache::Unread),
                refresh: Arc::new(tokio::sync::Mutex::new(())),
                writes: tokio::sync::Mutex::new(()),
            }),
        }
    }

    pub fn key(&self) -> &SecretKey {
        &self.inner.key
    }

    /// What may be shown of the stored sign-in; `None` when nothing is stored.
    pub async fn summary(&self) -> Result<Option<TokenSummary>, SecretError> {
        Ok(self.read().await?.map(|set| set.summary()))
    }

    /// Whether the stored set holds tokens (false when absent or signed out).
    pub async fn is_signed_in(&self) -> bool {
        matches!(self.summary().await, Ok(Some(s)) if s.signed_in)
    }

    /// Keeps scopes a server asked for, for the next sign-in (which asks for them with the
    /// granted ones).
    pub async fn want_scopes(&self, scopes: Vec<String>) -> Result<(), SecretError> {
        self.change(|set| {
            for scope in scopes {
                if !set.wanted_scopes.contains(&scope) {
                    set.wanted_scopes.push(scope);
                }
            }
        })
        .await
    }

    /// The scopes a new sign-in should ask for after a step-up: the granted ones and those the
    /// server asked for; empty when no server asked for more.
    pub(crate) async fn step_up_scopes(&self) -> Vec<String> {
        let Ok(Some(set)) = self.read().await else {
            return Vec::new();
        };
        if set.wanted_scopes.is_empty() {
            return Vec::new();
        }
        let mut scopes = set
            .credentials
            .as_ref()
            .map(|c| c.granted_scopes.clone())
            .unwrap_or_default();
        for scope in set.wanted_scopes {
            if !scopes.contains(&scope) {
                scopes.push(scope);
            }
        }
        scopes
    }

    /// The access token the store holds now (cached, else read), when it holds one.
    pub async fn access_token(&self) -> Option<Secret> {
        let set = self.read().await.ok()??;
        let tokens = set.credentials?.token_response?;
        Some(Secret::new(
            oauth2::TokenResponse::access_token(&tokens)
                .secret()
                .clone(),
        ))
    }

    /// Deletes the token set and its parts from the keychain.
    pub async fn delete(&self) -> Result<(), SecretError> {
        let inner = Arc::clone(&self.inner);
        blocking(move || inner.keychain.delete_large(&inner.key)).await?;
        *self.cache() = Cache::Absent;
        Ok(())
    }

    pub(crate) async fn read(&self) -> Result<Option<TokenSet>, SecretError> {
        match self.cache().clone() {
            Cache::Present(set) => return Ok(Some(*set)),
            Cache::Absent => return Ok(None),
            Cache::Unread => {}
        }
        let inner = Arc::clone(&self.inner);
        let stored = blocking(move || inner.keychain.get_large(&inner.key)).await?;
        let set = match stored {
            None => None,
            Some(secret) => Some(serde_json::from_str::<TokenSet>(secret.expose()).map_err(
                |_| SecretError::Damaged {
                    account: format!(
                        "{}/{}/{}",
                        self.inner.key.source, self.inner.key.connection, self.inner.key.field
                    ),
                },
            )?),
        };
        if let Some(set) = &set {
            self.hand_over(set);
        }
        *self.cache() = set
            .clone()
            .map_or(Cache::Absent, |s| Cache::Present(Box::new(s)));
        Ok(set)
    }

    pub(crate) async fn write(&self, mut set: TokenSet) -> Result<(), SecretError> {
        set.v = TokenSet::VERSION;
        self.hand_over(&set);
        let json = serde_json::to_string(&set).map_err(|e| SecretError::Keychain {
            account: format!("{:?}", self.inner.key),
            message: format!("cannot encode the sign-in: {e}"),
        })?;
        let inner = Arc::clone(&self.inner);
        blocking(move || inner.keychain.set_large(&inner.key, &Secret::new(json))).await?;
        *self.cache() = Cache::Present(Box::new(set));
        Ok(())
    }

    /// Keeps a set in memory only, for a sign-in whose tokens are not there yet: the exchange's
    /// save then writes it whole.
    pub(crate) fn stage(&self, set: TokenSet) {
        *self.cache() = Cache::Present(Box::new(set));
    }

    async fn update(&self, change: impl FnOnce(&mut TokenSet)) -> Result<(), AuthError> {
        self.change(change).await.map_err(store_error)
    }

    /// Changes the stored set as the keychain holds it now (not as cached: another store of
    /// the same connection, or another process, may have written since), one change at a time.
    async fn change(&self, change: impl FnOnce(&mut TokenSet)) -> Result<(), SecretError> {
        let _one_at_a_time = self.inner.writes.lock().await;
        // A set staged by a sign-in in progress is not in the keychain yet: change that one.
        let staged = matches!(&*self.cache(), Cache::Present(set) if set.credentials.is_none());
        if !staged {
            *self.cache() = Cache::Unread;
        }
        let mut set = self.read().await?.unwrap_or_default();
        change(&mut set);
        self.write(set).await
    }

    fn hand_over(&self, set: &TokenSet) {
        for secret in set.secrets() {
            (self.inner.on_secret)(&secret);
        }
    }

    fn cache(&self) -> std::sync::MutexGuard<'_, Cache> {
        self.inner
            .cache
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }
}

#[async_trait]
impl CredentialStore for TokenStore {
    async fn load(&self) -> Result<Option<StoredCredentials>, AuthError> {
        Ok(self
            .read()
            .await
            .map_err(store_error)?
            .and_then(|set| set.credentials))
    }

    async fn save(&self, credentials: StoredCredentials) -> Result<(), AuthError> {
        self.update(|set| set.credentials = Some(credentials)).await
    }

    async fn clear(&self) -> Result<(), AuthError> {
        self.update(|set| set.credentials = None).await
    }

    /// A refused refresh signs the connection out: the tokens go, the client registration and
    /// metadata stay, so the next sign-in is one click.
    async fn on_refresh_token_rejected(
        &self,
        rejected: &StoredCredentials,
    ) -> Result<(), AuthError> {
        tracing::warn!(connection = ?self.inner.key, "the authorization server refused the refresh token; the connection is signed out");
        let client_id = rejected.client_id.clone();
        self.update(|set| {
            if let Some(credentials) = &mut set.credentials
                && credentials.client_id == client_id
            {
                credentials.token_response = None;
            }
        })
        .await
    }

    async fn acquire_refresh_guard(&self) -> Result<Option<CredentialRefreshGuard>, AuthError> {
        let guard = Arc::clone(&self.inner.refresh).lock_owned().await;
        Ok(Some(CredentialRefreshGuard::new(guard)))
    }
}

#[expect(
    clippy::needless_pass_by_value,
    reason = "used as a `map_err` function"
)]
fn store_error(e: SecretError) -> AuthError {
    AuthError::CredentialStoreError(e.to_string())
}

/// The keychain blocks (D-Bus on Linux): off the async workers.
async fn blocking<T: Send + 'static>(
    f: impl FnOnce() -> Result<T, SecretError> + Send + 'static,
) -> Result<T, SecretError> {
    tokio::task::spawn_blocking(f).await.unwrap_or_else(|e| {
        Err(SecretError::Unavailable(format!(
            "keychain task failed: {e}"
        )))
    })
}
