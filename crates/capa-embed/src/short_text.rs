//! One short text through the encoder on the calling thread: a query, embedded while someone
//! waits.
//!
//! Through candle, a ten-token query was some hundred tensor operations, each allocating its
//! result, some handing work to rayon's threads and back; the arithmetic is a few milliseconds
//! of multiply-adds over the dense weights. Here the same computation runs over plain vectors
//! with no thread hand-off: the dense products by
//! [`Weights::linear`](crate::weights::Weights::linear), attention and GELU in SIMD
//! operations too, layer norms and pooling in plain loops. The layers are the same
//! [`Bert`]'s, so both paths use the same weights; tests/model.rs checks both against the float64
//! reference and against each other.

use candle_core::{Result, bail};
use pulp::{Arch, Simd, WithSimd};

use crate::bert::{Bert, Dense, Layer};
use crate::few_tokens;
use crate::gelu::gelu_each;
use crate::q8_rows::widen_blocks;

impl Bert {
    /// The sentence vector of one text of at most [`few_tokens::MAX_ROWS`] tokens: mean pooling
    /// over its tokens, then unit length (what [`Bert::forward`] and
    /// `bert::mean_pool_normalised` give for a batch of one).
    pub(crate) fn embed_short(&self, ids: &[u32]) -> Result<Vec<f32>> {
        if ids.is_empty() || ids.len() > few_tokens::MAX_ROWS {
            bail!("{} tokens is not a short text", ids.len());
        }
        let mut states = self.embed_tokens(ids)?;
        for layer in &self.layers {
            states = layer.forward_short(&states, ids.len());
        }
        Ok(mean_unit(&states, ids.len()))
    }

    /// Each token's word, position and segment vectors summed, then normalised.
    fn embed_tokens(&self, ids: &[u32]) -> Result<Vec<f32>> {
        let embeddings = &self.embeddings;
        let hidden = embeddings.positions.hidden_size();
        let words = embeddings.words.data()?;
        let vocabulary = embeddings
            .words
            .shape()
            .dims()
            .first()
            .copied()
            .unwrap_or(1);
        let row_bytes = words.len() / vocabulary.max(1);
        let positions = embeddings
            .positions
            .embeddings()
            .narrow(0, 0, ids.len())?
            .flatten_all()?
            .to_vec1::<f32>()?;
        // Sentences are single segments: every token's type is 0.
        let segment = embeddings
            .token_types
            .embeddings()
            .get(0)?
            .to_vec1::<f32>()?;
        let mut states = vec![0f32; ids.len() * hidden];
        for ((&id, state), position) in ids
            .iter()
            .zip(states.chunks_exact_mut(hidden))
            .zip(positions.chunks_exact(hidden))
        {
            let at = usize::try_from(id).unwrap_or(usize::MAX);
            let Some(word) = at
                .checked_mul(row_bytes)
                .and_then(|start| words.get(start..start + row_bytes))
            else {
                bail!("token {id} is not in the vocabulary");
            };
            widen_blocks(word, state);
            for ((v, p), s) in state.iter_mut().zip(position).zip(&segment) {
                *v += p + s;
            }
            embeddings.norm.apply(state);
        }
        Ok(states)
    }
}

impl Layer {
    /// One encoder layer over `tokens` token vectors (row after row).
    fn forward_short(&self, states: &[f32], tokens: usize) -> Vec<f32> {
        let query = product(&self.query, states, tokens);
        let key = product(&self.key, states, tokens);
        let value = product(&self.value, states, tokens);
        let context = self.attend(&query, &key, &value, tokens);
        let mut attended = product(&self.attention_out, &context, tokens);
        add(&mut attended, states);
        self.attention_norm.apply_each(&mut attended);
        let mut inner = product(&self.intermediate, &attended, tokens);
        gelu_each(&mut inner);
        let mut out = product(&self.output, &inner, tokens);
        add(&mut out, &attended);
        self.output_norm.apply_each(&mut out);
        out
    }

