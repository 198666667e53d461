//! The sweep that chose the hybrid ranking's fusion parameters (docs/code-mode.md, "Ranking by
//! meaning"): every combination on every query kind, for a person to read. Choose on the
//! everyday set only; the paraphrase and task sets then measure the choice unseen.
//!
//!     CAPA_MODEL_DIR=models/all-MiniLM-L6-v2 cargo run --release -p capa-search --example fusion_sweep

#[path = "../tests/support/mod.rs"]
mod support;

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use capa_embed::{Embedder, Located};
use capa_search::eval::{evaluate_by_kind, parse_queries};
use capa_search::{FusionParams, QueryEmbedder, Ranker, SearchIndex, Semantic, embedding_text};

/// The model, remembering queries: each is asked once per combination.
struct Model(Embedder, Mutex<HashMap<String, Vec<f32>>>);

impl QueryEmbedder for Model {
    fn embed_query(&self, query: &str) -> Option<Vec<f32>> {
        let mut seen = self.1.lock().ok()?;
        if let Some(v) = seen.get(query) {
            return Some(v.clone());
        }
        let v = self.0.embed_one(query).ok()?;
        seen.insert(query.to_owned(), v.clone());
        Some(v)
    }
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let Located::Found(dir) = capa_embed::locate(None) else {
        return Err(
            "no search model: set CAPA_MODEL_DIR (scripts/setup --model installs it)".into(),
        );
    };
    let model = Arc::new(Model(Embedder::load(&dir)?, Mutex::default()));
    let docs = support::quality_docs();
    let texts: Vec<String> = docs.iter().map(embedding_text).collect();
    let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
    let semantic = Semantic {
        vectors: model.0.embed(&refs)?.into_iter().map(Some).collect(),
        embedder: model.clone(),
    };
    let mut queries = parse_queries(include_str!("../tests/data/queries.jsonl"))?;
    queries.extend(parse_queries(include_str!(
        "../tests/data/queries-meaning.jsonl"
    ))?);
    for k in [10.0f32, 30.0, 60.0] {
        for semantic_weight in [0.7f32, 1.0, 1.5, 2.0] {
            for semantic_candidates in [10usize, 30, 100] {
                for min_similarity in [0.1f32, 0.2, 0.3] {
                    let params = FusionParams {
                        k,
                        semantic_weight,
                        semantic_candidates,
                        min_similarity,
                    };
                    let index = SearchIndex::build(docs.clone())?
                        .with_semantic(semantic.clone())
                        .with_fusion(params);
                    let line: Vec<String> = evaluate_by_kind(&index, Ranker::Hybrid, &queries)?
                        .iter()
                        .map(|(kind, q)| {
                            format!(
                                "{} {:.3}/{:.3}/{:.3}",
                                kind.label(),
                                q.recall_at_1,
                                q.recall_at_5,
                                q.mrr
                            )
                        })
                        .collect();
                    println!("{params:?}: {}", line.join("  "));
                }
            }
        }
    }
    Ok(())
}
