//! A dense layer's 8-bit weights for integer products, where the CPU has AVX-512 VNNI.
//!
//! The f32 product ([`crate::few_tokens`]) widens every weight to f32 (three instructions for
//! sixteen) and then multiplies sixteen pairs an instruction; on a ten-token query the widening
//! was 40% of the products' time, and the multiplications alone were near the CPU's f32 peak.
//! `vpdpwssd` multiplies thirty-two pairs of 16-bit integers an instruction and adds them into
//! sixteen 32-bit sums, exactly. So here:
//!
//! - a token's values are put in 16 bits, each block of 32 with a scale of its own (the block's
//!   largest magnitude becomes 32,767): a rounding of at most 1/65,534 of that magnitude, small
//!   beside the 1/254 the weights' own 8 bits carry;
//! - the weights' codes are sign-extended to 16 bits, one instruction for thirty-two, and laid
//!   out so that one register holds two neighbouring codes of sixteen output columns
//!   ([`Q8Tiles`]); a register of a token's two neighbouring values, repeated, meets them;
//! - each block's integer sums, times the weights' scales and the token's scale, are added to
//!   the f32 result, and the bias last.
//!
//! The weights' values are the same codes and scales as [`Q8Rows`] holds (the layout is the only
//! change, and candle's batch product reads them back as the same f32 values). tests/model.rs
//! holds the vectors against the float64 reference and the batch path as for the f32 product.

use std::arch::x86_64::{
    __m256i, __m512, __m512i, _MM_FROUND_NO_EXC, _MM_FROUND_TO_NEAREST_INT, _mm512_abs_ps,
    _mm512_add_ps, _mm512_cvt_roundps_epi32, _mm512_cvtepi8_epi16, _mm512_cvtepi32_ps,
    _mm512_cvtsepi32_epi16, _mm512_dpwssd_epi32, _mm512_fmadd_ps, _mm512_max_ps, _mm512_mul_ps,
    _mm512_reduce_max_ps, _mm512_set1_epi32, _mm512_set1_ps, _mm512_setzero_ps,
    _mm512_setzero_si512,
};

use candle_core::{Device, Result, Tensor};

use crate::q8_rows::{BLOCK, Q8Rows};

/// Output columns a register holds (sixteen 32-bit lanes).
const TILE: usize = 16;
/// Pairs of neighbouring values in a block.
const PAIRS: usize = BLOCK / 2;
/// Tokens multiplied with one weight register at a time: their sums and results take two
/// registers each, 24 of AVX-512's 32.
const GROUP: usize = 12;
/// A block's largest magnitude in 16 bits.
const TOP: f32 = 32_767.0;
/// Rounding to the nearest integer, ties to even, without raising exceptions.
const NEAREST: i32 = _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC;

/// A `rows` × `width` matrix in `Q8_0` codes and scales (as [`Q8Rows`]), laid out by tiles of
/// [`TILE`] rows (output columns): for each tile, block and pair of neighbouring values, the two
/// codes of each of the tile's rows side by side (32 bytes); for each tile and block, its rows'
/// scales (16 values).
pub(crate) struct Q8Tiles {
    rows: usize,
    width: usize,
    codes: Vec<[i8; 2 * TILE]>,
    scales: Vec<[f32; TILE]>,
}

impl Q8Tiles {
    /// `weight` in tiles, where this CPU has the instructions and the shape tiles (rows a
    /// multiple of [`TILE`]); `None` otherwise, and the f32 product is used.
    pub(crate) fn from_rows(weight: &Q8Rows) -> Option<Self> {
        if !available() || !weight.rows().is_multiple_of(TILE) {
            return None;
        }
        let (rows, width) = (weight.rows(), weight.width());
        let blocks = width / BLOCK;
        let tiles = rows / TILE;
        let mut codes = vec![[0i8; 2 * TILE]; tiles * blocks * PAIRS];
        let mut scales = vec![[0f32; TILE]; tiles * blocks];
        for r in 0..rows {
            let (tile, column) = (r / TILE, r % TILE);
            let (row_codes, row_scales) = weight.row(r);
            for (b, (block, &scale)) in row_codes.chunks_exact(BLOCK).zip(row_scales).enumerate() {
                scales[tile * blocks + b][column] = scale;
                for (p, pair) in block.chunks_exact(2).enumerate() {
                    let at = &mut codes[(tile * blocks + b) * PAIRS + p];
                    at[2 * column] = pair[0];
                    at[2 * column + 1] = pair[1];
                }
            }
        }
        Some(Self {
            rows,
            width,
            codes,
            scales,
        })
    }

