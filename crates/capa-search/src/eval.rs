//! Search quality on a labelled query set: recall@1, recall@5 and MRR, for comparing rankers.

use serde::Deserialize;

use crate::{Ranker, SearchError, SearchIndex};

/// How a labelled query is phrased, so quality can be read where lexical ranking is weak.
#[derive(Debug, Clone, Copy, Default, Deserialize, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[serde(rename_all = "lowercase")]
pub enum QueryKind {
    /// The original set (queries.jsonl): phrased as people ask, often sharing words with the tool.
    #[default]
    Everyday,
    /// Same meaning as the tool, as few of its words as possible ("who else can push to this repo").
    Paraphrase,
    /// A goal in a sentence, where the tool is the first step to call.
    Task,
}

impl QueryKind {
    pub const ALL: [Self; 3] = [Self::Everyday, Self::Paraphrase, Self::Task];

    pub fn label(self) -> &'static str {
        match self {
            Self::Everyday => "everyday",
            Self::Paraphrase => "paraphrase",
            Self::Task => "task",
        }
    }
}

/// A query and the addresses of every tool that answers it.
#[derive(Debug, Clone, Deserialize, PartialEq, Eq)]
pub struct LabelledQuery {
    pub query: String,
    #[serde(default)]
    pub kind: QueryKind,
    pub relevant: Vec<String>,
}

/// Averages over a query set.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Quality {
    pub queries: usize,
    /// Share of the relevant tools in the top k, out of at most k (so a perfect ranking scores 1
    /// even when more than k tools are relevant).
    pub recall_at_1: f64,
    pub recall_at_5: f64,
    /// Mean reciprocal rank of the first relevant tool (0 when none is found).
    pub mrr: f64,
}

/// Reads a JSON Lines query set.
pub fn parse_queries(text: &str) -> Result<Vec<LabelledQuery>, String> {
    text.lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
        .map(|(i, l)| serde_json::from_str(l).map_err(|e| format!("line {}: {e}", i + 1)))
        .collect()
}

/// Runs every query with `ranker` and averages.
pub fn evaluate(
    index: &SearchIndex,
    ranker: Ranker,
    queries: &[LabelledQuery],
) -> Result<Quality, SearchError> {
    let mut recall_1 = 0.0;
    let mut recall_5 = 0.0;
    let mut mrr = 0.0;
    for labelled in queries {
        let hits = index.rank(ranker, &labelled.query)?;
        let ranked: Vec<&str> = hits
            .iter()
            .map(|h| index.docs()[h.doc].address.as_str())
            .collect();
        let relevant = |address: &&str| labelled.relevant.iter().any(|r| r == address);
        recall_1 += recall_at(&ranked, &relevant, 1, labelled.relevant.len());
        recall_5 += recall_at(&ranked, &relevant, 5, labelled.relevant.len());
        if let Some(rank) = ranked.iter().position(relevant) {
            mrr += 1.0 / (rank + 1) as f64;
        }
    }
    let n = queries.len().max(1) as f64;
    Ok(Quality {
        queries: queries.len(),
        recall_at_1: recall_1 / n,
        recall_at_5: recall_5 / n,
        mrr: mrr / n,
    })
}

/// [`evaluate`] for each kind present in `queries`, in [`QueryKind::ALL`] order.
pub fn evaluate_by_kind(
    index: &SearchIndex,
    ranker: Ranker,
    queries: &[LabelledQuery],
) -> Result<Vec<(QueryKind, Quality)>, SearchError> {
    let mut by_kind = Vec::new();
    for kind in QueryKind::ALL {
        let of_kind: Vec<LabelledQuery> =
            queries.iter().filter(|q| q.kind == kind).cloned().collect();
        if !of_kind.is_empty() {
            by_kind.push((kind, evaluate(index, ranker, &of_kind)?));
        }
    }
    Ok(by_kind)
}

fn recall_at(ranked: &[&str], relevant: &impl Fn(&&str) -> bool, k: usize, total: usize) -> f64 {
    if total == 0 {
        return 0.0;
    }
    let found = ranked.iter().take(k).filter(|a| relevant(a)).count();
    found as f64 / total.min(k) as f64
}
