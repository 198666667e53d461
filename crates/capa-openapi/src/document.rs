//! Reading an OpenAPI document: from a file or a URL, bounded, JSON or YAML, 3.0 or 3.1, into
//! `oas3`'s typed form.

use std::path::Path;

use crate::error::LoadError;
use crate::upgrade;

/// The largest document read (GitHub's REST description is 13 MB, with its `$ref`s kept).
pub const MAX_DOCUMENT_BYTES: usize = 64 * 1024 * 1024;

/// A document as read: the typed form and the version it declared.
pub(crate) struct Document {
    pub spec: oas3::Spec,
    /// `openapi:` as written (`3.0.3`, `3.1.0`).
    pub version: String,
}

/// Reads the file at `path`.
pub(crate) async fn read_file(path: &Path) -> Result<Vec<u8>, LoadError> {
    let shown = path.display().to_string();
    let metadata = tokio::fs::metadata(path)
        .await
        .map_err(|e| LoadError::read(&shown, &e))?;
    if metadata.len() > MAX_DOCUMENT_BYTES as u64 {
        return Err(LoadError::TooLarge {
            location: shown,
            limit: MAX_DOCUMENT_BYTES,
        });
    }
    tokio::fs::read(path)
        .await
        .map_err(|e| LoadError::read(&shown, &e))
}

/// Fetches the document at `url` within `timeout` (connecting and reading it whole), refusing
/// more than [`MAX_DOCUMENT_BYTES`]: a server that accepts and never answers must not keep the
/// source starting.
pub(crate) async fn fetch(
    client: &reqwest::Client,
    url: &str,
    timeout: std::time::Duration,
) -> Result<Vec<u8>, LoadError> {
    let fail = |reason: String| LoadError::Fetch {
        url: url.to_owned(),
        reason,
    };
    let mut response = client
        .get(url)
        .timeout(timeout)
        .header(
            reqwest::header::ACCEPT,
            "application/json, application/yaml, */*",
        )
        .send()
        .await
        .map_err(|e| fail(crate::call::transport_reason(&e)))?;
    let status = response.status();
    if !status.is_success() {
        return Err(fail(format!("it answered HTTP {status}")));
    }
    let mut body = Vec::new();
    while let Some(chunk) = response
        .chunk()
        .await
        .map_err(|e| fail(crate::call::transport_reason(&e)))?
    {
        if body.len() + chunk.len() > MAX_DOCUMENT_BYTES {
            return Err(LoadError::TooLarge {
                location: url.to_owned(),
                limit: MAX_DOCUMENT_BYTES,
            });
        }
        body.extend_from_slice(&chunk);
    }
    Ok(body)
}

/// The YAML reader's bounds for a document: as deep as JSON reads (128 levels, so that what
/// follows never recurses further), and nodes enough for the largest public descriptions
/// (the reader's defaults, made for configuration files, refuse them). The 64 MiB file bound
/// keeps the rest in check.
fn yaml_options() -> serde_saphyr::Options {
    let mut budget = serde_saphyr::Budget::default();
    budget.max_depth = 128;
    budget.max_nodes = 20_000_000;
    budget.max_events = 80_000_000;
    let mut options = serde_saphyr::Options::default();
    options.budget = Some(budget);
    options
}

/// Parses `bytes` (JSON, or YAML when it does not start with `{`) as an OpenAPI 3.0 or 3.1
/// document. A 3.0 document's schemas are rewritten in 3.1's form first.
pub(crate) fn parse(location: &str, bytes: &[u8]) -> Result<Document, LoadError> {
    let invalid = |reason: String| LoadError::Invalid {
        location: location.to_owned(),
        reason,
    };
    let text = std::str::from_utf8(bytes).map_err(|_| invalid("it is not UTF-8 text".into()))?;
    let mut value: serde_json::Value = if text.trim_start().starts_with('{') {
        serde_json::from_str(text).map_err(|e| invalid(format!("it is not valid JSON: {e}")))?
    } else {
        serde_saphyr::from_str_with_options(text, yaml_options())
            .map_err(|e| invalid(format!("it is neither JSON nor valid YAML: {e}")))?
    };
    let version = match (value.get("openapi"), value.get("swagger")) {
        (Some(serde_json::Value::String(v)), _) => v.clone(),
        (None, Some(_)) => {
            return Err(invalid(
                "it is a Swagger 2.0 document; convert it to OpenAPI 3 first (for example with `npx swagger2openapi`)".into(),
            ));
        }
        _ => return Err(invalid("it has no `openapi:` version".into())),
    };
    if version.starts_with("3.0") {
        upgrade::to_3_1(&mut value);
    } else if !version.starts_with("3.1") {
        return Err(invalid(format!(
            "it declares OpenAPI {version}; the hub reads 3.0 and 3.1"
        )));
    }
    let spec: oas3::Spec = serde_json::from_value(value)
        .map_err(|e| invalid(format!("it is not a valid OpenAPI document: {e}")))?;
    Ok(Document { spec, version })
}
