//! The semantic half of hybrid search: each tool's text embedded once (by the hub's sentence
//! model, crate capa-embed), the query embedded per search, ranked by cosine similarity, and
//! fused with BM25F by reciprocal rank.
//!
//! This crate does no embedding itself: the caller gives the vectors and a [`QueryEmbedder`],
//! so the index stays cheap to build and testable without the model.

use std::collections::HashMap;
use std::sync::Arc;

use crate::vectors::PackedVectors;
use crate::{Hit, ToolDoc};

/// Embeds a query into the same space as the tools' vectors.
pub trait QueryEmbedder: Send + Sync {
    /// `None` when the query cannot be embedded now; search is then BM25F alone.
    fn embed_query(&self, query: &str) -> Option<Vec<f32>>;
}

/// What semantic ranking needs: a vector per tool (in [`crate::SearchIndex::docs`] order,
/// `None` for a tool not embedded yet) and the query embedder.
#[derive(Clone)]
pub struct Semantic {
    pub vectors: Vec<Option<Vec<f32>>>,
    pub embedder: Arc<dyn QueryEmbedder>,
}

impl std::fmt::Debug for Semantic {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Semantic")
            .field("embedded", &self.embedded())
            .field("tools", &self.vectors.len())
            .finish_non_exhaustive()
    }
}

impl Semantic {
    /// How many tools have a vector.
    pub fn embedded(&self) -> usize {
        self.vectors.iter().filter(|v| v.is_some()).count()
    }
}

/// What a [`crate::SearchIndex`] keeps of a [`Semantic`]: the vectors packed for the scan
/// (eight bits a value, [`PackedVectors`]) and the query embedder.
pub struct SemanticIndex {
    pub(crate) vectors: PackedVectors,
    pub(crate) embedder: Arc<dyn QueryEmbedder>,
}

impl std::fmt::Debug for SemanticIndex {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SemanticIndex")
            .field("embedded", &self.embedded())
            .field("tools", &self.len())
            .finish_non_exhaustive()
    }
}

impl SemanticIndex {
    pub(crate) fn new(semantic: Semantic) -> Self {
        Self {
            vectors: PackedVectors::pack(&semantic.vectors),
            embedder: semantic.embedder,
        }
    }

    /// How many tools the vectors were given for (the index's tools).
    pub fn len(&self) -> usize {
        self.vectors.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// How many tools have a vector.
    pub fn embedded(&self) -> usize {
        self.vectors.embedded()
    }

    /// Whether tool `doc` (in [`crate::SearchIndex::docs`] order) has a vector.
    pub fn has_vector(&self, doc: usize) -> bool {
        self.vectors.has_vector(doc)
    }
}

/// How the two rankings are fused; the values are chosen on the everyday query set only
/// (docs/code-mode.md, "Hybrid ranking"), so the paraphrase and task sets measure them unseen.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FusionParams {
    /// Reciprocal-rank fusion's constant: 1 / (k + rank) per list. Larger flattens the ranks.
    pub k: f32,
    /// The weight of the semantic list against BM25F's 1.
    pub semantic_weight: f32,
    /// Semantic candidates: at most this many of the nearest tools…
    pub semantic_candidates: usize,
    /// …and only those at least this similar to the query (cosine), so that a query about
    /// nothing in the catalog does not list the least distant tools as matches.
    pub min_similarity: f32,
}

impl Default for FusionParams {
    fn default() -> Self {
        Self {
            k: 10.0,
            semantic_weight: 1.0,
            semantic_candidates: 30,
            min_similarity: 0.2,
        }
    }
}

/// The text a tool's vector is computed from: its namespace and name as words, its title and the
/// first sentence of its description. Parameter names and the rest of the description are left
/// to BM25F: on the everyday query set, they made the vectors worse (pagination notes and field
/// lists pull every tool towards the same point) and embedding twice as slow
/// (docs/code-mode.md, "Ranking by meaning").
pub fn embedding_text(doc: &ToolDoc) -> String {
    let name = doc
        .address
        .strip_prefix(&format!("{}.", doc.namespace))
        .unwrap_or(&doc.address);
    let mut text = format!("{}: {}", doc.namespace, words(name));
    for part in [
        doc.title.as_deref().unwrap_or_default(),
        first_sentence(&doc.description),
    ] {
        let part = part.trim();
        if !part.is_empty() {
            text.push_str(". ");
            text.push_str(part);
        }
    }
    text
}

/// Up to the first full stop followed by a space, or the first line break.
fn first_sentence(text: &str) -> &str {
    let text = text.trim();
    let stop = text.find(". ").map(|i| i + 1);
    let line = text.find('\n');
    let end = match (stop, line) {
        (Some(a), Some(b)) => a.min(b),
        (a, b) => a.or(b).unwrap_or(text.len()),
    };
    &text[..end]
}

