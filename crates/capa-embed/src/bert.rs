//! The BERT encoder all-MiniLM-L6-v2 is made of, as the Hugging Face `BertModel` computes it
//! (post-layer-norm, exact GELU, absolute positions), inference only.
//!
//! Written against candle's tensors rather than taken from candle-transformers: that crate
//! carries a hundred other models, which would double the build of a crate that needs one.

use candle_core::quantized::{GgmlDType, QStorage, QTensor};
use candle_core::{D, DType, Device, Module, Result, Tensor};
use candle_nn::{Embedding, LayerNorm, Linear, VarBuilder, embedding, layer_norm};
use serde::Deserialize;

use crate::few_tokens;
use crate::q8_rows::Q8Rows;
use crate::weights::Weights;

/// The fields of the model's `config.json` this encoder reads.
#[derive(Debug, Clone, Deserialize, PartialEq)]
pub(crate) struct BertConfig {
    pub vocab_size: usize,
    pub hidden_size: usize,
    pub num_hidden_layers: usize,
    pub num_attention_heads: usize,
    pub intermediate_size: usize,
    pub max_position_embeddings: usize,
    pub type_vocab_size: usize,
    pub layer_norm_eps: f64,
    #[serde(default = "gelu")]
    pub hidden_act: String,
}

fn gelu() -> String {
    "gelu".to_owned()
}

pub(crate) struct Embeddings {
    pub(crate) words: QTensor,
    pub(crate) positions: Embedding,
    pub(crate) token_types: Embedding,
    pub(crate) norm: Norm,
}

impl Embeddings {
    fn load(vb: &VarBuilder, config: &BertConfig) -> Result<Self> {
        Ok(Self {
            // The vocabulary's table is half the model (30,522 × 384) and is only looked up,
            // never multiplied: kept in 8 bits (blocks of 32 values sharing one scale), it is
            // 12 MiB instead of 45, and each looked-up row is widened back to f32 before any
            // arithmetic (tests/model.rs compares the vectors with a float64 reference).
            words: q8_0(
                &vb.pp("word_embeddings"),
                config.vocab_size,
                config.hidden_size,
            )?,
            positions: embedding(
                config.max_position_embeddings,
                config.hidden_size,
                vb.pp("position_embeddings"),
            )?,
            token_types: embedding(
                config.type_vocab_size,
                config.hidden_size,
                vb.pp("token_type_embeddings"),
            )?,
            norm: Norm::load(config, &vb.pp("LayerNorm"))?,
        })
    }

    /// `ids`: `[batch, tokens]` of u32.
    fn forward(&self, ids: &Tensor) -> Result<Tensor> {
        let (_, len) = ids.dims2()?;
        let positions = Tensor::arange(0u32, u32::try_from(len).unwrap_or(u32::MAX), ids.device())?
            .unsqueeze(0)?;
        // Sentences are single segments: every token type is 0.
        let types = ids.zeros_like()?;
        let sum = self
            .words
            .embedding(ids)?
            .broadcast_add(&self.positions.forward(&positions)?)?
            .broadcast_add(&self.token_types.forward(&types)?)?;
        self.norm.forward(&sum)
    }
}

/// A `rows` × `width` weight in `Q8_0` blocks (each run of 32 values one f16 scale and 32 signed
/// bytes): read as such from a packed file (scripts/model-pack.py writes, under `q8_0`, the blocks
/// this would make), else quantised from the original's f32 `weight`. Either way the hub holds the
/// same numbers, so a packed model gives the original's vectors bit for bit.
fn q8_0(vb: &VarBuilder, rows: usize, width: usize) -> Result<QTensor> {
    if !vb.contains_tensor(PACKED) {
        return QTensor::quantize(&vb.get((rows, width), "weight")?, GgmlDType::Q8_0);
    }
    let dtype = GgmlDType::Q8_0;
    let blocks = vb.get_unchecked_dtype(PACKED, DType::U8)?;
    let expected = (rows, width / dtype.block_size() * dtype.type_size());
    // Checked here, not by candle: its loader trusts the length and alignment it is given.
    if !width.is_multiple_of(dtype.block_size()) || blocks.dims2()? != expected {
        candle_core::bail!(
            "{PACKED} is {:?}, not {expected:?} (Q8_0 blocks of a {rows} x {width} table)",
            blocks.dims()
        );
    }
    let bytes = blocks.flatten_all()?.to_vec1::<u8>()?;
    // A block starts with its f16 scale: candle reads the bytes as blocks in place, so they
    // must be 2-aligned (every allocator here aligns to 16 or more; checked, not assumed).
    if bytes
        .as_ptr()
        .align_offset(std::mem::align_of::<half::f16>())
        != 0
    {
        candle_core::bail!("{PACKED}: the blocks' buffer is not aligned for f16 scales");
    }
    let storage = QStorage::from_data(std::borrow::Cow::Borrowed(&bytes), &device(), dtype)?;
    QTensor::new(storage, (rows, width))
}

