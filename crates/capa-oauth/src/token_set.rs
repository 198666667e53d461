//! What one OAuth connection keeps: rmcp's stored credentials plus what a restart needs to use
//! them without a new discovery (the authorization server's metadata, the client's secret and
//! redirect URI).

use std::time::{SystemTime, UNIX_EPOCH};

use oauth2::TokenResponse;
use rmcp::transport::auth::{AuthorizationMetadata, StoredCredentials};
use serde::{Deserialize, Serialize};

/// The keychain value of one OAuth connection (JSON, format version 1).
#[derive(Clone, Default, Serialize, Deserialize)]
pub(crate) struct TokenSet {
    pub v: u32,
    pub credentials: Option<StoredCredentials>,
    pub metadata: Option<AuthorizationMetadata>,
    /// A client secret: of a configured client, or one that registration returned.
    pub client_secret: Option<String>,
    pub redirect_uri: Option<String>,
    /// Scopes a server asked for beyond the granted ones (a 403 `insufficient_scope`): the
    /// next sign-in asks for them with the granted ones.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub wanted_scopes: Vec<String>,
}

impl TokenSet {
    pub(crate) const VERSION: u32 = 1;

    /// Every secret value in the set, for the redactor.
    pub(crate) fn secrets(&self) -> Vec<String> {
        let mut out = Vec::new();
        if let Some(tokens) = self
            .credentials
            .as_ref()
            .and_then(|c| c.token_response.as_ref())
        {
            out.push(tokens.access_token().secret().clone());
            if let Some(refresh) = tokens.refresh_token() {
                out.push(refresh.secret().clone());
            }
            // Vendor fields named like secrets (an OpenID `id_token`, a second token) are secrets
            // too; others (`team_name`) are left alone, or common words would be redacted.
            for (name, value) in &tokens.extra_fields().0 {
                let name = name.to_ascii_lowercase();
                let secret_like = ["token", "secret", "key", "code", "password"]
                    .iter()
                    .any(|word| name.contains(word));
                if let (true, Some(text)) = (secret_like, value.as_str()) {
                    out.push(text.to_owned());
                }
            }
        }
        out.extend(self.client_secret.clone());
        out
    }

    pub(crate) fn summary(&self) -> TokenSummary {
        let credentials = self.credentials.as_ref();
        let tokens = credentials.and_then(|c| c.token_response.as_ref());
        let expires_at_ms = tokens.and_then(|t| {
            let lifetime = t.expires_in()?;
            let received = credentials?.token_received_at?;
            Some(
                received
                    .saturating_add(lifetime.as_secs())
                    .saturating_mul(1000),
            )
        });
        TokenSummary {
            signed_in: tokens.is_some(),
            refreshable: tokens.is_some_and(|t| t.refresh_token().is_some()),
            expires_at_ms,
            scopes: credentials
                .map(|c| c.granted_scopes.clone())
                .unwrap_or_default(),
            issuer: credentials.and_then(|c| c.issuer.clone()),
        }
    }
}

/// The secret values of a stored token set (its keychain text), for a redactor that loads every
/// stored secret at start. Text that is not a token set has none.
pub fn secrets_in(stored: &str) -> Vec<String> {
    serde_json::from_str::<TokenSet>(stored)
        .map(|set| set.secrets())
        .unwrap_or_default()
}

/// What may be shown of a connection's sign-in: never a token.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TokenSummary {
    /// Whether the connection holds tokens; false once a refresh was refused (signed out).
    pub signed_in: bool,
    /// Whether it can renew its access token without the person.
    pub refreshable: bool,
    /// When the access token expires (Unix ms), when the server said.
    pub expires_at_ms: Option<u64>,
    pub scopes: Vec<String>,
    pub issuer: Option<String>,
}

impl TokenSummary {
    /// "expires in 59 min", "expired", or nothing when the server gave no lifetime.
    pub fn expiry_text(&self) -> Option<String> {
        let at = self.expires_at_ms?;
        let now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX));
        Some(if at <= now {
            "access token expired".to_owned()
        } else {
            let minutes = (at - now) / 60_000;
            if minutes == 0 {
                "access token expires in under a minute".to_owned()
            } else {
                format!("access token expires in {minutes} min")
            }
        })
    }
}
