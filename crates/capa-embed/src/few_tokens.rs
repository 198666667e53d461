//! The encoder's dense layers for a text of a few tokens: a query, embedded while someone waits.
//!
//! A general matrix product (candle's, through the `gemm` crate) first copies the weight matrix
//! into a blocked layout, which pays off when many rows share it. A query has about ten rows
//! (tokens), so that copy cost as much as the arithmetic. Here each weight row (8-bit codes and
//! their blocks' scales, [`Q8Rows`]) is widened to f32 into a small buffer once and multiplied
//! with four tokens at a time, in SIMD registers picked at run time (`pulp`: AVX2 and FMA where
//! the CPU has them, the widening too), on the calling thread: for ten tokens a hand-over to
//! another thread cost more than it saved. Texts longer than [`MAX_ROWS`] tokens (the tools'
//! texts, embedded in batches in the background) keep candle's product.

use pulp::{Arch, Simd, WithSimd};

use crate::q8_rows::{Plain, Q8Rows, Widen};

/// Token rows up to which a product takes this path.
pub(crate) const MAX_ROWS: usize = 64;
/// Tokens multiplied with one weight row at a time: each row is loaded once per group.
const GROUP: usize = 4;

/// `x` (`rows` × k, row-major) times the transpose of `weight` (n × k, as a linear layer stores
/// it), plus `bias` (n): rows × n, row-major.
pub(crate) fn linear(x: &[f32], rows: usize, weight: &Q8Rows, bias: &[f32]) -> Vec<f32> {
    let n = weight.rows();
    let k = weight.width();
    if rows == 0 || n == 0 || x.len() != rows * k || bias.len() != n {
        return vec![0f32; rows * bias.len()];
    }
    // Computed column by column (each column's rows together), then turned back to rows.
    let mut by_column = vec![0f32; n * rows];
    #[cfg(target_arch = "x86_64")]
    if let Some(simd) = pulp::x86::V3::try_new() {
        <pulp::x86::V3 as Simd>::vectorize(
            simd,
            Columns {
                x,
                rows,
                k,
                weight,
                bias,
                out: &mut by_column,
                widen: simd,
            },
        );
        return to_rows(&by_column, rows, n);
    }
    Arch::new().dispatch(Columns {
        x,
        rows,
        k,
        weight,
        bias,
        out: &mut by_column,
        widen: Plain,
    });
    to_rows(&by_column, rows, n)
}

/// `rows` × `n`, row-major, from `n` columns of `rows` values each.
fn to_rows(by_column: &[f32], rows: usize, n: usize) -> Vec<f32> {
    let mut out = vec![0f32; rows * n];
    for (column, values) in by_column.chunks_exact(rows).enumerate() {
        for (row, value) in values.iter().enumerate() {
            out[row * n + column] = *value;
        }
    }
    out
}

/// Every output column: `out[c * rows + r]` = row r of x · row c of `weight` + `bias[c]`.
struct Columns<'a, W> {
    x: &'a [f32],
    rows: usize,
    k: usize,
    weight: &'a Q8Rows,
    bias: &'a [f32],
    out: &'a mut [f32],
    widen: W,
}

impl<W: Widen> WithSimd for Columns<'_, W> {
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
            widen,
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
        let mut biases = bias.chunks_exact(2);
        let mut outs = out.chunks_exact_mut(2 * rows);
        // Two columns at a time: with four tokens, eight sums in eight registers, enough
        // independent multiply-adds to keep the CPU's units busy.
        for (pair, (b, out)) in (&mut biases).zip(&mut outs).enumerate() {
            let (b0, b1) = (b[0], b[1]);
            let (out0, out1) = out.split_at_mut(rows);
            let ((codes0, scales0), (codes1, scales1)) =
                (weight.row(2 * pair), weight.row(2 * pair + 1));
            widen.widen(codes0, scales0, wide0);
            widen.widen(codes1, scales1, wide1);
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
        let odd = (biases.remainder().iter()).zip(outs.into_remainder().chunks_exact_mut(rows));
        for (&b, out) in odd {
            let (codes, scales) = weight.row(weight.rows() - 1);
            widen.widen(codes, scales, wide0);
            let (w, t) = S::as_simd_f32s(wide0);
            for (r, value) in out.iter_mut().enumerate() {
                *value = one(simd, lanes(r).0, w) + tail(r, t) + b;
            }
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

    /// `values` (n × k) in 8 bits as candle quantises them, and the f32 values those stand for,
    /// as candle dequantises them.
    fn quantised(values: Vec<f32>, n: usize, k: usize) -> (Q8Rows, Vec<f32>) {
        let tensor = Tensor::from_vec(values, (n, k), &Device::Cpu).expect("tensor");
        let blocks = QTensor::quantize(&tensor, GgmlDType::Q8_0).expect("quantises");
        let wide = (blocks.dequantize(&Device::Cpu))
            .and_then(|t| t.flatten_all())
            .and_then(|t| t.to_vec1::<f32>())
            .expect("dequantises");
        let rows = Q8Rows::from_q8_0(&blocks.data().expect("raw blocks"), n, k).expect("rows");
        (rows, wide)
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

    /// The product in plain arithmetic on any CPU (pulp's scalar lanes), as a CPU without AVX2
    /// computes it.
    fn linear_plain_lanes(x: &[f32], rows: usize, weight: &Q8Rows, bias: &[f32]) -> Vec<f32> {
        let mut by_column = vec![0f32; weight.rows() * rows];
        pulp::Scalar::new().vectorize(Columns {
            x,
            rows,
            k: weight.width(),
            weight,
            bias,
            out: &mut by_column,
            widen: Plain,
        });
        to_rows(&by_column, rows, weight.rows())
    }

    #[test]
    fn matches_a_plain_product_for_every_shape_around_the_groups_and_lanes() {
        // Rows around the group of 4, widths of one and more blocks (and the model's), an odd
        // and even number of columns.
        for rows in [1, 3, 4, 5, 9] {
            for k in [32, 64, 96, 384] {
                for n in [1, 2, 47, 48, 130] {
                    let x = values(rows * k, 1);
                    let (weight, wide) = quantised(values(n * k, 2), n, k);
                    let b = values(n, 3);
                    let want = plain(&x, rows, &wide, &b);
                    for got in [
                        linear(&x, rows, &weight, &b),
                        linear_plain_lanes(&x, rows, &weight, &b),
                    ] {
                        for (g, w) in got.iter().zip(&want) {
                            assert!((g - w).abs() < 1e-3, "{rows}×{k}·{n}: {g} vs {w}");
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn no_rows_give_no_output() {
        let (weight, _) = quantised(vec![0.5; 32], 1, 32);
        assert!(linear(&[], 0, &weight, &[0.0]).is_empty());
    }
}
