//! Sign-in on a team hub: the hub as an OAuth 2.1 protected resource (the MCP authorization
//! spec) whose authorization server is the organisation's `OpenID` provider.
//!
//! [`SignIn::discover`] reads the provider's metadata (`/.well-known/openid-configuration`)
//! and its published keys; [`SignIn::verify`] checks a bearer token as RFC 9068 asks of a
//! resource server: a JWT signed by one of those keys (RS256, PS256, ES256 or `EdDSA`), issued by
//! that provider, whose audience includes the hub's resource URL (RFC 8707), and not expired.
//! A token naming a key the hub has not seen makes it read the keys again (a provider rotates
//! them), at most once per [`KEYS_REREAD_AFTER`], so forged key ids cannot make it hammer the
//! provider. [`SignIn::resource_metadata`] is the document the hub serves at
//! `/.well-known/oauth-protected-resource` (RFC 9728) so that clients find the provider.

mod jwk;
mod token;

use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use serde::Deserialize;
use tokio::sync::RwLock;

pub use jwk::Algorithm;
pub use token::{CLOCK_LEEWAY_SECS, Person, Refusal};

/// The least time between two reads of the provider's keys caused by unknown key ids.
pub const KEYS_REREAD_AFTER: Duration = Duration::from_secs(30);
/// How long the hub waits for the provider's metadata or keys.
const FETCH_TIMEOUT: Duration = Duration::from_secs(10);
/// The largest metadata or key set document read.
const MAX_DOCUMENT_BYTES: usize = 1024 * 1024;

/// Why sign-in could not be set up, or a token not checked for a reason that is not the
/// token's.
#[derive(Debug, thiserror::Error)]
pub enum SetupError {
    #[error("could not reach the identity provider at {url}: {reason}")]
    Unreachable { url: String, reason: String },
    #[error("the {what} `{value}` is not an http:// or https:// URL")]
    NotAUrl { what: &'static str, value: String },
    #[error("the identity provider's {what} at {url} is not valid: {reason}")]
    Invalid {
        what: &'static str,
        url: String,
        reason: String,
    },
}

/// What the hub trusts: the provider, and the URL clients reach the hub at.
#[derive(Debug, Clone)]
pub struct Settings {
    /// The provider's issuer identifier, exactly as its tokens name it (`iss`).
    pub issuer: String,
    /// The hub's MCP endpoint as clients reach it (behind HAProxy, TLS), e.g.
    /// `https://capa.example.com/mcp`: the audience every token must name.
    pub resource: String,
}

#[derive(Deserialize)]
struct ProviderMetadata {
    issuer: String,
    jwks_uri: String,
}

/// The provider's keys, and when they were last read.
struct Keys {
    keys: Vec<jwk::Key>,
    read_at: Instant,
}

/// Sign-in against one provider, shared by every request of the hub.
pub struct SignIn {
    settings: Settings,
    jwks_uri: String,
    http: reqwest::Client,
    keys: RwLock<Keys>,
}

impl std::fmt::Debug for SignIn {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SignIn")
            .field("issuer", &self.settings.issuer)
            .field("resource", &self.settings.resource)
            .finish_non_exhaustive()
    }
}

async fn fetch(
    http: &reqwest::Client,
    url: &str,
    what: &'static str,
) -> Result<Vec<u8>, SetupError> {
    let unreachable = |e: reqwest::Error| SetupError::Unreachable {
        url: url.to_owned(),
        reason: e.to_string(),
    };
    let response = http.get(url).send().await.map_err(unreachable)?;
    if !response.status().is_success() {
        return Err(SetupError::Invalid {
            what,
            url: url.to_owned(),
            reason: format!("it answered HTTP {}", response.status()),
        });
    }
    let body = response.bytes().await.map_err(unreachable)?;
    if body.len() > MAX_DOCUMENT_BYTES {
        return Err(SetupError::Invalid {
            what,
            url: url.to_owned(),
            reason: format!("it is larger than {MAX_DOCUMENT_BYTES} bytes"),
        });
    }
    Ok(body.to_vec())
}

async fn read_keys(http: &reqwest::Client, jwks_uri: &str) -> Result<Vec<jwk::Key>, SetupError> {
    let body = fetch(http, jwks_uri, "key set").await?;
    jwk::parse_set(&body).ok_or_else(|| SetupError::Invalid {
        what: "key set",
        url: jwks_uri.to_owned(),
        reason: "it is not a JWK Set (`{\"keys\": [...]}`)".into(),
    })
}

fn now_secs() -> f64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64())
}