    /// The whole matrix in f32 (each value its code times its block's scale, as [`Q8Rows`]
    /// widens it), for candle's product over a batch of long texts.
    pub(crate) fn to_tensor(&self, device: &Device) -> Result<Tensor> {
        let blocks = self.width / BLOCK;
        let mut wide = vec![0f32; self.rows * self.width];
        for (at, (codes, scales)) in self.codes.chunks_exact(PAIRS).zip(&self.scales).enumerate() {
            let (tile, b) = (at / blocks, at % blocks);
            for (p, pair) in codes.iter().enumerate() {
                for (column, (two, scale)) in pair.chunks_exact(2).zip(scales).enumerate() {
                    let start = (tile * TILE + column) * self.width + b * BLOCK + 2 * p;
                    wide[start] = f32::from(two[0]) * scale;
                    wide[start + 1] = f32::from(two[1]) * scale;
                }
            }
        }
        Tensor::from_vec(wide, (self.rows, self.width), device)
    }

    /// `x` (`tokens` × width, row-major) times the transpose of this matrix, plus `bias`:
    /// tokens × rows, row-major. `x` and `bias` of other lengths give zeros.
    pub(crate) fn linear(&self, x: &[f32], tokens: usize, bias: &[f32]) -> Vec<f32> {
        let mut out = vec![0f32; tokens * self.rows];
        if tokens == 0 || x.len() != tokens * self.width || bias.len() != self.rows {
            return out;
        }
        // SAFETY: a `Q8Tiles` is made only where `available()` found AVX-512 F, BW and VNNI on
        // this CPU, the features `product` is compiled for.
        #[expect(
            unsafe_code,
            reason = "the one call into code compiled for AVX-512 VNNI, after detecting it"
        )]
        unsafe {
            product(self, x, bias, &mut out);
        };
        out
    }
}

/// Whether this CPU runs [`product`]'s instructions.
pub(crate) fn available() -> bool {
    std::arch::is_x86_feature_detected!("avx512f")
        && std::arch::is_x86_feature_detected!("avx512bw")
        && std::arch::is_x86_feature_detected!("avx512vnni")
}

/// Tokens' values in 16 bits: per token, pairs of neighbouring values as one 32-bit word each
/// (the low half the first), and each block's scale (its values are `code × scale`).
struct Quantised {
    width: usize,
    pairs: Vec<i32>,
    scales: Vec<f32>,
}

impl Quantised {
    /// Each block of 32 values: its largest magnitude, its values times 32,767 over it, rounded
    /// to the nearest integer (ties to even) and narrowed to 16 bits. Written in AVX-512: done
    /// value by value (libm's `roundf` for each) it was 40% of the product's time.
    #[target_feature(enable = "avx512f,avx512bw")]
    fn new(x: &[f32], width: usize) -> Self {
        let (blocks, _) = pulp::as_arrays::<BLOCK, f32>(x);
        let mut pairs = Vec::with_capacity(blocks.len() * PAIRS);
        let mut scales = Vec::with_capacity(blocks.len());
        for block in blocks {
            let [low, high]: [__m512; 2] = pulp::cast(*block);
            let largest =
                _mm512_reduce_max_ps(_mm512_max_ps(_mm512_abs_ps(low), _mm512_abs_ps(high)));
            let (scale, inverse) = if largest > 0.0 && largest.is_finite() {
                (largest / TOP, TOP / largest)
            } else {
                (0.0, 0.0)
            };
            scales.push(scale);
            let inverse = _mm512_set1_ps(inverse);
            let codes: [__m256i; 2] = [
                _mm512_cvtsepi32_epi16(_mm512_cvt_roundps_epi32::<NEAREST>(_mm512_mul_ps(
                    low, inverse,
                ))),
                _mm512_cvtsepi32_epi16(_mm512_cvt_roundps_epi32::<NEAREST>(_mm512_mul_ps(
                    high, inverse,
                ))),
            ];
            // Sixteen-bit codes in order are, read as 32-bit words, the pairs (low half first).
            let words: [i32; PAIRS] = pulp::cast(codes);
            pairs.extend_from_slice(&words);
        }
        Self {
            width,
            pairs,
            scales,
        }
    }

