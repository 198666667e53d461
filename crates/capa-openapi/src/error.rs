//! Why a document could not be served, in sentences that name the document and the fix.

/// Why a document could not be served. Each message names the document and says what to do.
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum LoadError {
    #[error("cannot read the OpenAPI document {location}: {reason}")]
    Read { location: String, reason: String },
    #[error("cannot fetch the OpenAPI document {url}: {reason}")]
    Fetch { url: String, reason: String },
    #[error("the OpenAPI document {location} is larger than the {} MiB the hub reads", limit / (1024 * 1024))]
    TooLarge { location: String, limit: usize },
    #[error("the OpenAPI document {location} cannot be used: {reason}")]
    Invalid { location: String, reason: String },
    #[error(
        "the OpenAPI document {location} says no usable address for requests ({why}); set `baseUrl:` in the source's `def`"
    )]
    NoBaseUrl { location: String, why: String },
    #[error(
        "`auth` names the security scheme `{scheme}`, which the OpenAPI document {location} does not declare (it declares {declared})"
    )]
    UnknownScheme {
        location: String,
        scheme: String,
        declared: String,
    },
    #[error(
        "`auth` names the security scheme `{scheme}` of {location}, a mutual-TLS scheme, which the hub cannot use"
    )]
    UnsupportedScheme { location: String, scheme: String },
    #[error("cannot set up the HTTP client: {0}")]
    Client(String),
}

impl LoadError {
    pub(crate) fn read(location: &str, error: &std::io::Error) -> Self {
        let reason = match error.kind() {
            std::io::ErrorKind::NotFound => {
                "no such file (a relative `spec:` is relative to the capabilities file)".to_owned()
            }
            _ => error.to_string(),
        };
        Self::Read {
            location: location.to_owned(),
            reason,
        }
    }
}
