//! Where requests go: `baseUrl` from the capabilities file, else the document's server (its
//! variables at their defaults), resolved against the document's own URL when relative.

use crate::error::LoadError;

/// A server entry's URL with each `{variable}` at its default.
pub(crate) fn expand(server: &oas3::spec::Server) -> String {
    let mut url = server.url.clone();
    for (name, variable) in &server.variables {
        url = url.replace(&format!("{{{name}}}"), &variable.default);
    }
    url
}

/// The absolute base URL (no trailing `/`) of `server`, or why there is none.
pub(crate) fn absolute(
    server: &str,
    document_url: Option<&str>,
    location: &str,
) -> Result<String, LoadError> {
    let no_base = |why: String| LoadError::NoBaseUrl {
        location: location.to_owned(),
        why,
    };
    if let Ok(url) = reqwest::Url::parse(server) {
        return match url.scheme() {
            "http" | "https" => Ok(server.trim_end_matches('/').to_owned()),
            other => Err(no_base(format!(
                "its server `{server}` is not http or https ({other})"
            ))),
        };
    }
    let Some(document_url) = document_url else {
        return Err(no_base(format!(
            "its server `{server}` is relative, and the document was read from a file"
        )));
    };
    let joined = reqwest::Url::parse(document_url)
        .and_then(|base| base.join(server))
        .map_err(|e| no_base(format!("its server `{server}` does not resolve: {e}")))?;
    Ok(joined.as_str().trim_end_matches('/').to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn relative_servers_resolve_against_the_document_url_only() {
        assert_eq!(
            absolute("https://api.example.com/v1/", None, "f")
                .ok()
                .as_deref(),
            Some("https://api.example.com/v1")
        );
        assert_eq!(
            absolute("/api", Some("http://127.0.0.1:8000/openapi.json"), "u")
                .ok()
                .as_deref(),
            Some("http://127.0.0.1:8000/api")
        );
        assert!(absolute("/api", None, "f").is_err());
        assert!(absolute("ftp://example.com", None, "f").is_err());
    }
}