    /// Token `t`'s pairs of block `b`.
    fn block(&self, t: usize, b: usize) -> &[i32; PAIRS] {
        // Two values a pair: a token's pairs start at half its values' index.
        let at = t * (self.width / 2) + b * PAIRS;
        self.pairs[at..at + PAIRS].try_into().unwrap_or(&[0; PAIRS])
    }

    /// Token `t`'s scale of block `b`.
    fn scale(&self, t: usize, b: usize) -> f32 {
        self.scales[(t * self.width) / BLOCK + b]
    }
}

/// `x` in 16 bits, then every tile of output columns, for every group of at most [`GROUP`]
/// tokens.
#[target_feature(enable = "avx512f,avx512bw,avx512vnni")]
fn product(weights: &Q8Tiles, x: &[f32], bias: &[f32], out: &mut [f32]) {
    let x = &Quantised::new(x, weights.width);
    let tokens = x.pairs.len() * 2 / weights.width.max(1);
    let blocks = weights.width / BLOCK;
    for tile in 0..weights.rows / TILE {
        let codes = &weights.codes[tile * blocks * PAIRS..(tile + 1) * blocks * PAIRS];
        let scales = &weights.scales[tile * blocks..(tile + 1) * blocks];
        let tile = Tile {
            codes,
            scales,
            bias: bias[tile * TILE..(tile + 1) * TILE]
                .try_into()
                .unwrap_or(&[0.0; TILE]),
            first_column: tile * TILE,
            columns: weights.rows,
        };
        let mut first = 0;
        while first < tokens {
            let size = GROUP.min(tokens - first);
            match size {
                1 => tile.group::<1>(x, first, out),
                2 => tile.group::<2>(x, first, out),
                3 => tile.group::<3>(x, first, out),
                4 => tile.group::<4>(x, first, out),
                5 => tile.group::<5>(x, first, out),
                6 => tile.group::<6>(x, first, out),
                7 => tile.group::<7>(x, first, out),
                8 => tile.group::<8>(x, first, out),
                9 => tile.group::<9>(x, first, out),
                10 => tile.group::<10>(x, first, out),
                11 => tile.group::<11>(x, first, out),
                _ => tile.group::<GROUP>(x, first, out),
            }
            first += size;
        }
    }
}

/// One tile of [`TILE`] output columns: its codes and scales, block after block, and its bias.
struct Tile<'a> {
    codes: &'a [[i8; 2 * TILE]],
    scales: &'a [[f32; TILE]],
    bias: &'a [f32; TILE],
    first_column: usize,
    /// Output columns in all (the length of an output row).
    columns: usize,
}

impl Tile<'_> {
    /// The tile's columns for tokens `first..first + N`: each weight register, sign-extended
    /// once, meets all `N` tokens; each block's exact integer sums are scaled into f32.
    #[target_feature(enable = "avx512f,avx512bw,avx512vnni")]
    #[inline]
    fn group<const N: usize>(&self, x: &Quantised, first: usize, out: &mut [f32]) {
        let mut results: [__m512; N] = [_mm512_setzero_ps(); N];
        for (b, (codes, scales)) in self.codes.chunks_exact(PAIRS).zip(self.scales).enumerate() {
            let pairs: [&[i32; PAIRS]; N] = std::array::from_fn(|t| x.block(first + t, b));
            let mut sums: [__m512i; N] = [_mm512_setzero_si512(); N];
            for (p, codes) in codes.iter().enumerate() {
                let codes: __m256i = pulp::cast(*codes);
                let weights = _mm512_cvtepi8_epi16(codes);
                for (sum, pairs) in sums.iter_mut().zip(&pairs) {
                    *sum = _mm512_dpwssd_epi32(*sum, weights, _mm512_set1_epi32(pairs[p]));
                }
            }
            let scales: __m512 = pulp::cast(*scales);
            for (t, (result, sum)) in results.iter_mut().zip(sums).enumerate() {
                let scale = _mm512_mul_ps(scales, _mm512_set1_ps(x.scale(first + t, b)));
                *result = _mm512_fmadd_ps(_mm512_cvtepi32_ps(sum), scale, *result);
            }
        }
        let bias: __m512 = pulp::cast(*self.bias);
        for (t, result) in results.iter().enumerate() {
            let at = (first + t) * self.columns + self.first_column;
            let values: [f32; TILE] = pulp::cast(_mm512_add_ps(*result, bias));
            out[at..at + TILE].copy_from_slice(&values);
        }
    }
}

