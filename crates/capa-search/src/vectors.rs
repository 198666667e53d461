//! The tools' vectors as the hybrid scans them: eight bits a value, one block of memory.
//!
//! Every search compares the query with every tool. As 384 f32s behind a pointer each, 7,400
//! tools are 11 MB read per query, competing with the sentence model's weights for the
//! processor's cache. As one byte a value with a scale per vector they are 2.8 MB in one block,
//! and the product is integer arithmetic in SIMD registers (`crate::dot`). The rounding moves a
//! cosine by at most 0.003 here and every measure of the labelled sets by at most 0.004
//! (docs/code-mode.md, "Ranking by meaning").

use crate::dot::for_each_dot;

/// Each embedded tool's vector as `i8` codes times a scale, in document order.
#[derive(Debug, Clone, Default)]
pub(crate) struct PackedVectors {
    /// Values per vector; every vector has the same.
    dims: usize,
    /// The codes of each embedded tool's vector, one after the other.
    codes: Vec<i8>,
    /// Per embedded tool: its document and its scale (a value is code × scale).
    rows: Vec<(usize, f32)>,
    /// Per document: whether it has a vector.
    present: Vec<bool>,
}

/// The largest code: values are scaled so that the largest in magnitude is ±127.
const CODE_MAX: f32 = 127.0;

/// The longest vector packed: its dot product, at most `MAX_DIMS` × 127² (16.5 million), is
/// exact in an `i32` and as an f32 (2²⁴). The model's vectors have 384 values; longer ones are
/// left out as if missing rather than summed wrong.
const MAX_DIMS: usize = 1024;

impl PackedVectors {
    /// Packs `vectors` (document order, `None` for a tool without one). A vector of another
    /// length than the first, longer than [`MAX_DIMS`], or with a value that is not finite, is
    /// left out as if missing.
    pub(crate) fn pack(vectors: &[Option<Vec<f32>>]) -> Self {
        let dims = vectors.iter().flatten().map(Vec::len).next().unwrap_or(0);
        let dims = if dims > MAX_DIMS { 0 } else { dims };
        let mut packed = Self {
            dims,
            present: vec![false; vectors.len()],
            ..Self::default()
        };
        for (doc, vector) in vectors.iter().enumerate() {
            let Some(vector) = vector else { continue };
            if dims == 0 || vector.len() != dims || !vector.iter().all(|v| v.is_finite()) {
                continue;
            }
            let scale = quantize_into(vector, &mut packed.codes);
            packed.rows.push((doc, scale));
            packed.present[doc] = true;
        }
        packed
    }

    /// How many documents the vectors were given for.
    pub(crate) fn len(&self) -> usize {
        self.present.len()
    }

    /// How many documents have a vector.
    pub(crate) fn embedded(&self) -> usize {
        self.rows.len()
    }

    pub(crate) fn has_vector(&self, doc: usize) -> bool {
        self.present.get(doc).copied().unwrap_or(false)
    }

    /// Every embedded document whose similarity to `query` (the dot product, a cosine for unit
    /// vectors) is at least `floor`, with that similarity, in document order. Empty when `query`
    /// has another length or a value that is not finite.
    pub(crate) fn at_least(&self, query: &[f32], floor: f32) -> Vec<(usize, f32)> {
        if query.len() != self.dims || !query.iter().all(|v| v.is_finite()) {
            return Vec::new();
        }
        let mut query_codes = Vec::with_capacity(query.len());
        let query_scale = quantize_into(query, &mut query_codes);
        let mut out = Vec::new();
        for_each_dot(&self.codes, self.dims, &query_codes, |row, product| {
            let Some(&(doc, scale)) = self.rows.get(row) else {
                return;
            };
            // At most 16.5 million in magnitude ([`MAX_DIMS`]): exact as an f32.
            let similarity = product as f32 * query_scale * scale;
            if similarity >= floor {
                out.push((doc, similarity));
            }
        });
        out
    }
}

/// Appends `vector`'s codes to `codes` and returns its scale. An all-zero vector has scale 0.
fn quantize_into(vector: &[f32], codes: &mut Vec<i8>) -> f32 {
    let largest = vector.iter().fold(0.0f32, |m, v| m.max(v.abs()));
    if largest == 0.0 {
        codes.extend(std::iter::repeat_n(0, vector.len()));
        return 0.0;
    }
    let scale = largest / CODE_MAX;
    codes.extend(vector.iter().map(|v| {
        #[expect(
            clippy::cast_possible_truncation,
            reason = "in [-127, 127] by construction (the largest magnitude is 127 codes), so the \
                      cast neither wraps nor saturates"
        )]
        let code = (v / scale).round() as i8;
        code
    }));
    scale
}

