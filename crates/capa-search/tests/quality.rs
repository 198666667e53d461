//! Search quality on the labelled query set (tests/data/queries.jsonl) over the github,
//! docker-registry and livemcpbench catalogs together: BM25F must not lose to tantivy's boosted
//! per-field sum nor to single-field BM25 on recall@1, recall@5 or MRR. The same numbers are
//! written to docs/benchmarks.md by `capa-bench`.

use capa_search::eval::{
    LabelledQuery, Quality, QueryKind, evaluate, evaluate_by_kind, parse_queries,
};
use capa_search::{Ranker, SearchIndex};

mod support;

fn quality_index() -> SearchIndex {
    SearchIndex::build(support::quality_docs()).expect("index")
}

#[test]
fn bm25f_does_not_lose_to_the_baselines() {
    let queries = parse_queries(include_str!("data/queries.jsonl")).expect("queries");
    assert!(queries.len() >= 150, "only {} queries", queries.len());
    let index = quality_index();
    assert_labels_exist(&index, &queries);
    let quality = |ranker| evaluate(&index, ranker, &queries).expect("evaluate");
    let ours = quality(Ranker::Bm25f);
    let summed = quality(Ranker::TantivyBoostedSum);
    let single = quality(Ranker::SingleField);
    for (name, q) in [
        ("bm25f", ours),
        ("boosted sum", summed),
        ("single field", single),
    ] {
        println!(
            "{name:>12}: recall@1 {:.3}  recall@5 {:.3}  MRR {:.3}  ({} queries)",
            q.recall_at_1, q.recall_at_5, q.mrr, q.queries
        );
    }
    for (name, other) in [
        ("tantivy boosted sum", summed),
        ("single-field BM25", single),
    ] {
        assert!(
            not_worse(ours, other),
            "BM25F {ours:?} loses to {name} {other:?}"
        );
    }
}

/// The paraphrase and task queries (queries-meaning.jsonl): where lexical ranking is weak, and
/// what the semantic ranking is measured on. Their labels must name real tools; BM25F's numbers
/// per kind are printed here and written to docs/benchmarks.md.
#[test]
fn the_meaning_set_labels_real_tools_by_kind() {
    let queries = parse_queries(include_str!("data/queries-meaning.jsonl")).expect("queries");
    let count = |kind| queries.iter().filter(|q| q.kind == kind).count();
    assert_eq!(count(QueryKind::Everyday), 0, "every line says its kind");
    assert!(
        count(QueryKind::Paraphrase) >= 150,
        "{} paraphrases",
        count(QueryKind::Paraphrase)
    );
    assert!(
        count(QueryKind::Task) >= 100,
        "{} task queries",
        count(QueryKind::Task)
    );
    let mut seen = std::collections::HashSet::new();
    for query in &queries {
        assert!(
            seen.insert(query.query.to_lowercase()),
            "{:?} twice",
            query.query
        );
        assert!(
            !query.relevant.is_empty(),
            "{:?} labels nothing",
            query.query
        );
    }
    let index = quality_index();
    assert_labels_exist(&index, &queries);
    for (kind, q) in evaluate_by_kind(&index, Ranker::Bm25f, &queries).expect("evaluate") {
        println!(
            "{:>10}: recall@1 {:.3}  recall@5 {:.3}  MRR {:.3}  ({} queries)",
            kind.label(),
            q.recall_at_1,
            q.recall_at_5,
            q.mrr,
            q.queries
        );
    }
}

fn assert_labels_exist(index: &SearchIndex, queries: &[LabelledQuery]) {
    for query in queries {
        for address in &query.relevant {
            assert!(
                index.docs().iter().any(|d| &d.address == address),
                "query {:?} labels {address}, which no catalog has",
                query.query
            );
        }
    }
}

fn not_worse(a: Quality, b: Quality) -> bool {
    a.recall_at_1 >= b.recall_at_1 && a.recall_at_5 >= b.recall_at_5 && a.mrr >= b.mrr
}
