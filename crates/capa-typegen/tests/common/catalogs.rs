//! The real tool catalogs (through `capa-catalogs`) as the type generator sees them.

use capa_catalogs::CatalogTool;
use capa_typegen::ToolSpec;

pub(crate) use capa_catalogs::FILES;

/// The tools of one catalog file, sorted by namespace and name as the hub passes them.
pub(crate) fn load(name: &str) -> Vec<CatalogTool> {
    let mut tools = capa_catalogs::load(name).unwrap_or_else(|e| panic!("{e} (set CAPA_CATALOGS)"));
    tools.sort_by(|a, b| (&a.source, &a.name).cmp(&(&b.source, &b.name)));
    tools
}

pub(crate) fn specs(tools: &[CatalogTool]) -> Vec<ToolSpec<'_>> {
    tools
        .iter()
        .map(|t| ToolSpec {
            namespace: &t.source,
            name: &t.name,
            description: t.description.as_deref(),
            input_schema: &t.input_schema,
            output_schema: t.output_schema.as_ref(),
        })
        .collect()
}

/// The tools split into namespaces (runs of the sorted list).
pub(crate) fn namespaces<'s, 'a>(specs: &'s [ToolSpec<'a>]) -> Vec<&'s [ToolSpec<'a>]> {
    let mut groups = Vec::new();
    let mut start = 0;
    for i in 1..=specs.len() {
        if i == specs.len() || specs[i].namespace != specs[start].namespace {
            groups.push(&specs[start..i]);
            start = i;
        }
    }
    groups
}