/// The name `scripts/model-pack.py` stores a weight's `Q8_0` blocks under, beside where the
/// original has its f32 `weight`.
const PACKED: &str = "q8_0";

/// A layer norm: candle's for batches, and its parameters as plain numbers for one short text
/// (`crate::short_text`).
pub(crate) struct Norm {
    candle: LayerNorm,
    weight: Vec<f32>,
    bias: Vec<f32>,
    eps: f32,
}

impl Norm {
    fn load(config: &BertConfig, vb: &VarBuilder) -> Result<Self> {
        let candle = layer_norm(config.hidden_size, config.layer_norm_eps, vb.clone())?;
        let weight = candle.weight().to_vec1()?;
        let bias = match candle.bias() {
            Some(bias) => bias.to_vec1()?,
            None => vec![0.0; weight.len()],
        };
        #[expect(
            clippy::cast_possible_truncation,
            reason = "the model's epsilon (1e-12) is an f32 as candle's f32 kernel uses it"
        )]
        let eps = config.layer_norm_eps as f32;
        Ok(Self {
            candle,
            weight,
            bias,
            eps,
        })
    }

    fn forward(&self, states: &Tensor) -> Result<Tensor> {
        self.candle.forward(states)
    }

    /// Normalises one token's vector in place, in f32 as candle does, with the variance taken
    /// over the centred values (candle's fused kernel takes E[x²] − mean² in one pass; they
    /// agree within f32 rounding, which tests/model.rs holds against the reference).
    pub(crate) fn apply(&self, row: &mut [f32]) {
        let n = row.len() as f32;
        let mean = row.iter().sum::<f32>() / n;
        let variance = row.iter().map(|v| (v - mean) * (v - mean)).sum::<f32>() / n;
        let scale = 1.0 / (variance + self.eps).sqrt();
        for ((v, w), b) in row.iter_mut().zip(&self.weight).zip(&self.bias) {
            *v = (*v - mean) * scale * w + b;
        }
    }

    /// [`Norm::apply`] to each token's vector of `rows` (one after the other).
    pub(crate) fn apply_each(&self, rows: &mut [f32]) {
        for row in rows.chunks_exact_mut(self.weight.len().max(1)) {
            self.apply(row);
        }
    }
}

/// A linear layer whose weights are held in `Q8_0` blocks ([`q8_0`]): a quarter of the memory
/// of f32 (the encoder's six layers are 42 MiB in f32, 11 in blocks) and of the bytes a query's
/// pass reads. A query's few tokens go through [`Weights::linear`]: where the CPU has AVX-512
/// VNNI, an integer product over the codes with the tokens in 16 bits (`q8_tiles`); elsewhere
/// [`few_tokens`], which widens each weight row to f32 as it uses it. Longer texts (the tools',
/// in batches) go through candle's product, on weights widened for that pass to the same f32
/// values (a block's scale times a byte is exact in f32). What 8 bits cost in search quality is
/// measured in docs/benchmarks.md; vectors stay within a cosine of 0.9995 of the float64
/// reference (tests/model.rs).
pub(crate) struct Dense {
    pub(crate) weight: Weights,
    bias: Tensor,
    /// `bias` as plain numbers, for the few-token product.
    pub(crate) bias_values: Vec<f32>,
}

