//! The real tool catalogs under `tests/fixtures/catalogs/` (tool definitions published by real
//! MCP servers, one JSON object a line), for tests and benchmarks. Not part of the product.

use std::path::PathBuf;

use serde::Deserialize;
use serde_json::Value;

/// The catalog files, smallest first.
pub const FILES: [&str; 4] = ["github", "livemcpbench", "docker-registry", "toucan-live"];

/// One tool of a catalog, as published.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CatalogTool {
    pub source: String,
    pub name: String,
    #[serde(default)]
    pub description: Option<String>,
    #[serde(default)]
    pub input_schema: Value,
    #[serde(default)]
    pub output_schema: Option<Value>,
    #[serde(default)]
    pub annotations: Option<Value>,
}

impl CatalogTool {
    pub fn address(&self) -> String {
        format!("{}.{}", self.source, self.name)
    }

    pub fn title(&self) -> Option<&str> {
        self.annotations.as_ref()?.get("title")?.as_str()
    }
}

/// Where the catalogs are: `CAPA_CATALOGS`, or the repository's `tests/fixtures/catalogs`: where
/// this crate was built, else under the current directory. Cargo reuses a build from a shared
/// target directory in another checkout of the same tree (CI's clean clones share one), and the
/// checkout it was built in may be gone.
pub fn dir() -> PathBuf {
    if let Some(dir) = std::env::var_os("CAPA_CATALOGS") {
        return PathBuf::from(dir);
    }
    let built_in = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/catalogs");
    if built_in.is_dir() {
        return built_in;
    }
    PathBuf::from("tests/fixtures/catalogs")
}

/// The tools of one catalog file (`"github"` for `github.jsonl`), in file order.
pub fn load(name: &str) -> Result<Vec<CatalogTool>, String> {
    let path = dir().join(format!("{name}.jsonl"));
    let text = std::fs::read_to_string(&path)
        .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    text.lines()
        .enumerate()
        .filter(|(_, line)| !line.trim().is_empty())
        .map(|(i, line)| {
            serde_json::from_str(line)
                .map_err(|e| format!("{}:{}: not a catalog tool: {e}", path.display(), i + 1))
        })
        .collect()
}

/// Several catalogs together, in the order given.
pub fn load_all(names: &[&str]) -> Result<Vec<CatalogTool>, String> {
    let mut tools = Vec::new();
    for name in names {
        tools.extend(load(name)?);
    }
    Ok(tools)
}
