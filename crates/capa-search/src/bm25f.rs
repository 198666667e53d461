//! BM25F (Robertson, Zaragoza & Taylor, "Simple BM25 extension to multiple weighted fields",
//! 2004): each field's term frequency is normalised by that field's length, weighted, and the
//! weighted frequencies are summed into one pseudo-frequency *before* the saturation curve. That
//! is the difference from summing per-field BM25 scores (what tantivy's boosted queries do): a
//! word that appears in a tool's name and its description saturates once, so a tool cannot win
//! by repeating a word across fields, and a short name field counts for more than a long one.
//!
//! ```text
//! tf~(t, d) = Σ_f  w_f · tf(t, d, f) / (1 − b_f + b_f · len(d, f) / avglen_f)
//! score(q, d) = Σ_t  idf(t) · tf~ · (k1 + 1) / (k1 + tf~)
//! idf(t) = ln(1 + (N − df + 0.5) / (df + 0.5)),  df = documents with t in any field
//! ```

use crate::index::SearchField;

/// Weight and length normalisation of one field.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FieldParams {
    pub weight: f32,
    /// 0 = no length normalisation, 1 = full.
    pub b: f32,
}

/// The BM25F parameters.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Bm25fParams {
    pub k1: f32,
    pub name: FieldParams,
    pub description: FieldParams,
    pub params: FieldParams,
}

impl Default for Bm25fParams {
    /// Names weigh most: a tool's name is its most precise summary. Descriptions vary from one
    /// line to pages, so they are normalised fully; names and parameter lists less.
    fn default() -> Self {
        Self {
            k1: 1.2,
            name: FieldParams {
                weight: 3.0,
                b: 0.5,
            },
            description: FieldParams {
                weight: 1.0,
                b: 0.75,
            },
            params: FieldParams {
                weight: 1.5,
                b: 0.5,
            },
        }
    }
}

impl Bm25fParams {
    pub fn field(&self, field: SearchField) -> FieldParams {
        match field {
            SearchField::Name => self.name,
            SearchField::Description => self.description,
            SearchField::Params => self.params,
        }
    }

    /// One field's contribution to the pseudo-frequency.
    pub fn weighted_tf(&self, field: SearchField, tf: u32, len: u32, avg_len: f32) -> f32 {
        let FieldParams { weight, b } = self.field(field);
        let relative = if avg_len > 0.0 {
            len as f32 / avg_len
        } else {
            1.0
        };
        weight * tf as f32 / (1.0 - b + b * relative)
    }

    /// Saturates the summed pseudo-frequency of one term.
    pub fn term_score(&self, idf: f32, pseudo_tf: f32) -> f32 {
        idf * pseudo_tf * (self.k1 + 1.0) / (self.k1 + pseudo_tf)
    }
}

/// BM25's IDF (the "+1" form, never negative), over documents that have the term in any field.
pub fn idf(num_docs: u32, doc_freq: u32) -> f32 {
    let n = num_docs as f32;
    let df = doc_freq as f32;
    (1.0 + (n - df + 0.5) / (df + 0.5)).ln()
}
