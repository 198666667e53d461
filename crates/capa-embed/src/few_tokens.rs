//! The encoder's dense layers for a text of a few tokens: a query, embedded while someone waits.
//!
//! A general matrix product (candle's, through the `gemm` crate) first copies the weight matrix
//! into a blocked layout, which pays off when many rows share it. A query has about ten rows
//! (tokens), so that copy cost as much as the arithmetic: a third of a query's time went to it.
//! Here each weight row (`Q8_0` blocks) is read once, widened to f32 into a small buffer ([`widen`]), and
//! multiplied with four tokens at a time, in SIMD registers picked at run time (`pulp`: AVX2 and
//! FMA where the CPU has them), the output columns split over the threads. Texts longer than [`MAX_ROWS`] tokens (the tools' texts,
//! embedded in batches in the background) keep candle's product.

use half::f16;
use pulp::{Arch, Simd, WithSimd};
use rayon::prelude::*;

/// Token rows up to which a product takes this path.
pub(crate) const MAX_ROWS: usize = 64;
/// Output columns per parallel task: enough work to be worth a hand-over to another thread.
const COLUMNS_PER_TASK: usize = 48;
/// Tokens multiplied with one weight row at a time: each row is loaded once per group.
const GROUP: usize = 4;

/// Values per `Q8_0` block, and the bytes of one: an f16 scale, then one signed byte a value.
const BLOCK: usize = 32;
const BLOCK_BYTES: usize = 2 + BLOCK;

/// `x` (`rows` × k, row-major) times the transpose of `weight` (n × k, row-major, as a linear
/// layer stores it, in `Q8_0` blocks: k a multiple of [`BLOCK`]), plus `bias` (n): rows × n,
/// row-major. Each weight row is widened to f32 before it is used.
pub(crate) fn linear(x: &[f32], rows: usize, weight: &[u8], bias: &[f32]) -> Vec<f32> {
    let n = bias.len();
    if rows == 0 || n == 0 {
        return Vec::new();
    }
    let k = x.len() / rows;
    debug_assert_eq!(k % BLOCK, 0);
    debug_assert_eq!(weight.len(), n * k / BLOCK * BLOCK_BYTES);
    let row_bytes = k / BLOCK * BLOCK_BYTES;
    // Computed column by column (each column's rows together), then turned back to rows.
    let mut by_column = vec![0f32; n * rows];
    by_column
        .par_chunks_mut(COLUMNS_PER_TASK * rows)
        .zip(weight.par_chunks(COLUMNS_PER_TASK * row_bytes))
        .zip(bias.par_chunks(COLUMNS_PER_TASK))
        .for_each(|((out, weight), bias)| {
            Arch::new().dispatch(Columns {
                x,
                rows,
                k,
                row_bytes,
                weight,
                bias,
                out,
            });
        });
    let mut out = vec![0f32; rows * n];
    for (column, values) in by_column.chunks_exact(rows).enumerate() {
        for (row, value) in values.iter().enumerate() {
            out[row * n + column] = *value;
        }
    }
    out
}

/// Some output columns: `out[c * rows + r]` = row r of x · row c of `weight` + `bias[c]`.
struct Columns<'a> {
    x: &'a [f32],
    rows: usize,
    k: usize,
    /// Bytes of one weight row's blocks.
    row_bytes: usize,
    weight: &'a [u8],
    bias: &'a [f32],
    out: &'a mut [f32],
}

