//! Tool search: BM25F over tool names, descriptions and parameter names.
//!
//! tantivy does the analysis (tokenising, stemming) and the indexing (postings, field lengths);
//! the BM25F ranking is computed here on top of its postings, because tantivy's per-field boosted
//! queries add up per-field BM25 scores, which is a different (and, on tool catalogs, worse)
//! ranking. Both, and single-field BM25, are available as [`Ranker`]s so the difference can be
//! measured on a labelled query set.

mod analyzer;
mod bm25f;
mod dot;
pub mod eval;
mod index;
mod params;
mod query;
mod semantic;
mod synonyms;
mod vectors;

use std::collections::HashMap;

use tantivy::postings::Postings;
use tantivy::query::{BooleanQuery, BoostQuery, Occur, Query, TermQuery};
use tantivy::schema::{Field, IndexRecordOption};
use tantivy::tokenizer::TextAnalyzer;
use tantivy::{DocSet, IndexReader, TERMINATED, Term};

pub use analyzer::{IdentifierTokenizer, analyzer};
pub use bm25f::{Bm25fParams, FieldParams, idf};
pub use index::SearchField;
use index::{Built, Fields};
pub use params::parameter_names;
use query::QueryTerm;
pub use semantic::{FusionParams, QueryEmbedder, Semantic, SemanticIndex, embedding_text};
use synonyms::Thesaurus;

/// How strongly the share of query words a tool matches scales its score (1 = linear).
const COORDINATION_EXPONENT: f32 = 0.5;

/// One tool as the index sees it. Connection names are never part of it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolDoc {
    /// `namespace.tool`.
    pub address: String,
    pub namespace: String,
    pub title: Option<String>,
    pub description: String,
    /// Parameter names, nested ones included (`owner`, `labels`, `perPage`).
    pub params: Vec<String>,
}

impl ToolDoc {
    /// A tool's document from its definition; parameter names come from its input schema.
    pub fn new(
        namespace: &str,
        name: &str,
        title: Option<&str>,
        description: Option<&str>,
        input_schema: &serde_json::Value,
    ) -> Self {
        Self {
            address: format!("{namespace}.{name}"),
            namespace: namespace.to_owned(),
            title: title.map(str::to_owned),
            description: description.unwrap_or_default().to_owned(),
            params: parameter_names(input_schema),
        }
    }
}

/// A match: the position of the tool in [`SearchIndex::docs`] and its score.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Hit {
    pub doc: usize,
    pub score: f32,
}

/// How to rank. [`Ranker::Hybrid`] serves users when the index has vectors and
/// [`Ranker::Bm25f`] when not; the others are baselines for evaluation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ranker {
    /// BM25F and the sentence model's similarity, fused by reciprocal rank. Without vectors (or
    /// when the query cannot be embedded), BM25F alone.
    Hybrid,
    /// Cosine similarity of the sentence model's vectors alone; nothing without vectors.
    Semantic,
    /// BM25F, computed here from tantivy's postings.
    Bm25f,
    /// tantivy's BM25 per field, multiplied by the field's weight and summed.
    TantivyBoostedSum,
    /// tantivy's BM25 over one field holding name, description and parameters together.
    SingleField,
}

/// The rankers that match words.
#[derive(Debug, Clone, Copy)]
enum Lexical {
    Bm25f,
    TantivyBoostedSum,
    SingleField,
}

#[derive(Debug, thiserror::Error)]
pub enum SearchError {
    #[error("search index: {0}")]
    Index(#[from] tantivy::TantivyError),
    #[error("search index: {0}")]
    Io(#[from] std::io::Error),
}

/// An in-memory index over a catalog. Rebuilt whole when the catalog changes (7,400 tools take
/// well under a second; see docs/benchmarks.md).
pub struct SearchIndex {
    docs: Vec<ToolDoc>,
    reader: IndexReader,
    fields: Fields,
    ords: Vec<Vec<usize>>,
    analyzer: TextAnalyzer,
    thesaurus: Thesaurus,
    num_docs: u32,
    avg_len: [f32; 3],
    params: Bm25fParams,
    semantic: Option<SemanticIndex>,
    fusion: FusionParams,
    /// The single-field baseline's index, built the first time that ranker is asked for.
    single_field: std::sync::OnceLock<index::SingleField>,
}

impl std::fmt::Debug for SearchIndex {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SearchIndex")
            .field("docs", &self.docs.len())
            .field("params", &self.params)
            .field("semantic", &self.semantic)
            .finish_non_exhaustive()
    }
}

impl SearchIndex {
    pub fn build(docs: Vec<ToolDoc>) -> Result<Self, SearchError> {
        Self::with_params(docs, Bm25fParams::default())
    }

