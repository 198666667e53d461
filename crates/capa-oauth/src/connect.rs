//! The authorized HTTP client of an upstream: rmcp's `AuthClient` over the hub's own client,
//! set up from a stored sign-in without a new discovery.

use rmcp::transport::auth::{AuthClient, AuthError, AuthorizationManager, OAuthClientConfig};

use crate::store::TokenStore;

/// Why an OAuth upstream cannot be reached with its stored sign-in.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ConnectError {
    /// No tokens are stored, or the last refresh was refused: a person must sign in.
    #[error("nobody is signed in")]
    SignedOut,
    /// The keychain or the authorization server's metadata could not be read; trying again may
    /// work.
    #[error("{0}")]
    Unavailable(String),
}

/// `http` with the stored tokens of `store`: each request carries the access token, which is
/// refreshed (and the new set saved) before it expires and once after a 401.
pub async fn authorized_client<C>(
    http: C,
    url: &str,
    store: &TokenStore,
) -> Result<AuthClient<C>, ConnectError> {
    let set = match store.read().await {
        Ok(Some(set)) => set,
        // Damaged (parts that do not add up): nothing to use; a new sign-in replaces it.
        Ok(None) | Err(capa_secrets::SecretError::Damaged { .. }) => {
            return Err(ConnectError::SignedOut);
        }
        Err(e) => return Err(ConnectError::Unavailable(e.to_string())),
    };
    if !set.summary().signed_in {
        return Err(ConnectError::SignedOut);
    }
    let mut manager = AuthorizationManager::new(url)
        .await
        .map_err(|e| ConnectError::Unavailable(describe(&e)))?;
    manager.set_credential_store(store.clone());
    if let Some(metadata) = set.metadata.clone() {
        manager.set_metadata(metadata);
    }
    match manager.initialize_from_store().await {
        Ok(true) => {}
        Ok(false) => return Err(ConnectError::SignedOut),
        Err(e) => return Err(ConnectError::Unavailable(describe(&e))),
    }
    // `initialize_from_store` knows the client id only; a confidential client needs its secret
    // for the refresh.
    if let (Some(secret), Some(credentials)) = (&set.client_secret, &set.credentials) {
        let redirect = set.redirect_uri.clone().unwrap_or_else(|| url.to_owned());
        manager
            .configure_client(
                OAuthClientConfig::new(credentials.client_id.clone(), redirect)
                    .with_client_secret(secret.clone()),
            )
            .map_err(|e| ConnectError::Unavailable(describe(&e)))?;
    }
    Ok(AuthClient::new(http, manager))
}

/// rmcp's error in one sentence (its messages never carry a token).
pub(crate) fn describe(error: &AuthError) -> String {
    match error {
        AuthError::NoAuthorizationSupport => {
            "the server publishes no OAuth metadata (RFC 9728 / RFC 8414)".to_owned()
        }
        AuthError::PkceUnsupported => {
            "the authorization server does not support PKCE with S256, which the hub requires"
                .to_owned()
        }
        other => other.to_string(),
    }
}
