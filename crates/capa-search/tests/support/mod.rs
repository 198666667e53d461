//! What the quality tests and the fusion sweep share: the tools of the labelled query sets.

use capa_search::ToolDoc;

/// The github, docker-registry and livemcpbench catalogs (1,399 tools), as the index sees them.
pub(crate) fn quality_docs() -> Vec<ToolDoc> {
    capa_catalogs::load_all(&["github", "docker-registry", "livemcpbench"])
        .expect("catalogs")
        .iter()
        .map(|t| {
            ToolDoc::new(
                &t.source,
                &t.name,
                t.title(),
                t.description.as_deref(),
                &t.input_schema,
            )
        })
        .collect()
}