    /// Scaled dot-product attention, head by head: every token attends to every token (one
    /// text: no padding to mask).
    fn attend(&self, query: &[f32], key: &[f32], value: &[f32], tokens: usize) -> Vec<f32> {
        let mut context = vec![0f32; tokens * self.heads * self.head_size];
        Arch::new().dispatch(Attend {
            query,
            key,
            value,
            tokens,
            heads: self.heads,
            head_size: self.head_size,
            context: &mut context,
        });
        context
    }
}

/// [`Layer::attend`]'s arithmetic, in the SIMD registers the CPU has.
struct Attend<'a> {
    query: &'a [f32],
    key: &'a [f32],
    value: &'a [f32],
    tokens: usize,
    heads: usize,
    head_size: usize,
    context: &'a mut [f32],
}

impl WithSimd for Attend<'_> {
    type Output = ();

    #[expect(
        clippy::inline_always,
        reason = "pulp turns on the CPU's SIMD features only for code inlined into its dispatch"
    )]
    #[inline(always)]
    fn with_simd<S: Simd>(self, simd: S) {
        let Self {
            query,
            key,
            value,
            tokens,
            heads,
            head_size,
            context,
        } = self;
        let hidden = heads * head_size;
        #[expect(
            clippy::cast_precision_loss,
            reason = "a head's size (32) is exact as an f32"
        )]
        let scale = 1.0 / (head_size as f32).sqrt();
        let mut weights = vec![0f32; tokens];
        for head in 0..heads {
            let span = |token: usize| {
                let at = token * hidden + head * head_size;
                at..at + head_size
            };
            for token in 0..tokens {
                let q = S::as_simd_f32s(&query[span(token)]);
                for (other, weight) in weights.iter_mut().enumerate() {
                    let k = S::as_simd_f32s(&key[span(other)]);
                    let mut sum = simd.splat_f32s(0.0);
                    for (a, b) in q.0.iter().zip(k.0) {
                        sum = simd.mul_add_e_f32s(*a, *b, sum);
                    }
                    *weight = (simd.reduce_sum_f32s(sum) + dot(q.1, k.1)) * scale;
                }
                softmax(&mut weights);
                let (out, out_rest) = S::as_mut_simd_f32s(&mut context[span(token)]);
                for (other, &weight) in weights.iter().enumerate() {
                    let (v, v_rest) = S::as_simd_f32s(&value[span(other)]);
                    let splat = simd.splat_f32s(weight);
                    for (o, v) in out.iter_mut().zip(v) {
                        *o = simd.mul_add_e_f32s(splat, *v, *o);
                    }
                    for (o, v) in out_rest.iter_mut().zip(v_rest) {
                        *o += weight * v;
                    }
                }
            }
        }
    }
}

/// `x` (`tokens` rows) through a dense layer.
fn product(dense: &Dense, x: &[f32], tokens: usize) -> Vec<f32> {
    dense.weight.linear(x, tokens, &dense.bias_values)
}

/// `out[i] += residual[i]`: a layer's input added back to its output.
fn add(out: &mut [f32], residual: &[f32]) {
    for (o, r) in out.iter_mut().zip(residual) {
        *o += r;
    }
}

fn dot(a: &[f32], b: &[f32]) -> f32 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

/// In place: exp of each value less the largest, over their sum.
fn softmax(values: &mut [f32]) {
    let largest = values.iter().fold(f32::NEG_INFINITY, |m, &v| m.max(v));
    let mut sum = 0.0;
    for v in values.iter_mut() {
        *v = (*v - largest).exp();
        sum += *v;
    }
    for v in values.iter_mut() {
        *v /= sum;
    }
}

/// The tokens' mean, scaled to unit length (a zero vector stays zero).
fn mean_unit(states: &[f32], tokens: usize) -> Vec<f32> {
    let hidden = states.len() / tokens.max(1);
    let mut mean = vec![0f32; hidden];
    for row in states.chunks_exact(hidden.max(1)) {
        for (m, v) in mean.iter_mut().zip(row) {
            *m += v;
        }
    }
    #[expect(
        clippy::cast_precision_loss,
        reason = "at most 64 tokens: exact as an f32"
    )]
    let count = tokens as f32;
    for m in &mut mean {
        *m /= count;
    }
    let norm = mean.iter().map(|v| v * v).sum::<f32>().sqrt().max(1e-12);
    for m in &mut mean {
        *m /= norm;
    }
    mean
}
