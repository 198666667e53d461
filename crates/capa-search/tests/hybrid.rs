//! Hybrid ranking (BM25F fused with the sentence model) against BM25F alone, by query kind, over
//! the github, docker-registry and livemcpbench catalogs, with the real model (`CAPA_MODEL_DIR`,
//! installed by scripts/setup). The same numbers are written to docs/benchmarks.md.

use std::sync::Arc;

use capa_embed::{Embedder, Located};
use capa_search::eval::{LabelledQuery, Quality, QueryKind, evaluate_by_kind, parse_queries};
use capa_search::{QueryEmbedder, Ranker, SearchIndex, Semantic, embedding_text};

mod support;

/// The model, remembering the queries it embedded: the same queries are asked once per ranker.
struct Model(
    Embedder,
    std::sync::Mutex<std::collections::HashMap<String, Vec<f32>>>,
);

impl QueryEmbedder for Model {
    fn embed_query(&self, query: &str) -> Option<Vec<f32>> {
        let mut seen = self.1.lock().expect("lock");
        if let Some(v) = seen.get(query) {
            return Some(v.clone());
        }
        let v = self.0.embed_one(query).ok()?;
        seen.insert(query.to_owned(), v.clone());
        Some(v)
    }
}

fn model() -> Option<Arc<Model>> {
    match located() {
        Located::Found(dir) => Some(Arc::new(Model(
            Embedder::load(&dir).expect("model loads"),
            std::sync::Mutex::default(),
        ))),
        Located::Missing { searched } => {
            assert!(
                std::env::var_os("CAPA_REQUIRE_ALL").is_none(),
                "CAPA_REQUIRE_ALL is set but the search model is not installed (looked in {searched:?}); run scripts/setup"
            );
            eprintln!("skipped: no search model (run scripts/setup)");
            None
        }
    }
}

fn hybrid_index(model: &Arc<Model>) -> SearchIndex {
    let docs = support::quality_docs();
    let texts: Vec<String> = docs.iter().map(embedding_text).collect();
    let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
    let vectors = model.0.embed(&refs).expect("embed the catalogs");
    SearchIndex::build(docs)
        .expect("index")
        .with_semantic(Semantic {
            vectors: vectors.into_iter().map(Some).collect(),
            embedder: model.clone(),
        })
}

fn all_queries() -> Vec<LabelledQuery> {
    let mut queries = parse_queries(include_str!("data/queries.jsonl")).expect("queries");
    queries.extend(parse_queries(include_str!("data/queries-meaning.jsonl")).expect("queries"));
    queries
}

fn print(name: &str, by_kind: &[(QueryKind, Quality)]) {
    for (kind, q) in by_kind {
        println!(
            "{name:>8} {:>10}: recall@1 {:.3}  recall@5 {:.3}  MRR {:.3}  ({} queries)",
            kind.label(),
            q.recall_at_1,
            q.recall_at_5,
            q.mrr,
            q.queries
        );
    }
}

#[test]
fn hybrid_does_not_lose_to_bm25f_on_any_kind() {
    let Some(model) = model() else { return };
    let index = hybrid_index(&model);
    let queries = all_queries();
    let hybrid = evaluate_by_kind(&index, Ranker::Hybrid, &queries).expect("evaluate");
    let bm25f = evaluate_by_kind(&index, Ranker::Bm25f, &queries).expect("evaluate");
    let semantic = evaluate_by_kind(&index, Ranker::Semantic, &queries).expect("evaluate");
    print("bm25f", &bm25f);
    print("semantic", &semantic);
    print("hybrid", &hybrid);
    for ((kind, ours), (_, lexical)) in hybrid.iter().zip(&bm25f) {
        assert!(
            ours.recall_at_1 >= lexical.recall_at_1
                && ours.recall_at_5 >= lexical.recall_at_5
                && ours.mrr >= lexical.mrr,
            "{}: hybrid {ours:?} loses to BM25F {lexical:?}",
            kind.label()
        );
    }
}

/// `CAPA_MODEL_DIR` when set, else the checkout's `models/`, where scripts/setup installs the
/// model (scripts/test leaves the variable unset, so that the many hubs other tests start do
/// not each load the model).
fn located() -> Located {
    let checkout =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../models/all-MiniLM-L6-v2");
    match capa_embed::locate(None) {
        Located::Missing { .. } if checkout.join("model.safetensors").is_file() => {
            Located::Found(checkout)
        }
        other => other,
    }
}
