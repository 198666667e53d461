//! `namespace: false` on a server: accepted where the file serves it alone (its only server with
//! the demo off, or a profile of that server alone), refused with the line and the fix elsewhere.

use std::path::Path;

use capa_config::parse_str;

const SERVER: &str =
    "  - id: weather\n    type: mcp\n    namespace: false\n    def: { command: weather-mcp }\n";

fn check(text: &str) -> Result<Vec<(String, bool)>, String> {
    let checked = parse_str(Path::new("/p/capabilities.yaml"), text).map_err(|e| e.to_string())?;
    Ok(checked
        .sources
        .iter()
        .map(|s| (s.id.clone(), s.bare_names))
        .collect())
}

#[test]
fn the_only_server_with_the_demo_off_keeps_its_own_names() {
    let text = format!("options: {{ demo: false }}\nservers:\n{SERVER}");
    assert_eq!(check(&text).expect("valid"), [("weather".to_owned(), true)]);
}

#[test]
fn a_profile_of_the_server_alone_is_enough() {
    let text = format!(
        "servers:\n{SERVER}  - id: other\n    type: mcp\n    def: {{ command: other-mcp }}\nprofiles:\n  weather-only:\n    toolExposure: direct\n    sources: [weather]\n"
    );
    let sources = check(&text).expect("valid");
    assert_eq!(
        sources,
        [("weather".to_owned(), true), ("other".to_owned(), false)]
    );
}

#[test]
fn served_next_to_other_sources_it_is_refused_at_its_line() {
    // The demo is on by default: two sources, nothing serves `weather` alone.
    let text = format!("servers:\n{SERVER}");
    let error = check(&text).expect_err("refused");
    assert!(error.contains("capabilities.yaml:4"), "{error}");
    assert!(error.contains("never serves it alone"), "{error}");
    assert!(error.contains("sources: [weather]"), "{error}");
    assert!(error.contains("options.demo: false"), "{error}");
}