    pub fn with_params(docs: Vec<ToolDoc>, params: Bm25fParams) -> Result<Self, SearchError> {
        let Built {
            index,
            reader,
            fields,
            ords,
        } = index::build(&docs)?;
        let searcher = reader.searcher();
        let num_docs = u32::try_from(searcher.num_docs()).unwrap_or(u32::MAX);
        let mut avg_len = [0.0; 3];
        for (slot, field) in avg_len.iter_mut().zip(SearchField::ALL) {
            let mut tokens = 0u64;
            for segment in searcher.segment_readers() {
                tokens += segment
                    .inverted_index(fields.get(field))?
                    .total_num_tokens();
            }
            *slot = if num_docs == 0 {
                0.0
            } else {
                tokens as f32 / num_docs as f32
            };
        }
        let mut analyzer = index::query_analyzer(&index);
        Ok(Self {
            thesaurus: Thesaurus::new(&mut analyzer),
            analyzer,
            docs,
            reader,
            fields,
            ords,
            num_docs,
            avg_len,
            params,
            semantic: None,
            fusion: FusionParams::default(),
            single_field: std::sync::OnceLock::new(),
        })
    }

    /// Adds the tools' vectors, so that [`SearchIndex::search`] ranks by meaning as well as
    /// words. `semantic.vectors` must be in [`SearchIndex::docs`] order; a length mismatch is a
    /// caller's bug, and the vectors are then ignored rather than misattributed.
    #[must_use]
    pub fn with_semantic(mut self, semantic: Semantic) -> Self {
        if semantic.vectors.len() == self.docs.len() {
            self.semantic = Some(SemanticIndex::new(semantic));
        }
        self
    }

    /// Replaces the fusion's parameters (for evaluation).
    #[must_use]
    pub fn with_fusion(mut self, fusion: FusionParams) -> Self {
        self.fusion = fusion;
        self
    }

    /// The vectors, when the index has them.
    pub fn semantic(&self) -> Option<&SemanticIndex> {
        self.semantic.as_ref()
    }

    pub fn docs(&self) -> &[ToolDoc] {
        &self.docs
    }

    pub fn params(&self) -> Bm25fParams {
        self.params
    }

    /// Every tool matching `query`, best first (ties by address): hybrid when the index has
    /// vectors, BM25F otherwise.
    pub fn search(&self, query: &str) -> Result<Vec<Hit>, SearchError> {
        self.rank(Ranker::Hybrid, query)
    }

    /// Every tool matching `query`, best first (ties by address).
    pub fn rank(&self, ranker: Ranker, query: &str) -> Result<Vec<Hit>, SearchError> {
        let lexical = match ranker {
            Ranker::Bm25f => return self.rank_lexical(Lexical::Bm25f, query),
            Ranker::TantivyBoostedSum => {
                return self.rank_lexical(Lexical::TantivyBoostedSum, query);
            }
            Ranker::SingleField => return self.rank_lexical(Lexical::SingleField, query),
            Ranker::Hybrid | Ranker::Semantic => Lexical::Bm25f,
        };
        let embedded = self
            .semantic
            .as_ref()
            .and_then(|s| Some((s, s.embedder.embed_query(query)?)));
        let Some((semantic, vector)) = embedded else {
            return match ranker {
                Ranker::Semantic => Ok(Vec::new()),
                _ => self.rank_lexical(lexical, query),
            };
        };
        let limit = match ranker {
            Ranker::Semantic => None,
            _ => Some(self.fusion.semantic_candidates),
        };
        let near = semantic::nearest(semantic, &vector, self.fusion.min_similarity, limit);
        let mut hits = match ranker {
            Ranker::Semantic => near,
            _ => semantic::fuse(&self.rank_lexical(lexical, query)?, &near, self.fusion),
        };
        self.sort(&mut hits);
        Ok(hits)
    }

    fn sort(&self, hits: &mut [Hit]) {
        hits.sort_by(|a, b| {
            b.score
                .total_cmp(&a.score)
                .then_with(|| self.docs[a.doc].address.cmp(&self.docs[b.doc].address))
        });
    }

    /// Every tool sharing a word (or a synonym, or a completion) with `query`, best first.
    ///
    /// Whatever the ranker, a tool's score is then multiplied by the square root of the share of
    /// the query's words it matches (itself, a synonym or a completion): a softened form of the
    /// classic coordination factor. Without it, a tool matching one rare word of "open a bug
    /// report on a repo" beats the tool that matches all of them through common words; at full
    /// strength (no root) it overrules term weights too often (see docs/code-mode.md).
    fn rank_lexical(&self, ranker: Lexical, query: &str) -> Result<Vec<Hit>, SearchError> {
        let mut analyzer = self.analyzer.clone();
        let words = query::distinct(analyzer::terms(&mut analyzer, query));
        let searcher = self.reader.searcher();
        let terms = query::expand(&words, &self.thesaurus, &searcher, &self.fields)?;
        let mut hits = match ranker {
            Lexical::Bm25f => self.bm25f(&terms)?,
            Lexical::TantivyBoostedSum => self.tantivy_boosted_sum(&terms)?,
            Lexical::SingleField => self.single_field(&terms)?,
        };
        let coverage = self.coverage(&terms)?;
        let concepts = words.len().clamp(1, 64) as f32;
        for hit in &mut hits {
            let matched = coverage.get(&hit.doc).map_or(0, |m| m.count_ones());
            hit.score *= (matched as f32 / concepts).powf(COORDINATION_EXPONENT);
        }
        self.sort(&mut hits);
        Ok(hits)
    }

