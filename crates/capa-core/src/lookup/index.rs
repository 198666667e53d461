//! The search index of one catalog snapshot, with the schemas the type generator borrows.

use capa_search::{SearchIndex, Semantic, ToolDoc};
use capa_typegen::ToolSpec;
use serde_json::Value;

use super::LookupError;
use crate::catalog::{CatalogTool, SharedCatalog};

/// A catalog and its search index, built together so they always agree.
#[derive(Debug)]
pub struct ToolIndex {
    catalog: SharedCatalog,
    search: SearchIndex,
    /// Input and output schemas as JSON values, in catalog order.
    schemas: Vec<(Value, Option<Value>)>,
}

impl ToolIndex {
    /// Indexes every tool of `catalog` for term matching. Takes a while for thousands of tools
    /// (see docs/benchmarks.md): call it off the async runtime.
    pub fn build(catalog: SharedCatalog) -> Result<Self, LookupError> {
        Self::build_with(catalog, |_| None)
    }

    /// [`ToolIndex::build`], with the vectors `semantic` gives for the tools' documents (in
    /// catalog order) so that search ranks by meaning too.
    pub fn build_with(
        catalog: SharedCatalog,
        semantic: impl FnOnce(&[ToolDoc]) -> Option<Semantic>,
    ) -> Result<Self, LookupError> {
        let schemas: Vec<(Value, Option<Value>)> = catalog
            .tools()
            .iter()
            .map(|t| {
                let input = Value::Object(t.definition.input_schema.as_ref().clone());
                let output = t
                    .definition
                    .output_schema
                    .as_ref()
                    .map(|s| Value::Object(s.as_ref().clone()));
                (input, output)
            })
            .collect();
        let docs = catalog
            .tools()
            .iter()
            .zip(&schemas)
            .map(|(tool, (input, _))| {
                ToolDoc::new(
                    &tool.address.namespace,
                    &tool.address.name,
                    title(tool),
                    tool.definition.description.as_deref(),
                    input,
                )
            })
            .collect::<Vec<ToolDoc>>();
        let vectors = semantic(&docs);
        let mut search = SearchIndex::build(docs).map_err(|e| LookupError::Index(e.to_string()))?;
        if let Some(vectors) = vectors {
            search = search.with_semantic(vectors);
        }
        Ok(Self {
            catalog,
            search,
            schemas,
        })
    }

    pub fn catalog(&self) -> &SharedCatalog {
        &self.catalog
    }

    pub fn search_index(&self) -> &SearchIndex {
        &self.search
    }

    /// The type generator's view of the tool at `position` in the catalog.
    pub fn spec(&self, position: usize) -> ToolSpec<'_> {
        let tool = &self.catalog.tools()[position];
        let (input, output) = &self.schemas[position];
        ToolSpec {
            namespace: &tool.address.namespace,
            name: &tool.address.name,
            description: tool.definition.description.as_deref(),
            input_schema: input,
            output_schema: output.as_ref(),
        }
    }
}

fn title(tool: &CatalogTool) -> Option<&str> {
    tool.definition
        .title
        .as_deref()
        .or_else(|| tool.definition.annotations.as_ref()?.title.as_deref())
}
