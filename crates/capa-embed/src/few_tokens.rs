//! The encoder's dense layers for a text of a few tokens: a query, embedded while someone waits.
//!
//! A general matrix product (candle's, through the `gemm` crate) first copies the weight matrix
//! into a blocked layout, which pays off when many rows share it. A query has about ten rows
//! (tokens), so that copy cost as much as the arithmetic: a third of a query's time went to it.
//! Here each f16 weight row is read once, widened to f32 into a small buffer ([`widen`]), and
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

/// `x` (`rows` × k, row-major) times the transpose of `weight` (n × k, row-major, as a linear
/// layer stores it), plus `bias` (n): rows × n, row-major. Each weight row is widened to f32
/// before it is used.
pub(crate) fn linear(x: &[f32], rows: usize, weight: &[f16], bias: &[f32]) -> Vec<f32> {
    let n = bias.len();
    if rows == 0 || n == 0 {
        return Vec::new();
    }
    let k = x.len() / rows;
    debug_assert_eq!(weight.len(), n * k);
    // Computed column by column (each column's rows together), then turned back to rows.
    let mut by_column = vec![0f32; n * rows];
    by_column
        .par_chunks_mut(COLUMNS_PER_TASK * rows)
        .zip(weight.par_chunks(COLUMNS_PER_TASK * k))
        .zip(bias.par_chunks(COLUMNS_PER_TASK))
        .for_each(|((out, weight), bias)| {
            Arch::new().dispatch(Columns {
                x,
                rows,
                k,
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
    weight: &'a [f16],
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
        let mut weights = weight.chunks_exact(2 * k);
        let mut biases = bias.chunks_exact(2);
        let mut outs = out.chunks_exact_mut(2 * rows);
        // Two columns at a time: with four tokens, eight sums in eight registers, enough
        // independent multiply-adds to keep the CPU's units busy.
        for ((pair, b), out) in (&mut weights).zip(&mut biases).zip(&mut outs) {
            let ((w0, w1), (b0, b1)) = (pair.split_at(k), (b[0], b[1]));
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
        let odd = (weights.remainder().chunks_exact(k))
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

/// A weight as [`widen`] reads it: zero for a subnormal or non-finite f16 (a subnormal is
/// under 6.1e-5 in size, less than the f16 rounding of a typical weight, and the model has no
/// infinite one). Applied once, when the weights are loaded, so that both paths use the same
/// values.
pub(crate) fn for_widening(weight: f16) -> f16 {
    if weight.is_normal() || weight == f16::ZERO {
        weight
    } else {
        f16::ZERO
    }
}

/// f16 to f32 with integer arithmetic the compiler vectorises in the SIMD registers the dispatch
/// turned on (half's conversion is a call per eight values; it took a fifth of a query's time).
/// Exact for zeros and normal numbers, the only ones [`for_widening`] leaves.
#[expect(
    clippy::inline_always,
    reason = "pulp turns on the CPU's SIMD features only for code inlined into its dispatch"
)]
#[inline(always)]
fn widen(half: &[f16], wide: &mut [f32]) {
    for (h, w) in half.iter().zip(wide) {
        let bits = h.to_bits();
        let sign = u32::from(bits & 0x8000) << 16;
        let magnitude = u32::from(bits & 0x7fff);
        // The exponent's bias goes from 15 to 127 (+112) and the mantissa from 10 bits to 23.
        let magnitude = if magnitude == 0 {
            0
        } else {
            (magnitude << 13) + (112 << 23)
        };
        *w = f32::from_bits(sign | magnitude);
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
    use super::*;

    fn plain(x: &[f32], rows: usize, weight: &[f16], bias: &[f32]) -> Vec<f32> {
        let k = x.len() / rows;
        let n = bias.len();
        let mut out = vec![0f32; rows * n];
        for r in 0..rows {
            for c in 0..n {
                let dot: f32 = (0..k)
                    .map(|i| x[r * k + i] * weight[c * k + i].to_f32())
                    .sum();
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
        // Rows around the group of 4, widths around the SIMD lanes, columns around a task.
        for rows in [1, 3, 4, 5, 9] {
            for k in [1, 7, 8, 17, 384] {
                for n in [1, 47, 48, 49, 130] {
                    let x = values(rows * k, 1);
                    let w: Vec<f16> = values(n * k, 2).into_iter().map(f16::from_f32).collect();
                    let b = values(n, 3);
                    let got = linear(&x, rows, &w, &b);
                    let want = plain(&x, rows, &w, &b);
                    for (g, w) in got.iter().zip(&want) {
                        assert!((g - w).abs() < 1e-3, "{rows}×{k}·{n}: {g} vs {w}");
                    }
                }
            }
        }
    }

    #[test]
    fn widening_is_exact_for_every_value_loading_keeps() {
        let mut kept = 0;
        for bits in 0..=u16::MAX {
            let h = for_widening(f16::from_bits(bits));
            let mut wide = [f32::NAN];
            widen(&[h], &mut wide);
            assert_eq!(wide[0].to_bits(), h.to_f32().to_bits(), "{bits:#06x}");
            kept += usize::from(h.to_bits() == bits);
        }
        // Every normal number and both zeros: 2 × (30 exponents × 1,024 mantissas + 1).
        assert_eq!(kept, 2 * (30 * 1024 + 1));
    }

    #[test]
    fn no_rows_give_no_output() {
        assert!(linear(&[], 0, &[f16::ONE], &[0.0]).is_empty());
    }
}
