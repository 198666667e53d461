//! The hub's `search` and `describe`: the index follows the catalog, rebuilt off the async
//! runtime whenever the catalog changed since it was built.

use std::collections::BTreeMap;
use std::sync::Arc;

use super::Hub;
use crate::lookup::{self, LookupError, SearchRequest, ToolIndex};

impl Hub {
    /// Answers `search` (and the sandbox's `hub.search`).
    pub async fn search(&self, request: &SearchRequest) -> Result<String, LookupError> {
        let index = self.tool_index().await?;
        let connections = self.connection_labels();
        let descriptions: BTreeMap<String, String> = self
            .source_defs()
            .iter()
            .filter_map(|s| Some((s.id.clone(), s.description.clone()?)))
            .collect();
        let policy = self.policy();
        let request = request.clone();
        // Embedding the query is CPU work (milliseconds): off the async runtime.
        tokio::task::spawn_blocking(move || {
            lookup::search(&index, &policy, &connections, &descriptions, &request)
        })
        .await
        .map_err(|e| LookupError::Index(e.to_string()))?
    }

    /// Answers `describe` (and the sandbox's `hub.describe`).
    pub async fn describe(&self, targets: &[String]) -> Result<String, LookupError> {
        let index = self.tool_index().await?;
        lookup::describe(&index, &self.policy(), targets)
    }

    /// The index of the current catalog, built now if the catalog changed since the last one.
    /// Waits for sources still starting (once), like a first `tools/list`.
    pub async fn tool_index(&self) -> Result<Arc<ToolIndex>, LookupError> {
        self.startup_done().await;
        let mut slot = self.tool_index.lock().await;
        let catalog = self.catalog();
        if let Some(index) = slot.as_ref().filter(|i| Arc::ptr_eq(i.catalog(), &catalog)) {
            return Ok(index.clone());
        }
        let semantic = self.semantic.clone();
        let store = self.store.clone();
        let index = tokio::task::spawn_blocking(move || {
            ToolIndex::build_with(catalog, |docs| semantic.attach(&store, docs))
        })
        .await
        .map_err(|e| LookupError::Index(e.to_string()))??;
        let index = Arc::new(index);
        *slot = Some(index.clone());
        Ok(index)
    }

    /// Connection names per source, the default marked `*`, for search's namespace lines.
    fn connection_labels(&self) -> BTreeMap<String, Vec<String>> {
        let mut labels: BTreeMap<String, Vec<String>> = BTreeMap::new();
        match self.connections.list() {
            Ok(records) => {
                // Records are stored under connection keys (a project source's differ from its id).
                let sources: BTreeMap<String, String> = self
                    .source_defs()
                    .into_iter()
                    .map(|d| (self.connection_key(&d.id), d.id))
                    .collect();
                for record in records {
                    let Some(source) = sources.get(&record.source) else {
                        continue;
                    };
                    let star = if record.is_default { "*" } else { "" };
                    labels
                        .entry(source.clone())
                        .or_default()
                        .push(format!("{}{star}", record.name));
                }
            }
            Err(e) => tracing::warn!(error = %e, "could not list connections for search"),
        }
        labels
    }
}

/// Keeps the index warm in code mode: after each catalog change, build the next index in the
/// background so that the next `search` does not wait for it, and embed the tools the model
/// has not seen.
pub(super) async fn keep_index_warm(hub: std::sync::Weak<Hub>) {
    let Some(mut changes) = hub.upgrade().map(|h| h.watch_catalog()) else {
        return;
    };
    loop {
        let Some(hub) = hub.upgrade() else { return };
        match hub.tool_index().await {
            // Tools new to the model are embedded now, then the index is built again with them.
            Ok(index) => {
                if hub.embed_missing(&index).await
                    && let Err(e) = hub.tool_index().await
                {
                    tracing::warn!(error = %e, "could not build the search index");
                }
            }
            Err(e) => tracing::warn!(error = %e, "could not build the search index"),
        }
        drop(hub);
        if changes.changed().await.is_err() {
            return;
        }
    }
}
