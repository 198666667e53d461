//! Code mode's lookups, measured in process over the real catalogs: index build time and memory,
//! `search` and `describe` latency, search quality of the three rankers on the labelled query
//! set, and the token cost of the code-mode surface against listing every tool.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Instant;

use anyhow::Context;
use capa_config::ToolSelection;
use capa_core::lookup::{self, SearchRequest, ToolIndex};
use capa_core::{Catalog, Policy, SourceTools, Tool, ToolDefinition};
use capa_search::Ranker;
use capa_search::eval::{Quality, QueryKind, evaluate, evaluate_by_kind, parse_queries};
use rmcp::model::ListToolsResult;

use crate::calls::Samples;
use crate::memory::own_rss_kib;

pub(crate) const QUERIES: &str = include_str!("../../capa-search/tests/data/queries.jsonl");
/// Paraphrase and task queries, measured by kind.
pub(crate) const MEANING_QUERIES: &str =
    include_str!("../../capa-search/tests/data/queries-meaning.jsonl");

/// One catalog's measurements.
#[derive(Debug)]
pub(crate) struct CatalogRow {
    pub label: &'static str,
    pub tools: usize,
    pub build_ms: Samples,
    /// Growth of this process's RSS while the index was built and kept, KiB.
    pub index_kib: u64,
    pub search_us: Samples,
    pub describe_us: Option<Samples>,
    pub tokens: SurfaceTokens,
}

/// Token cost of what a client loads up front.
#[derive(Debug, Clone, Copy)]
pub(crate) struct SurfaceTokens {
    pub expose_all_o200k: usize,
    pub expose_all_cl100k: usize,
}

#[derive(Debug)]
pub(crate) struct LookupReport {
    pub catalogs: Vec<CatalogRow>,
    pub quality: Vec<(&'static str, Quality)>,
    /// Each ranker's quality on the paraphrase and the task queries, apart.
    pub quality_by_kind: Vec<(&'static str, Vec<(QueryKind, Quality)>)>,
    pub code_o200k: usize,
    pub code_cl100k: usize,
}

pub(crate) fn catalog_of(files: &[&str]) -> anyhow::Result<Catalog> {
    let tools = capa_catalogs::load_all(files).map_err(anyhow::Error::msg)?;
    let mut by_source: BTreeMap<String, Vec<ToolDefinition>> = BTreeMap::new();
    for tool in tools {
        let mut definition =
            serde_json::json!({"name": tool.name, "inputSchema": tool.input_schema});
        if let Some(description) = tool.description {
            definition["description"] = description.into();
        }
        if let Some(annotations) = tool.annotations {
            definition["annotations"] = annotations;
        }
        let definition: ToolDefinition =
            serde_json::from_value(definition).context("catalog tool")?;
        by_source.entry(tool.source).or_default().push(definition);
    }
    Ok(Catalog::build(by_source.iter().map(|(id, tools)| {
        SourceTools {
            source_id: id,
            selection: &ToolSelection::All,
            tools,
        }
    })))
}

/// What `tools/list` costs in tokens when every tool is listed (JSON as sent).
fn expose_all_tokens(catalog: &Catalog) -> anyhow::Result<SurfaceTokens> {
    let tools: Vec<Tool> = catalog
        .tools()
        .iter()
        .map(|t| capa_core::tool_of(&t.definition))
        .collect();
    let json = serde_json::to_string(&ListToolsResult::with_all_items(tools))?;
    Ok(SurfaceTokens {
        expose_all_o200k: capa_typegen::count_tokens(&json),
        expose_all_cl100k: capa_typegen::count_tokens_cl100k(&json),
    })
}

fn time_us(f: impl FnOnce()) -> f64 {
    let start = Instant::now();
    f();
    start.elapsed().as_secs_f64() * 1e6
}

pub(crate) fn measure() -> anyhow::Result<LookupReport> {
    let queries = parse_queries(QUERIES).map_err(anyhow::Error::msg)?;
    let policy = Policy::default();
    let mut catalogs = Vec::new();
    for (label, files) in [
        (
            "combined (all four catalogs)",
            &["github", "livemcpbench", "docker-registry", "toucan-live"][..],
        ),
        ("toucan-live", &["toucan-live"][..]),
        ("github", &["github"][..]),
    ] {
        eprintln!("capa-bench: lookups over {label}…");
        let catalog = Arc::new(catalog_of(files)?);
        let tokens = expose_all_tokens(&catalog)?;
        let mut build_ms = Vec::new();
        for _ in 0..3 {
            let catalog = catalog.clone();
            build_ms.push(time_us(|| drop(ToolIndex::build(catalog))) / 1000.0);
        }
        let before = own_rss_kib()?;
        let index = ToolIndex::build(catalog.clone()).map_err(anyhow::Error::msg)?;
        let index_kib = own_rss_kib()?.saturating_sub(before);
        let (no_connections, no_descriptions) = (BTreeMap::new(), BTreeMap::new());
        let mut search_us = Vec::new();
        for _ in 0..3 {
            for q in &queries {
                let request = SearchRequest {
                    query: q.query.clone(),
                    ..SearchRequest::default()
                };
                search_us.push(time_us(|| {
                    let _ = lookup::search(
                        &index,
                        &policy,
                        &no_connections,
                        &no_descriptions,
                        &request,
                    );
                }));
            }
        }
        let describe_us = files.contains(&"github").then(|| {
            let targets: Vec<String> = catalog
                .tools()
                .iter()
                .filter(|t| t.address.namespace == "github")
                .step_by(11)
                .take(10)
                .map(|t| t.address.to_string())
                .collect();
            Samples(
                (0..100)
                    .map(|_| time_us(|| drop(lookup::describe(&index, &policy, &targets))))
                    .collect(),
            )
        });
        catalogs.push(CatalogRow {
            label,
            tools: catalog.len(),
            build_ms: Samples(build_ms),
            index_kib,
            search_us: Samples(search_us),
            describe_us,
            tokens,
        });
    }
    eprintln!("capa-bench: search quality…");
    let quality_catalog = Arc::new(catalog_of(&["github", "docker-registry", "livemcpbench"])?);
    let index = ToolIndex::build(quality_catalog).map_err(anyhow::Error::msg)?;
    let meaning_queries = parse_queries(MEANING_QUERIES).map_err(anyhow::Error::msg)?;
    let mut quality = Vec::new();
    let mut quality_by_kind = Vec::new();
    for (name, ranker) in [
        ("BM25F (capa-search)", Ranker::Bm25f),
        (
            "tantivy per-field BM25, boosted sum",
            Ranker::TantivyBoostedSum,
        ),
        ("single-field BM25 (tantivy)", Ranker::SingleField),
    ] {
        quality.push((name, evaluate(index.search_index(), ranker, &queries)?));
        quality_by_kind.push((
            name,
            evaluate_by_kind(index.search_index(), ranker, &meaning_queries)?,
        ));
    }
    let code = code_surface_json()?;
    Ok(LookupReport {
        catalogs,
        quality,
        quality_by_kind,
        code_o200k: capa_typegen::count_tokens(&code),
        code_cl100k: capa_typegen::count_tokens_cl100k(&code),
    })
}

/// The code-mode `tools/list` result plus the server instructions: the fixed surface.
fn code_surface_json() -> anyhow::Result<String> {
    let list = serde_json::to_string(&ListToolsResult::with_all_items(capa_server::code_tools()))?;
    Ok(format!("{list}\n{}", capa_server::CODE_INSTRUCTIONS))
}
