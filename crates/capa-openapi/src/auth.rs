//! Credentials by security scheme: the document says how each scheme travels (`apiKey` in a
//! header, the query or a cookie; `http` bearer or basic), the source's `auth:` gives the value.

use std::collections::BTreeMap;
use std::fmt;

use oas3::spec::SecurityScheme;

use crate::error::LoadError;

/// How one credential goes on a request.
#[derive(Clone)]
pub(crate) enum Credential {
    Header {
        name: String,
        value: String,
    },
    Query {
        name: String,
        value: String,
    },
    Cookie {
        name: String,
        value: String,
    },
    Bearer(String),
    Basic {
        user: String,
        password: String,
    },
    /// Another `http` scheme (`Digest` is not computed): `Authorization: <scheme> <value>`.
    Scheme {
        scheme: String,
        value: String,
    },
}

impl fmt::Debug for Credential {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Never the value.
        let kind = match self {
            Self::Header { name, .. } => format!("header {name}"),
            Self::Query { name, .. } => format!("query {name}"),
            Self::Cookie { name, .. } => format!("cookie {name}"),
            Self::Bearer(_) => "bearer".to_owned(),
            Self::Basic { .. } => "basic".to_owned(),
            Self::Scheme { scheme, .. } => scheme.clone(),
        };
        f.write_str(&kind)
    }
}

/// The credentials of a source, by scheme name.
#[derive(Debug, Default)]
pub(crate) struct Credentials {
    by_scheme: BTreeMap<String, Credential>,
}

impl Credentials {
    /// Pairs each `auth:` entry with the document's scheme of that name.
    pub(crate) fn new(
        spec: &oas3::Spec,
        auth: &BTreeMap<String, String>,
        location: &str,
    ) -> Result<Self, LoadError> {
        let schemes = spec.components.as_ref().map(|c| &c.security_schemes);
        let mut by_scheme = BTreeMap::new();
        for (name, value) in auth {
            let scheme = schemes
                .and_then(|s| s.get(name))
                .and_then(|s| s.resolve(spec).ok());
            let Some(scheme) = scheme else {
                let declared: Vec<String> = schemes
                    .map(|s| s.keys().map(|k| format!("`{k}`")).collect())
                    .unwrap_or_default();
                return Err(LoadError::UnknownScheme {
                    location: location.to_owned(),
                    scheme: name.clone(),
                    declared: if declared.is_empty() {
                        "none".to_owned()
                    } else {
                        declared.join(", ")
                    },
                });
            };
            if matches!(scheme, SecurityScheme::MutualTls { .. }) {
                return Err(LoadError::UnsupportedScheme {
                    location: location.to_owned(),
                    scheme: name.clone(),
                });
            }
            by_scheme.insert(name.clone(), credential(&scheme, value.clone()));
        }
        Ok(Self { by_scheme })
    }

    /// The credentials of the first alternative of `security` that this source can meet in
    /// full; none when it meets none (the API then says what it wants).
    pub(crate) fn for_operation(&self, security: &[Vec<String>]) -> Vec<&Credential> {
        security
            .iter()
            .find(|alternative| alternative.iter().all(|s| self.by_scheme.contains_key(s)))
            .map(|alternative| {
                alternative
                    .iter()
                    .filter_map(|s| self.by_scheme.get(s))
                    .collect()
            })
            .unwrap_or_default()
    }

    /// Whether this source can meet `security` (always, when it asks nothing).
    pub(crate) fn meets(&self, security: &[Vec<String>]) -> bool {
        security.is_empty()
            || security
                .iter()
                .any(|alternative| alternative.iter().all(|s| self.by_scheme.contains_key(s)))
    }
}

fn credential(scheme: &SecurityScheme, value: String) -> Credential {
    match scheme {
        SecurityScheme::ApiKey { name, location, .. } => {
            let name = name.clone();
            match location.as_str() {
                "query" => Credential::Query { name, value },
                "cookie" => Credential::Cookie { name, value },
                _ => Credential::Header { name, value },
            }
        }
        SecurityScheme::Http { scheme, .. } => match scheme.to_ascii_lowercase().as_str() {
            "bearer" => Credential::Bearer(value),
            "basic" => {
                let (user, password) = value.split_once(':').unwrap_or((value.as_str(), ""));
                Credential::Basic {
                    user: user.to_owned(),
                    password: password.to_owned(),
                }
            }
            _ => Credential::Scheme {
                scheme: scheme.clone(),
                value,
            },
        },
        // A token of an OAuth or OpenID Connect sign-in made elsewhere, sent as a bearer token.
        _ => Credential::Bearer(value),
    }
}
