//! `oauth:` of a `url` server: resolved, with what is wrong with it reported at its line.

use super::Checker;
use crate::file::{OAuthSetting, ServerDef};
use crate::located::Located;
use crate::resolved::OAuthConfig;
use crate::secret_ref;

/// The `oauth:` of a `url` server as resolved, reporting what is wrong with it.
pub(super) fn check_oauth(
    checker: &mut Checker<'_>,
    def: &Located<ServerDef>,
    ok: &mut bool,
) -> Option<OAuthConfig> {
    let position = def.position;
    let oauth = match &def.oauth {
        None | Some(OAuthSetting::Enabled(false)) => None,
        Some(OAuthSetting::Enabled(true)) => Some(OAuthConfig::default()),
        Some(OAuthSetting::Client(client)) => Some(OAuthConfig {
            client_id: client.client_id.clone(),
            scopes: client.scopes.clone(),
            client_secret: match client.client_secret.as_deref() {
                None => None,
                Some(value) => {
                    let name = whole_secret_ref(value);
                    if name.is_none() {
                        checker.issue(
                            position,
                            "`oauth.clientSecret` must be a `${secret:NAME}` reference",
                            "store the secret with `capa connections set <source> <connection> --field NAME` and write `clientSecret: ${secret:NAME}`",
                        );
                        *ok = false;
                    }
                    name
                }
            },
            client_metadata_url: client.client_metadata_url.clone(),
        }),
    };
    if let Some(url) = oauth
        .as_ref()
        .and_then(|o| o.client_metadata_url.as_deref())
        && !is_metadata_document_address(url)
    {
        checker.issue(
            position,
            "`oauth.clientMetadataUrl` must be an https address with a path",
            "give the https URL where the hub's Client ID Metadata Document is published, like https://example.com/capabilities/client.json (docs/connections.md)",
        );
        *ok = false;
    }
    if oauth
        .as_ref()
        .is_some_and(|o| o.client_secret.is_some() && o.client_id.is_none())
    {
        checker.issue(
            position,
            "`oauth.clientSecret` needs `oauth.clientId`",
            "add the client id the secret belongs to",
        );
        *ok = false;
    }
    if oauth.is_some()
        && def
            .headers
            .keys()
            .any(|k| k.eq_ignore_ascii_case("authorization"))
    {
        checker.issue(
            position,
            "`oauth` and an `Authorization` header both give the server credentials",
            "keep `oauth` to sign in, or the header for a static token, not both",
        );
        *ok = false;
    }
    oauth
}

/// Whether `url` can be a client id of SEP-991: `https://`, a host, and a path other than `/`
/// (the authorization server fetches the document there), without a fragment.
fn is_metadata_document_address(url: &str) -> bool {
    let Some(rest) = url.strip_prefix("https://") else {
        return false;
    };
    let (host, path) = rest.split_once('/').unwrap_or((rest, ""));
    !host.is_empty()
        && !host.contains(['@', ' '])
        && !path.is_empty()
        && !url.contains(['#', ' '])
        // SEP-991 refuses dot segments: the document's address is compared as written.
        && !path.split(['/', '?']).any(|segment| segment == "." || segment == "..")
}

/// NAME when `value` is exactly `${secret:NAME}`.
fn whole_secret_ref(value: &str) -> Option<String> {
    let name = value.strip_prefix("${secret:")?.strip_suffix('}')?;
    secret_ref::is_secret_name(name).then(|| name.to_owned())
}