impl WithSimd for Columns<'_> {
    type Output = ();

    #[expect(
        clippy::inline_always,
        reason = "pulp turns on the CPU's SIMD features only for code inlined into its dispatch"
    )]
    #[inline(always)]
    fn with_simd<S: Simd>(self, simd: S) {
        let Self {
            x,
            rows,
            k,
            row_bytes,
            weight,
            bias,
            out,
        } = self;
        let token = |r: usize| &x[r * k..(r + 1) * k];
        let lanes = |r: usize| S::as_simd_f32s(token(r));
        // The end of a row past its last full SIMD register, in plain arithmetic.
        let tail = |r: usize, w_tail: &[f32]| -> f32 {
            lanes(r).1.iter().zip(w_tail).map(|(a, b)| a * b).sum()
        };
        // Two weight rows widened to f32, reused for every pair of columns.
        let mut wide = vec![0f32; 2 * k];
        let (wide0, wide1) = wide.split_at_mut(k);
        let mut weights = weight.chunks_exact(2 * row_bytes);
        let mut biases = bias.chunks_exact(2);
        let mut outs = out.chunks_exact_mut(2 * rows);
        // Two columns at a time: with four tokens, eight sums in eight registers, enough
        // independent multiply-adds to keep the CPU's units busy.
        for ((pair, b), out) in (&mut weights).zip(&mut biases).zip(&mut outs) {
            let ((w0, w1), (b0, b1)) = (pair.split_at(row_bytes), (b[0], b[1]));
            let (out0, out1) = out.split_at_mut(rows);
            widen(w0, wide0);
            widen(w1, wide1);
            let ((w0, t0), (w1, t1)) = (S::as_simd_f32s(wide0), S::as_simd_f32s(wide1));
            let mut r = 0;
            while r + GROUP <= rows {
                let x = [lanes(r).0, lanes(r + 1).0, lanes(r + 2).0, lanes(r + 3).0];
                let zero = simd.splat_f32s(0.0);
                let (mut s0, mut s1, mut s2, mut s3) = (zero, zero, zero, zero);
                let (mut u0, mut u1, mut u2, mut u3) = (zero, zero, zero, zero);
                for (i, (v0, v1)) in w0.iter().zip(w1).enumerate() {
                    let (a0, a1, a2, a3) = (x[0][i], x[1][i], x[2][i], x[3][i]);
                    s0 = simd.mul_add_e_f32s(a0, *v0, s0);
                    s1 = simd.mul_add_e_f32s(a1, *v0, s1);
                    s2 = simd.mul_add_e_f32s(a2, *v0, s2);
                    s3 = simd.mul_add_e_f32s(a3, *v0, s3);
                    u0 = simd.mul_add_e_f32s(a0, *v1, u0);
                    u1 = simd.mul_add_e_f32s(a1, *v1, u1);
                    u2 = simd.mul_add_e_f32s(a2, *v1, u2);
                    u3 = simd.mul_add_e_f32s(a3, *v1, u3);
                }
                for (g, (s, u)) in [(s0, u0), (s1, u1), (s2, u2), (s3, u3)]
                    .into_iter()
                    .enumerate()
                {
                    out0[r + g] = simd.reduce_sum_f32s(s) + tail(r + g, t0) + b0;
                    out1[r + g] = simd.reduce_sum_f32s(u) + tail(r + g, t1) + b1;
                }
                r += GROUP;
            }
            for r in r..rows {
                out0[r] = one(simd, lanes(r).0, w0) + tail(r, t0) + b0;
                out1[r] = one(simd, lanes(r).0, w1) + tail(r, t1) + b1;
            }
        }
        // An odd last column.
        let odd = (weights.remainder().chunks_exact(row_bytes))
            .zip(biases.remainder())
            .zip(outs.into_remainder().chunks_exact_mut(rows));
        for ((w, &b), out) in odd {
            widen(w, wide0);
            let (w, t) = S::as_simd_f32s(wide0);
            for (r, value) in out.iter_mut().enumerate() {
                *value = one(simd, lanes(r).0, w) + tail(r, t) + b;
            }
        }
    }
}

/// One weight row's `Q8_0` blocks to f32: each byte times its block's scale, as candle's
/// dequantisation computes it (exact in f32: an 11-bit scale times a 7-bit byte), in plain
/// arithmetic the compiler vectorises in the SIMD registers the dispatch turned on.
#[expect(
    clippy::inline_always,
    reason = "pulp turns on the CPU's SIMD features only for code inlined into its dispatch"
)]
#[inline(always)]
fn widen(blocks: &[u8], wide: &mut [f32]) {
    for (block, wide) in blocks
        .chunks_exact(BLOCK_BYTES)
        .zip(wide.chunks_exact_mut(BLOCK))
    {
        let (scale, bytes) = block.split_at(2);
        let scale = f16::from_le_bytes([scale[0], scale[1]]).to_f32();
        for (w, &byte) in wide.iter_mut().zip(bytes) {
            *w = f32::from(byte.cast_signed()) * scale;
        }
    }
}