#[cfg(test)]
mod tests {
    use super::*;

    fn unit(values: &[f32]) -> Vec<f32> {
        let norm = values.iter().map(|v| v * v).sum::<f32>().sqrt();
        values.iter().map(|v| v / norm).collect()
    }

    /// A deterministic pseudo-random unit vector.
    fn sample(seed: u64, dims: usize) -> Vec<f32> {
        let mut state = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
        let values: Vec<f32> = (0..dims)
            .map(|_| {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                (state >> 40) as f32 / (1u64 << 24) as f32 - 0.5
            })
            .collect();
        unit(&values)
    }

    #[test]
    fn similarities_stay_within_a_few_thousandths_of_the_exact_cosine() {
        let tools: Vec<Vec<f32>> = (0..300).map(|i| sample(i, 384)).collect();
        let packed = PackedVectors::pack(&tools.iter().cloned().map(Some).collect::<Vec<_>>());
        for q in 1000..1010 {
            let query = sample(q, 384);
            let all = packed.at_least(&query, f32::MIN);
            assert_eq!(all.len(), tools.len());
            for (doc, similarity) in all {
                let exact: f32 = tools[doc].iter().zip(&query).map(|(a, b)| a * b).sum();
                assert!(
                    (similarity - exact).abs() < 0.005,
                    "{similarity} against {exact}"
                );
            }
        }
        // A vector with itself: a cosine of one, within the rounding.
        let (_, own) = packed.at_least(&tools[7], f32::MIN)[7];
        assert!((own - 1.0).abs() < 0.005, "{own}");
    }

    #[test]
    fn missing_damaged_and_odd_sized_vectors_are_left_out() {
        let packed = PackedVectors::pack(&[
            Some(vec![0.6, 0.8]),
            None,
            Some(vec![1.0, 0.0, 0.0]),
            Some(vec![f32::NAN, 1.0]),
            Some(vec![0.0, 0.0]),
            Some(vec![-0.8, 0.6]),
        ]);
        assert_eq!(packed.len(), 6);
        assert_eq!(packed.embedded(), 3);
        let docs: Vec<usize> = (0..6).filter(|&d| packed.has_vector(d)).collect();
        assert_eq!(docs, [0, 4, 5]);
        assert!(!packed.has_vector(60));
        let got = packed.at_least(&[0.6, 0.8], f32::MIN);
        assert_eq!(got.len(), 3);
        assert_eq!((got[0].0, got[1].0, got[2].0), (0, 4, 5));
        assert!((got[0].1 - 1.0).abs() < 0.01, "{got:?}");
        assert!(
            got[1].1.abs() < f32::EPSILON,
            "a zero vector is similar to nothing"
        );
        assert!(got[2].1.abs() < 0.01, "{got:?}");
        // A query of another length, or not finite, matches nothing rather than misreading.
        assert!(packed.at_least(&[1.0, 0.0, 0.0], f32::MIN).is_empty());
        assert!(packed.at_least(&[f32::INFINITY, 0.0], f32::MIN).is_empty());
        assert!(PackedVectors::pack(&[]).at_least(&[], f32::MIN).is_empty());
        // Longer than MAX_DIMS: left out rather than summed past an i32.
        let long = PackedVectors::pack(&[Some(vec![1.0; MAX_DIMS + 1]), Some(vec![1.0; 3])]);
        assert_eq!((long.len(), long.embedded()), (2, 0));
        assert!(long.at_least(&[1.0; MAX_DIMS + 1], f32::MIN).is_empty());
        let widest = PackedVectors::pack(&[Some(vec![-1.0; MAX_DIMS])]);
        let (_, own) = widest.at_least(&[-1.0; MAX_DIMS], f32::MIN)[0];
        assert!((own - MAX_DIMS as f32).abs() < f32::EPSILON, "{own}");
        // The floor: the orthogonal vector and the zero one are under a tenth.
        let near: Vec<usize> = packed
            .at_least(&[0.6, 0.8], 0.1)
            .iter()
            .map(|h| h.0)
            .collect();
        assert_eq!(near, [0]);
    }

    #[test]
    fn the_largest_value_becomes_the_largest_code() {
        let mut codes = Vec::new();
        let scale = quantize_into(&[0.5, -1.0, 0.25, 0.0], &mut codes);
        assert_eq!(codes, [64, -127, 32, 0]);
        assert!((scale - 1.0 / 127.0).abs() < f32::EPSILON);
    }
}