#[cfg(test)]
mod tests {
    use candle_core::quantized::{GgmlDType, QTensor};

    use super::*;

    fn quantised(values: Vec<f32>, n: usize, k: usize) -> Q8Rows {
        let tensor = Tensor::from_vec(values, (n, k), &Device::Cpu).expect("tensor");
        let blocks = QTensor::quantize(&tensor, GgmlDType::Q8_0).expect("quantises");
        Q8Rows::from_q8_0(&blocks.data().expect("raw blocks"), n, k).expect("rows")
    }

    fn weights(n: usize, k: usize) -> Vec<f32> {
        (0..n * k)
            .map(|i| ((i * 7919 % 2001) as f32 - 1000.0) / 1000.0 * [0.01, 1.0, 30.0][i % 3])
            .collect()
    }

    /// A matrix's values, row after row.
    fn values(matrix: Result<Tensor>) -> Vec<f32> {
        matrix
            .and_then(|t| t.flatten_all())
            .and_then(|t| t.to_vec1::<f32>())
            .expect("values")
    }

    #[test]
    fn the_tiles_hold_the_rows_values_bit_for_bit() {
        let (n, k) = (48, 96);
        let rows = quantised(weights(n, k), n, k);
        let Some(tiles) = Q8Tiles::from_rows(&rows) else {
            eprintln!("no AVX-512 VNNI here: nothing to compare");
            return;
        };
        let (a, b) = (
            values(tiles.to_tensor(&Device::Cpu)),
            values(rows.to_tensor(&Device::Cpu)),
        );
        assert!(a.iter().zip(&b).all(|(x, y)| x.to_bits() == y.to_bits()));
    }

    #[test]
    fn the_integer_product_is_the_f64_product_within_the_16_bit_rounding() {
        let (n, k) = (64, 384);
        let rows = quantised(weights(n, k), n, k);
        let Some(tiles) = Q8Tiles::from_rows(&rows) else {
            eprintln!("no AVX-512 VNNI here: nothing to compare");
            return;
        };
        let wide = values(rows.to_tensor(&Device::Cpu));
        let bias: Vec<f32> = (0..n).map(|i| i as f32 * 0.25 - 3.0).collect();
        // Every group size, a zero block, tiny and huge values.
        for tokens in [1, 2, 5, 12, 13, 25, 64] {
            let x: Vec<f32> = (0..tokens * k)
                .map(|i| {
                    if i % k < BLOCK && i / k == 0 {
                        0.0
                    } else {
                        ((i * 104_729 % 977) as f32 - 488.0) / 97.0 * [1e-3, 1.0, 50.0][i % 3]
                    }
                })
                .collect();
            let got = tiles.linear(&x, tokens, &bias);
            for t in 0..tokens {
                for c in 0..n {
                    let terms =
                        (0..k).map(|i| f64::from(x[t * k + i]) * f64::from(wide[c * k + i]));
                    let magnitude: f64 = (0..k)
                        .map(|i| (f64::from(x[t * k + i]) * f64::from(wide[c * k + i])).abs())
                        .sum();
                    let want = terms.sum::<f64>() + f64::from(bias[c]);
                    let error = (f64::from(got[t * n + c]) - want).abs();
                    assert!(
                        error <= magnitude * 4e-5 + 1e-4,
                        "token {t} column {c}: {} against {want} (terms' magnitude {magnitude})",
                        got[t * n + c]
                    );
                }
            }
        }
    }

    #[test]
    fn mismatched_shapes_give_zeros_not_a_panic() {
        let rows = quantised(weights(16, 32), 16, 32);
        let Some(tiles) = Q8Tiles::from_rows(&rows) else {
            return;
        };
        assert_eq!(tiles.linear(&[1.0; 31], 1, &[0.0; 16]), vec![0.0; 16]);
        assert_eq!(tiles.linear(&[1.0; 32], 1, &[0.0; 15]), vec![0.0; 16]);
        assert!(tiles.linear(&[], 0, &[0.0; 16]).is_empty());
    }
}