/// `list_repository_collaborators`, `listRepoCollaborators` and `list-repo` as words.
fn words(identifier: &str) -> String {
    let mut out = String::with_capacity(identifier.len() + 8);
    let mut previous: Option<char> = None;
    for c in identifier.chars() {
        match c {
            '_' | '-' | '.' | '/' => out.push(' '),
            c if c.is_uppercase() && previous.is_some_and(char::is_lowercase) => {
                out.push(' ');
                out.extend(c.to_lowercase());
            }
            c => out.extend(c.to_lowercase()),
        }
        previous = Some(c);
    }
    out.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The embedded tools by cosine similarity to `query`, best first (ties in catalog order),
/// those under `min_similarity` left out; only the first `limit` when given (the hybrid needs
/// its 30 candidates, not thousands sorted). The vectors are unit length, so the dot product is
/// the cosine.
pub(crate) fn nearest(
    semantic: &SemanticIndex,
    query: &[f32],
    min_similarity: f32,
    limit: Option<usize>,
) -> Vec<Hit> {
    let mut hits: Vec<Hit> = semantic
        .vectors
        .at_least(query, min_similarity)
        .into_iter()
        .map(|(doc, score)| Hit { doc, score })
        .collect();
    let best_first = |a: &Hit, b: &Hit| b.score.total_cmp(&a.score).then(a.doc.cmp(&b.doc));
    if let Some(limit) = limit
        && limit < hits.len()
    {
        hits.select_nth_unstable_by(limit, best_first);
        hits.truncate(limit);
    }
    hits.sort_unstable_by(best_first);
    hits
}

/// Reciprocal-rank fusion of BM25F's hits (best first) and the semantic ones (best first, cut to
/// `semantic_candidates`): a tool's score is the sum over the lists it is in of
/// weight / (k + rank). Unsorted; the caller orders by score.
pub(crate) fn fuse(lexical: &[Hit], semantic: &[Hit], params: FusionParams) -> Vec<Hit> {
    let mut scores: HashMap<usize, f32> = HashMap::new();
    for (rank, hit) in lexical.iter().enumerate() {
        *scores.entry(hit.doc).or_default() += 1.0 / (params.k + rank as f32 + 1.0);
    }
    for (rank, hit) in semantic.iter().take(params.semantic_candidates).enumerate() {
        *scores.entry(hit.doc).or_default() +=
            params.semantic_weight / (params.k + rank as f32 + 1.0);
    }
    scores
        .into_iter()
        .map(|(doc, score)| Hit { doc, score })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identifiers_read_as_words() {
        assert_eq!(
            words("list_repository_collaborators"),
            "list repository collaborators"
        );
        assert_eq!(words("getIssueComments"), "get issue comments");
        assert_eq!(words("per-page"), "per page");
        assert_eq!(words("URL"), "url");
    }

    #[test]
    fn the_text_is_the_name_title_and_first_sentence() {
        let doc = ToolDoc {
            address: "github.list_repository_collaborators".to_owned(),
            namespace: "github".to_owned(),
            title: Some("List repository collaborators".to_owned()),
            description: "List collaborators of a repository. Results are paginated.".to_owned(),
            params: vec!["owner".to_owned()],
        };
        assert_eq!(
            embedding_text(&doc),
            "github: list repository collaborators. List repository collaborators. List collaborators of a repository."
        );
        assert_eq!(first_sentence("One line\nand v1.2 more"), "One line");
        assert_eq!(first_sentence("Version 1.2 only"), "Version 1.2 only");
    }

    struct NoQueries;

    impl QueryEmbedder for NoQueries {
        fn embed_query(&self, _query: &str) -> Option<Vec<f32>> {
            None
        }
    }

    #[test]
    fn the_nearest_few_are_the_head_of_the_whole_list() {
        // Many equal similarities (11 values over 50 tools), some tools without a vector.
        let vectors = (0..50u8)
            .map(|i| (i % 7 != 3).then(|| vec![f32::from((i % 11) * 3 % 11) / 10.0, 0.5]))
            .collect();
        let semantic = SemanticIndex::new(Semantic {
            vectors,
            embedder: Arc::new(NoQueries),
        });
        let docs = |hits: &[Hit]| hits.iter().map(|h| h.doc).collect::<Vec<_>>();
        let all = nearest(&semantic, &[1.0, 0.0], 0.2, None);
        assert!(all.iter().all(|h| h.score >= 0.2 && h.doc % 7 != 3));
        for pair in all.windows(2) {
            let order = pair[0].score.total_cmp(&pair[1].score);
            assert!(order.is_gt() || (order.is_eq() && pair[0].doc < pair[1].doc));
        }
        for limit in [1, 5, 12, all.len(), all.len() + 3] {
            let cut = nearest(&semantic, &[1.0, 0.0], 0.2, Some(limit));
            assert_eq!(
                docs(&cut),
                docs(&all[..limit.min(all.len())]),
                "limit {limit}"
            );
        }
    }

    #[test]
    fn a_tool_in_both_lists_beats_one_in_either() {
        let hit = |doc| Hit { doc, score: 1.0 };
        let fused = fuse(
            &[hit(0), hit(1)],
            &[hit(2), hit(1)],
            FusionParams::default(),
        );
        let score = |doc| fused.iter().find(|h| h.doc == doc).map(|h| h.score);
        assert!(score(1) > score(0));
        assert!(score(1) > score(2));
        assert_eq!(fused.len(), 3);
    }
}