impl SignIn {
    /// Reads the provider's metadata and keys. The metadata's `issuer` must be the one
    /// configured, character for character (`OpenID` Connect Discovery, section 4.3).
    pub async fn discover(settings: Settings) -> Result<Arc<Self>, SetupError> {
        for (what, url) in [
            ("issuer", &settings.issuer),
            ("resource", &settings.resource),
        ] {
            if !(url.starts_with("https://") || url.starts_with("http://")) {
                return Err(SetupError::NotAUrl {
                    what,
                    value: url.clone(),
                });
            }
        }
        let http = reqwest::Client::builder()
            .timeout(FETCH_TIMEOUT)
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .map_err(|e| SetupError::Unreachable {
                url: settings.issuer.clone(),
                reason: e.to_string(),
            })?;
        let url = format!(
            "{}/.well-known/openid-configuration",
            settings.issuer.trim_end_matches('/')
        );
        let body = fetch(&http, &url, "metadata").await?;
        let metadata: ProviderMetadata =
            serde_json::from_slice(&body).map_err(|e| SetupError::Invalid {
                what: "metadata",
                url: url.clone(),
                reason: e.to_string(),
            })?;
        if metadata.issuer != settings.issuer {
            return Err(SetupError::Invalid {
                what: "metadata",
                url,
                reason: format!(
                    "it names the issuer `{}`, not `{}` as configured",
                    metadata.issuer, settings.issuer
                ),
            });
        }
        let keys = read_keys(&http, &metadata.jwks_uri).await?;
        tracing::info!(
            issuer = %settings.issuer,
            keys = keys.len(),
            "sign-in: the identity provider's keys are read"
        );
        Ok(Arc::new(Self {
            settings,
            jwks_uri: metadata.jwks_uri,
            http,
            keys: RwLock::new(Keys {
                keys,
                read_at: Instant::now(),
            }),
        }))
    }

    pub fn settings(&self) -> &Settings {
        &self.settings
    }

    /// Checks a bearer token; the person it names when it passes.
    pub async fn verify(&self, token: &str) -> Result<Person, Refusal> {
        let parsed = token::parse(token)?;
        let expected = token::Expected {
            issuer: &self.settings.issuer,
            audience: &self.settings.resource,
            now: now_secs(),
        };
        let first = token::check(&parsed, &self.keys.read().await.keys, &expected);
        if first != Err(Refusal::UnknownKey) {
            return first;
        }
        // A key the hub has not seen: the provider may have rotated its keys. They are read
        // without holding the lock, so that other requests go on with the keys known.
        let due = {
            let mut keys = self.keys.write().await;
            let due = keys.read_at.elapsed() >= KEYS_REREAD_AFTER;
            if due {
                keys.read_at = Instant::now();
            }
            due
        };
        if due {
            match read_keys(&self.http, &self.jwks_uri).await {
                Ok(fresh) => self.keys.write().await.keys = fresh,
                Err(e) => {
                    tracing::warn!("sign-in: reading the provider's keys again failed: {e}");
                }
            }
        }
        token::check(&parsed, &self.keys.read().await.keys, &expected)
    }

    /// The Protected Resource Metadata document (RFC 9728) of the hub.
    pub fn resource_metadata(&self) -> serde_json::Value {
        serde_json::json!({
            "resource": self.settings.resource,
            "authorization_servers": [self.settings.issuer],
            "bearer_methods_supported": ["header"],
            "resource_name": "Capabilities team hub",
        })
    }

    /// Where clients read [`SignIn::resource_metadata`], as RFC 9728 builds it from the
    /// resource URL: `/.well-known/oauth-protected-resource` inserted before its path.
    pub fn resource_metadata_url(&self) -> String {
        metadata_url(&self.settings.resource)
    }
}

/// `https://h.example/mcp` → `https://h.example/.well-known/oauth-protected-resource/mcp`.
fn metadata_url(resource: &str) -> String {
    let (scheme, rest) = resource.split_once("://").unwrap_or(("https", resource));
    let (authority, path) = rest.split_once('/').map_or((rest, ""), |(a, p)| (a, p));
    let path = path.trim_end_matches('/');
    if path.is_empty() {
        format!("{scheme}://{authority}/.well-known/oauth-protected-resource")
    } else {
        format!("{scheme}://{authority}/.well-known/oauth-protected-resource/{path}")
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_metadata_url_goes_before_the_resource_path() {
        assert_eq!(
            super::metadata_url("https://capa.example.com/mcp"),
            "https://capa.example.com/.well-known/oauth-protected-resource/mcp"
        );
        assert_eq!(
            super::metadata_url("http://127.0.0.1:4400/"),
            "http://127.0.0.1:4400/.well-known/oauth-protected-resource"
        );
    }
}
