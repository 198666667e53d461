//! `oauth:` of a `url` server: `true`/`false`, a client registered beforehand, and what is refused.

use std::path::Path;

use capa_config::{OAuthConfig, SourceTransport, parse_str};

fn oauth_of(setting: &str) -> Result<Option<OAuthConfig>, String> {
    let text = format!(
        "servers:\n  - id: notes\n    type: mcp\n    def:\n      url: https://example.com/mcp\n      oauth: {setting}\n"
    );
    let checked = parse_str(Path::new("capabilities.yaml"), &text).map_err(|e| e.to_string())?;
    match &checked.sources[0].transport {
        SourceTransport::Http { oauth, .. } => Ok(oauth.clone()),
        _ => Err("not a url server".into()),
    }
}

#[test]
fn true_false_and_a_registered_client_are_read() {
    assert_eq!(oauth_of("true"), Ok(Some(OAuthConfig::default())));
    assert_eq!(oauth_of("false"), Ok(None));
    let client = oauth_of(
        "{ clientId: abc, scopes: [read, write], clientSecret: \"${secret:client_secret}\" }",
    )
    .expect("valid")
    .expect("oauth");
    assert_eq!(client.client_id.as_deref(), Some("abc"));
    assert_eq!(client.scopes, ["read", "write"]);
    assert_eq!(client.client_secret.as_deref(), Some("client_secret"));
}

#[test]
fn a_literal_client_secret_or_one_without_a_client_is_refused_with_its_fix() {
    let literal =
        oauth_of("{ clientId: abc, clientSecret: hunter2-literal }").expect_err("refused");
    assert!(
        literal.contains("must be a `${secret:NAME}` reference"),
        "{literal}"
    );
    assert!(
        !literal.contains("hunter2-literal"),
        "the value is not repeated: {literal}"
    );
    let orphan = oauth_of("{ clientSecret: \"${secret:s}\" }").expect_err("refused");
    assert!(orphan.contains("needs `oauth.clientId`"), "{orphan}");
    let unknown = oauth_of("{ clientID: abc }").expect_err("refused");
    assert!(unknown.contains("clientID"), "{unknown}");
    let word = oauth_of("yes-please").expect_err("refused");
    assert!(word.contains("oauth"), "{word}");
}

#[test]
fn a_client_metadata_document_address_is_read_and_must_be_https_with_a_path() {
    let client =
        oauth_of("{ clientMetadataUrl: \"https://example.com/capabilities/client.json\" }")
            .expect("valid")
            .expect("oauth");
    assert_eq!(
        client.client_metadata_url.as_deref(),
        Some("https://example.com/capabilities/client.json")
    );
    for bad in [
        "http://example.com/client.json",
        "https://example.com/",
        "https://example.com",
        "https://example.com/client.json#x",
        "https:///client.json",
        "https://example.com/a/../client.json",
        "https://example.com/./client.json",
        "client.json",
    ] {
        let error = oauth_of(&format!("{{ clientMetadataUrl: \"{bad}\" }}")).expect_err(bad);
        assert!(
            error.contains("`oauth.clientMetadataUrl` must be an https address with a path"),
            "{bad}: {error}"
        );
    }
}

#[test]
fn oauth_and_a_static_authorization_header_are_not_both_allowed() {
    let text = "servers:\n  - id: notes\n    type: mcp\n    def:\n      url: https://example.com/mcp\n      headers: { Authorization: \"Bearer ${secret:token}\" }\n      oauth: true\n";
    let error = parse_str(Path::new("capabilities.yaml"), text)
        .expect_err("refused")
        .to_string();
    assert!(error.contains("not both"), "{error}");
}

#[test]
fn oauth_is_for_url_servers_only() {
    let text = "servers:\n  - id: local\n    type: mcp\n    def:\n      command: node\n      oauth: true\n";
    let error = parse_str(Path::new("capabilities.yaml"), text)
        .expect_err("refused")
        .to_string();
    assert!(
        error.contains("`oauth` only applies to `url` servers"),
        "{error}"
    );
}
