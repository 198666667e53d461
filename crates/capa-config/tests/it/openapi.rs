//! `type: openapi` sources: the document, the base URL and the credentials by security scheme,
//! and what is refused with its line and fix.

use std::collections::BTreeSet;
use std::path::Path;

use capa_config::{SourceTransport, SpecLocation, parse_str};

fn parse(def: &str) -> Result<SourceTransport, String> {
    let text = format!("servers:\n  - id: tasks\n    type: openapi\n    def: {def}\n");
    let checked = parse_str(Path::new("/p/capabilities.yaml"), &text).map_err(|e| e.to_string())?;
    Ok(checked.sources[0].transport.clone())
}

#[test]
fn a_file_or_url_document_with_base_url_and_auth_is_read() {
    let transport = parse(
        "{ spec: ./api/tasks.yaml, baseUrl: 'https://api.example.com/v1/', auth: { api_key: '${secret:key}' } }",
    )
    .expect("valid");
    let SourceTransport::OpenApi {
        spec,
        base_url,
        auth,
        ..
    } = &transport
    else {
        panic!("not openapi: {transport:?}");
    };
    assert_eq!(*spec, SpecLocation::File("/p/./api/tasks.yaml".into()));
    assert_eq!(base_url.as_deref(), Some("https://api.example.com/v1"));
    assert_eq!(
        auth.get("api_key").map(String::as_str),
        Some("${secret:key}")
    );
    let url = parse("{ spec: 'https://example.com/openapi.json' }").expect("valid");
    assert!(matches!(
        url,
        SourceTransport::OpenApi { spec: SpecLocation::Url(u), .. } if u == "https://example.com/openapi.json"
    ));
}

#[test]
fn its_secrets_are_those_of_auth_and_headers() {
    let text = "servers:\n  - id: tasks\n    type: openapi\n    def:\n      spec: a.json\n      auth: { bearer: '${secret:token}' }\n      headers: { X-Org: '${secret:org}' }\n";
    let checked = parse_str(Path::new("/p/capabilities.yaml"), text).expect("valid");
    assert_eq!(
        checked.sources[0].secret_names(),
        BTreeSet::from(["org".to_owned(), "token".to_owned()])
    );
}

#[test]
fn what_does_not_belong_is_refused_with_its_line_and_fix() {
    let no_spec = parse("{ baseUrl: 'https://x.example' }").expect_err("refused");
    assert!(no_spec.contains("capabilities.yaml:4:"), "{no_spec}");
    assert!(no_spec.contains("needs `spec`"), "{no_spec}");
    let command = parse("{ spec: a.json, command: node }").expect_err("refused");
    assert!(
        command.contains("do not apply to `type: openapi`"),
        "{command}"
    );
    let base = parse("{ spec: a.json, baseUrl: 'ftp://x' }").expect_err("refused");
    assert!(
        base.contains("not an http:// or https:// address"),
        "{base}"
    );
    let scheme = parse("{ spec: 'file:///etc/passwd' }").expect_err("refused");
    assert!(scheme.contains("neither a file nor"), "{scheme}");
    let placeholder = parse("{ spec: a.json, auth: { k: '${secret:}' } }").expect_err("refused");
    assert!(
        placeholder.contains("bad secret placeholder"),
        "{placeholder}"
    );
    // And the other way: OpenAPI's fields on an MCP server.
    let text = "servers:\n  - id: tasks\n    type: mcp\n    def: { url: 'https://x.example/mcp', spec: a.json }\n";
    let mcp = parse_str(Path::new("/p/capabilities.yaml"), text)
        .map(|_| ())
        .expect_err("refused")
        .to_string();
    assert!(mcp.contains("only apply to `type: openapi`"), "{mcp}");
}
