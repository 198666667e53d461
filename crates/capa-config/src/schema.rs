//! The JSON Schema of the capabilities file, generated from the Rust types so that it cannot drift.
//! `capa config schema` prints it; `docs/capabilities.schema.json` is the checked-in copy.

use crate::file::CapabilitiesFile;

/// The schema as pretty-printed JSON with a trailing newline.
pub fn json_schema() -> String {
    let schema = schemars::schema_for!(CapabilitiesFile);
    let mut text =
        serde_json::to_string_pretty(&schema).unwrap_or_else(|e| format!("{{\"error\": \"{e}\"}}"));
    text.push('\n');
    text
}