impl Dense {
    fn load(input: usize, output: usize, vb: &VarBuilder) -> Result<Self> {
        let bias = vb.get(output, "bias")?;
        Ok(Self {
            weight: Weights::new(Q8Rows::from_q8_0(
                &q8_0(vb, output, input)?.data()?,
                output,
                input,
            )?),
            bias_values: bias.to_vec1()?,
            bias,
        })
    }

    /// `states`: `[batch, tokens, input]`.
    fn forward(&self, states: &Tensor) -> Result<Tensor> {
        let (batch, len, _) = states.dims3()?;
        let rows = batch * len;
        if rows > few_tokens::MAX_ROWS {
            let wide = Linear::new(self.weight.to_tensor(&device())?, Some(self.bias.clone()));
            return wide.forward(states);
        }
        let x = states.flatten_all()?.to_vec1::<f32>()?;
        let out = self.weight.linear(&x, rows, &self.bias_values);
        Tensor::from_vec(out, (batch, len, self.bias_values.len()), states.device())
    }
}

pub(crate) struct Layer {
    pub(crate) query: Dense,
    pub(crate) key: Dense,
    pub(crate) value: Dense,
    pub(crate) attention_out: Dense,
    pub(crate) attention_norm: Norm,
    pub(crate) intermediate: Dense,
    pub(crate) output: Dense,
    pub(crate) output_norm: Norm,
    pub(crate) heads: usize,
    pub(crate) head_size: usize,
}

impl Layer {
    fn load(vb: &VarBuilder, config: &BertConfig) -> Result<Self> {
        let hidden = config.hidden_size;
        let attention = vb.pp("attention");
        let this = attention.pp("self");
        Ok(Self {
            query: Dense::load(hidden, hidden, &this.pp("query"))?,
            key: Dense::load(hidden, hidden, &this.pp("key"))?,
            value: Dense::load(hidden, hidden, &this.pp("value"))?,
            attention_out: Dense::load(hidden, hidden, &attention.pp("output").pp("dense"))?,
            attention_norm: Norm::load(config, &attention.pp("output").pp("LayerNorm"))?,
            intermediate: Dense::load(
                hidden,
                config.intermediate_size,
                &vb.pp("intermediate").pp("dense"),
            )?,
            output: Dense::load(
                config.intermediate_size,
                hidden,
                &vb.pp("output").pp("dense"),
            )?,
            output_norm: Norm::load(config, &vb.pp("output").pp("LayerNorm"))?,
            heads: config.num_attention_heads,
            head_size: hidden / config.num_attention_heads,
        })
    }

    /// `states`: `[batch, tokens, hidden]`; `mask`: `[batch, 1, 1, tokens]`, 0 for real tokens
    /// and a large negative number for padding, added to the attention scores.
    fn forward(&self, states: &Tensor, mask: &Tensor) -> Result<Tensor> {
        let (batch, len, hidden) = states.dims3()?;
        let split = |t: Tensor| -> Result<Tensor> {
            t.reshape((batch, len, self.heads, self.head_size))?
                .transpose(1, 2)?
                .contiguous()
        };
        let q = split(self.query.forward(states)?)?;
        let k = split(self.key.forward(states)?)?;
        let v = split(self.value.forward(states)?)?;
        let scale = 1.0 / (self.head_size as f64).sqrt();
        let scores = (q.matmul(&k.t()?.contiguous()?)? * scale)?.broadcast_add(mask)?;
        let probs = candle_nn::ops::softmax_last_dim(&scores)?;
        let context = probs
            .matmul(&v)?
            .transpose(1, 2)?
            .contiguous()?
            .reshape((batch, len, hidden))?;
        let attended = self
            .attention_norm
            .forward(&(self.attention_out.forward(&context)? + states)?)?;
        let inner = self.intermediate.forward(&attended)?.gelu_erf()?;
        self.output_norm
            .forward(&(self.output.forward(&inner)? + attended)?)
    }
}

/// The encoder: token ids in, one vector per token out.
pub(crate) struct Bert {
    pub(crate) embeddings: Embeddings,
    pub(crate) layers: Vec<Layer>,
}

