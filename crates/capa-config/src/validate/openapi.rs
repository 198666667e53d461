//! `def:` of a `type: openapi` source: the document, the base URL and the credentials per
//! security scheme, with what is wrong reported at the `def:` line.

use std::path::Path;

use super::{Checker, check_placeholders};
use crate::file::ServerDef;
use crate::located::Located;
use crate::resolved::{SourceTransport, SpecLocation};

/// The transport of an `openapi` source, or `None` when its `def` has problems (reported).
pub(super) fn check_openapi_def(
    checker: &mut Checker<'_>,
    def: &Located<ServerDef>,
    base_dir: &Path,
) -> Option<SourceTransport> {
    let position = def.position;
    let mut ok = true;
    check_placeholders(checker, def, &mut ok);
    if def.command.is_some()
        || def.url.is_some()
        || !def.args.is_empty()
        || !def.env.is_empty()
        || def.cwd.is_some()
        || def.oauth.is_some()
    {
        checker.issue(
            position,
            "`command`, `args`, `env`, `cwd`, `url` and `oauth` do not apply to `type: openapi` sources",
            "give the document with `spec:` (and `baseUrl:` for where requests go); credentials go in `auth:` by security scheme",
        );
        ok = false;
    }
    let spec = match def.spec.as_deref().map(str::trim) {
        None | Some("") => {
            checker.issue(
                position,
                "an `openapi` source needs `spec`",
                "add `spec: ./openapi.yaml` (a path relative to this file) or `spec: https://…/openapi.json`",
            );
            ok = false;
            None
        }
        Some(text) if is_web_address(text) => Some(SpecLocation::Url(text.to_owned())),
        Some(text) if text.contains("://") => {
            checker.issue(
                position,
                format!("spec {text:?} is neither a file nor an http:// or https:// address"),
                "give a path relative to this file, or an http:// or https:// URL",
            );
            ok = false;
            None
        }
        Some(text) => Some(SpecLocation::File(base_dir.join(text))),
    };
    if let Some(base_url) = &def.base_url
        && !is_web_address(base_url)
    {
        checker.issue(
            position,
            format!("baseUrl {base_url:?} is not an http:// or https:// address"),
            "write where the API answers, for example `https://api.example.com/v1`",
        );
        ok = false;
    }
    for name in def.auth.keys() {
        if name.trim().is_empty() {
            checker.issue(
                position,
                "`auth` has an empty security scheme name",
                "name a scheme of the document's `components.securitySchemes`",
            );
            ok = false;
        }
    }
    if !ok {
        return None;
    }
    Some(SourceTransport::OpenApi {
        spec: spec?,
        base_url: def
            .base_url
            .as_ref()
            .map(|u| u.trim_end_matches('/').to_owned()),
        headers: def.headers.clone(),
        auth: def.auth.clone(),
    })
}

fn is_web_address(text: &str) -> bool {
    let lower = text.to_ascii_lowercase();
    (lower.starts_with("http://") || lower.starts_with("https://")) && text.len() > "https://".len()
}