    /// Calls `visit(field, tool, term frequency, field length)` for every posting of `term`.
    fn postings(
        &self,
        term: &str,
        mut visit: impl FnMut(SearchField, usize, u32, u32),
    ) -> Result<(), SearchError> {
        let searcher = self.reader.searcher();
        for (segment, ords) in searcher.segment_readers().iter().zip(&self.ords) {
            for field in SearchField::ALL {
                let tantivy_field = self.fields.get(field);
                let inverted = segment.inverted_index(tantivy_field)?;
                let key = Term::from_field_text(tantivy_field, term);
                let Some(mut postings) =
                    inverted.read_postings(&key, IndexRecordOption::WithFreqs)?
                else {
                    continue;
                };
                let norms = segment.get_fieldnorms_reader(tantivy_field)?;
                while postings.doc() != TERMINATED {
                    let doc = postings.doc();
                    visit(
                        field,
                        ords[doc as usize],
                        postings.term_freq(),
                        norms.fieldnorm(doc),
                    );
                    postings.advance();
                }
            }
        }
        Ok(())
    }

    /// Which of the query's words each matching tool covers.
    fn coverage(&self, terms: &[QueryTerm]) -> Result<HashMap<usize, u64>, SearchError> {
        let mut coverage: HashMap<usize, u64> = HashMap::new();
        for term in terms {
            self.postings(&term.text, |_, doc, _, _| {
                *coverage.entry(doc).or_default() |= term.concepts;
            })?;
        }
        Ok(coverage)
    }

    fn bm25f(&self, terms: &[QueryTerm]) -> Result<Vec<Hit>, SearchError> {
        let mut scores: HashMap<usize, f32> = HashMap::new();
        for term in terms {
            let mut pseudo: HashMap<usize, f32> = HashMap::new();
            self.postings(&term.text, |field, doc, tf, len| {
                let avg_len = self.avg_len[field as usize];
                *pseudo.entry(doc).or_default() += self.params.weighted_tf(field, tf, len, avg_len);
            })?;
            let idf = bm25f::idf(
                self.num_docs,
                u32::try_from(pseudo.len()).unwrap_or(u32::MAX),
            );
            for (doc, tf) in pseudo {
                *scores.entry(doc).or_default() += term.weight * self.params.term_score(idf, tf);
            }
        }
        Ok(into_hits(scores))
    }

    fn tantivy_boosted_sum(&self, terms: &[QueryTerm]) -> Result<Vec<Hit>, SearchError> {
        let clauses = terms
            .iter()
            .flat_map(|term| {
                SearchField::ALL.into_iter().map(move |field| {
                    let weight = self.params.field(field).weight * term.weight;
                    term_clause(self.fields.get(field), &term.text, weight)
                })
            })
            .collect();
        self.run_tantivy(&self.reader, &self.ords, &BooleanQuery::new(clauses))
    }

    fn single_field(&self, terms: &[QueryTerm]) -> Result<Vec<Hit>, SearchError> {
        if self.single_field.get().is_none() {
            // Two threads may both build it; the first one kept wins, the same either way.
            let _ = self
                .single_field
                .set(index::build_single_field(&self.docs)?);
        }
        let Some(single) = self.single_field.get() else {
            return Ok(Vec::new());
        };
        let clauses = terms
            .iter()
            .map(|term| term_clause(single.field, &term.text, term.weight))
            .collect();
        self.run_tantivy(&single.reader, &single.ords, &BooleanQuery::new(clauses))
    }

    fn run_tantivy(
        &self,
        reader: &IndexReader,
        ords: &[Vec<usize>],
        query: &BooleanQuery,
    ) -> Result<Vec<Hit>, SearchError> {
        let searcher = reader.searcher();
        let limit = self.docs.len().max(1);
        let top = tantivy::collector::TopDocs::with_limit(limit).order_by_score();
        let found = searcher.search(query, &top)?;
        Ok(found
            .into_iter()
            .map(|(score, address)| Hit {
                doc: ords[address.segment_ord as usize][address.doc_id as usize],
                score,
            })
            .collect())
    }
}

fn term_clause(field: Field, text: &str, weight: f32) -> (Occur, Box<dyn Query>) {
    let query = TermQuery::new(
        Term::from_field_text(field, text),
        IndexRecordOption::WithFreqs,
    );
    (
        Occur::Should,
        Box::new(BoostQuery::new(Box::new(query), weight)),
    )
}

fn into_hits(scores: HashMap<usize, f32>) -> Vec<Hit> {
    scores
        .into_iter()
        .map(|(doc, score)| Hit { doc, score })
        .collect()
}