impl Bert {
    pub(crate) fn load(vb: &VarBuilder, config: &BertConfig) -> Result<Self> {
        let layers = (0..config.num_hidden_layers)
            .map(|i| Layer::load(&vb.pp("encoder").pp("layer").pp(i), config))
            .collect::<Result<_>>()?;
        Ok(Self {
            embeddings: Embeddings::load(&vb.pp("embeddings"), config)?,
            layers,
        })
    }

    /// `ids` and `attention`: `[batch, tokens]` of u32, attention 1 for real tokens and 0 for
    /// padding. Returns `[batch, tokens, hidden]`.
    pub(crate) fn forward(&self, ids: &Tensor, attention: &Tensor) -> Result<Tensor> {
        let mask = additive_mask(attention)?;
        let mut states = self.embeddings.forward(ids)?;
        for layer in &self.layers {
            states = layer.forward(&states, &mask)?;
        }
        Ok(states)
    }
}

/// 0 where `attention` is 1, a large negative number where it is 0, shaped to broadcast over
/// heads and query positions.
fn additive_mask(attention: &Tensor) -> Result<Tensor> {
    let (batch, len) = attention.dims2()?;
    let keep = attention.to_dtype(DType::F32)?;
    // (keep - 1) * 10_000: 0 for tokens, -10,000 for padding (exp() of it is 0 in f32).
    ((keep - 1.0)? * 10_000.0)?.reshape((batch, 1, 1, len))
}

/// Mean of the token vectors where `attention` is 1, then scaled to unit length:
/// sentence-transformers' mean pooling followed by its Normalize module.
pub(crate) fn mean_pool_normalised(states: &Tensor, attention: &Tensor) -> Result<Tensor> {
    let mask = attention.to_dtype(DType::F32)?.unsqueeze(2)?;
    let summed = states.broadcast_mul(&mask)?.sum(1)?;
    let counts = mask.sum(1)?.clamp(1e-9, f64::MAX)?;
    let mean = summed.broadcast_div(&counts)?;
    let norms = mean
        .sqr()?
        .sum_keepdim(D::Minus1)?
        .sqrt()?
        .clamp(1e-12, f64::MAX)?;
    mean.broadcast_div(&norms)
}

/// The CPU: the only device the hub uses.
pub(crate) fn device() -> Device {
    Device::Cpu
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use super::*;

    fn builder(tensors: Vec<(&str, Tensor)>) -> VarBuilder<'static> {
        let map: HashMap<String, Tensor> = tensors
            .into_iter()
            .map(|(k, v)| (k.to_owned(), v))
            .collect();
        VarBuilder::from_tensors(map, DType::F32, &device())
    }

    #[test]
    fn packed_blocks_are_the_blocks_quantising_the_original_makes() {
        let values: Vec<f32> = (0..4 * 64)
            .map(|i| ((i * 37 % 101) as f32 - 50.0) / 7.0)
            .collect();
        let original = Tensor::from_vec(values, (4, 64), &device()).expect("tensor");
        let quantised = QTensor::quantize(&original, GgmlDType::Q8_0).expect("quantises");
        let blocks = quantised.data().expect("raw blocks").to_vec();
        assert_eq!(blocks.len(), 4 * 2 * 34);
        let packed = Tensor::from_vec(blocks, (4, 68), &device()).expect("tensor");
        let words = q8_0(&builder(vec![(PACKED, packed)]), 4, 64).expect("loads the packed table");
        let a = words.dequantize(&device()).expect("dequantises");
        let b = quantised.dequantize(&device()).expect("dequantises");
        let (a, b) = (
            a.flatten_all()
                .and_then(|t| t.to_vec1::<f32>())
                .expect("values"),
            b.flatten_all()
                .and_then(|t| t.to_vec1::<f32>())
                .expect("values"),
        );
        assert!(a.iter().zip(&b).all(|(x, y)| x.to_bits() == y.to_bits()));
    }

    #[test]
    fn a_packed_table_of_the_wrong_size_is_refused_not_read() {
        for (rows, width) in [(4, 67), (3, 68), (5, 68)] {
            let bytes = Tensor::zeros((rows, width), DType::U8, &device()).expect("tensor");
            let error = q8_0(&builder(vec![(PACKED, bytes)]), 4, 64)
                .expect_err("a table of another size is refused");
            assert!(error.to_string().contains("Q8_0 blocks"), "{error}");
        }
    }
}