/// One token's dot product with one weight row, over their full SIMD registers.
#[expect(
    clippy::inline_always,
    reason = "pulp turns on the CPU's SIMD features only for code inlined into its dispatch"
)]
#[inline(always)]
fn one<S: Simd>(simd: S, x: &[S::f32s], w: &[S::f32s]) -> f32 {
    let zero = simd.splat_f32s(0.0);
    let (mut even, mut odd) = (zero, zero);
    let (x_pairs, w_pairs) = (x.chunks_exact(2), w.chunks_exact(2));
    if let (Some(x_last), Some(w_last)) = (x_pairs.remainder().first(), w_pairs.remainder().first())
    {
        even = simd.mul_add_e_f32s(*x_last, *w_last, even);
    }
    for (a, v) in x_pairs.zip(w_pairs) {
        even = simd.mul_add_e_f32s(a[0], v[0], even);
        odd = simd.mul_add_e_f32s(a[1], v[1], odd);
    }
    simd.reduce_sum_f32s(simd.add_f32s(even, odd))
}

#[cfg(test)]
mod tests {
    use candle_core::quantized::{GgmlDType, QTensor};
    use candle_core::{Device, Tensor};

    use super::*;

    /// `values` (n × k) in `Q8_0` blocks, as candle quantises them, and the f32 values those
    /// blocks stand for, as candle dequantises them.
    fn quantised(values: Vec<f32>, n: usize, k: usize) -> (Vec<u8>, Vec<f32>) {
        let tensor = Tensor::from_vec(values, (n, k), &Device::Cpu).expect("tensor");
        let blocks = QTensor::quantize(&tensor, GgmlDType::Q8_0).expect("quantises");
        let wide = (blocks.dequantize(&Device::Cpu))
            .and_then(|t| t.flatten_all())
            .and_then(|t| t.to_vec1::<f32>())
            .expect("dequantises");
        (blocks.data().expect("raw blocks").to_vec(), wide)
    }

    fn plain(x: &[f32], rows: usize, weight: &[f32], bias: &[f32]) -> Vec<f32> {
        let k = x.len() / rows;
        let n = bias.len();
        let mut out = vec![0f32; rows * n];
        for r in 0..rows {
            for c in 0..n {
                let dot: f32 = (0..k).map(|i| x[r * k + i] * weight[c * k + i]).sum();
                out[r * n + c] = dot + bias[c];
            }
        }
        out
    }

    fn values(len: usize, seed: u32) -> Vec<f32> {
        (0..len)
            .map(|i| {
                let v = u32::try_from(i)
                    .expect("a small index")
                    .wrapping_mul(2_654_435_761)
                    .wrapping_add(seed)
                    % 1000;
                v as f32 / 500.0 - 1.0
            })
            .collect()
    }

    #[test]
    fn matches_a_plain_product_for_every_shape_around_the_groups_and_lanes() {
        // Rows around the group of 4, widths of one and more blocks (and the model's), columns
        // around a task.
        for rows in [1, 3, 4, 5, 9] {
            for k in [32, 64, 96, 384] {
                for n in [1, 47, 48, 49, 130] {
                    let x = values(rows * k, 1);
                    let (blocks, wide) = quantised(values(n * k, 2), n, k);
                    let b = values(n, 3);
                    let got = linear(&x, rows, &blocks, &b);
                    let want = plain(&x, rows, &wide, &b);
                    for (g, w) in got.iter().zip(&want) {
                        assert!((g - w).abs() < 1e-3, "{rows}×{k}·{n}: {g} vs {w}");
                    }
                }
            }
        }
    }

    #[test]
    fn widening_gives_candles_dequantised_values_bit_for_bit() {
        // Large, small, negative and zero values, so that scales of every size and both signs
        // of byte are met.
        let values: Vec<f32> = (0..4 * 384)
            .map(|i| {
                let v = ((i * 7919 % 2001) as f32 - 1000.0) / 1000.0;
                v * [1e-6, 0.01, 1.0, 300.0][i / 384] * if i % 97 == 0 { 0.0 } else { 1.0 }
            })
            .collect();
        let (blocks, want) = quantised(values, 4, 384);
        let mut got = vec![f32::NAN; 4 * 384];
        widen(&blocks, &mut got);
        assert!(
            got.iter()
                .zip(&want)
                .all(|(g, w)| g.to_bits() == w.to_bits())
        );
    }

    #[test]
    fn no_rows_give_no_output() {
        assert!(linear(&[], 0, &[0; BLOCK_BYTES], &[0.0]).is_empty());
    }
}
