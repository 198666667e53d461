use std::path::Path;

use capa_config::{ExposureMode, SourceTransport, ToolSelection, parse_str};

#[test]
fn a_complete_file_parses_into_sources() {
    let text = r#"
servers:
  - id: github
    type: mcp
    expose: except
    tools: [delete_repo, force_push]
    def:
      url: https://example.com/mcp
      headers:
        Authorization: "Bearer ${secret:token}"
  - id: files
    type: mcp
    def:
      command: npx
      args: ["-y", "@modelcontextprotocol/server-filesystem", "/tmp"]
      cwd: sub
options:
  toolExposure: expose-all
  upstreamTimeoutMs: 5000
  demo: false
"#;
    let checked = parse_str(Path::new("/p/capabilities.yaml"), text).expect("valid file");
    assert_eq!(checked.exposure, Some(ExposureMode::ExposeAll));
    assert_eq!(checked.demo, Some(false));
    assert_eq!(checked.upstream_timeout.map(|d| d.as_millis()), Some(5000));
    let github = &checked.sources[0];
    assert_eq!(github.id, "github");
    assert!(matches!(&github.selection, ToolSelection::Except(names) if names.len() == 2));
    assert_eq!(
        github.secret_names().into_iter().collect::<Vec<_>>(),
        vec!["token"]
    );
    let files = &checked.sources[1];
    assert!(matches!(
        &files.transport,
        SourceTransport::Stdio { cwd: Some(cwd), .. } if cwd == Path::new("/p/sub")
    ));
}

#[test]
fn top_level_tool_entries_replace_the_servers_policy_with_a_warning() {
    let text = r#"
servers:
  - id: github
    type: mcp
    expose: all
    def: { url: "http://127.0.0.1:1/mcp" }
tools:
  - server: github
    tool: create_issue
  - id: find
    server: github
    tool: search_issues
"#;
    let checked = parse_str(Path::new("c.yaml"), text).expect("valid file");
    let ToolSelection::Explicit(tools) = &checked.sources[0].selection else {
        panic!(
            "explicit tools expected, got {:?}",
            checked.sources[0].selection
        );
    };
    let ids: Vec<_> = tools
        .iter()
        .map(|t| (t.id.as_str(), t.remote.as_str()))
        .collect();
    assert_eq!(
        ids,
        vec![("create_issue", "create_issue"), ("find", "search_issues")]
    );
    assert_eq!(checked.warnings.len(), 1, "{:?}", checked.warnings);
    assert!(checked.warnings[0].contains("expose` is ignored"));
}

#[test]
fn every_exposure_value_parses() {
    for (value, mode) in [
        ("code", ExposureMode::Code),
        ("expose-all", ExposureMode::ExposeAll),
        ("on-demand", ExposureMode::OnDemand),
        ("search", ExposureMode::Search),
        ("none", ExposureMode::None),
    ] {
        let text = format!("options:\n  toolExposure: {value}\n");
        let checked = parse_str(Path::new("c.yaml"), &text).expect("valid");
        assert_eq!(checked.exposure, Some(mode));
    }
}

#[test]
fn an_empty_file_is_an_empty_configuration() {
    let checked = parse_str(Path::new("c.yaml"), "").expect("valid");
    assert!(checked.sources.is_empty());
}

#[test]
fn disabled_servers_are_checked_but_not_started() {
    let text =
        "servers:\n  - id: off\n    type: mcp\n    disabled: true\n    def: { command: x }\n";
    let checked = parse_str(Path::new("c.yaml"), text).expect("valid");
    assert!(checked.sources.is_empty());
}

#[test]
fn the_checked_in_json_schema_is_current() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/capabilities.schema.json");
    let on_disk = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        on_disk == capa_config::json_schema(),
        "docs/capabilities.schema.json is stale: run `cargo run -p capa-cli -- config schema > docs/capabilities.schema.json`"
    );
}
