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
    let product = Product {
        x,
        rows,
        weight,
        bias,
    };
    // AVX-512: registers of sixteen values, twice the products per instruction.
    #[cfg(target_arch = "x86_64")]
    if let Some(simd) = pulp::x86::V4::try_new() {
        product.in_registers::<_, 4>(simd, simd, &mut by_column);
        return to_rows(&by_column, rows, n);
    }
    #[cfg(target_arch = "x86_64")]
    if let Some(simd) = pulp::x86::V3::try_new() {
        product.in_registers::<_, 2>(simd, simd, &mut by_column);
        return to_rows(&by_column, rows, n);
    }
    product.in_registers::<_, 2>(Arch::new(), Plain, &mut by_column);
    to_rows(&by_column, rows, n)
}

/// The operands of [`linear`].
#[derive(Clone, Copy)]
struct Product<'a> {
    x: &'a [f32],
    rows: usize,
    weight: &'a Q8Rows,
    bias: &'a [f32],
}

impl Product<'_> {
    /// The product column by column into `by_column`, `C` columns at a time, in `simd`'s
    /// registers (an [`Arch`] dispatches to the best the CPU has), widening with `widen`.
    fn in_registers<W: Widen, const C: usize>(
        self,
        simd: impl Dispatch,
        widen: W,
        by_column: &mut [f32],
    ) {
        simd.run(Columns::<_, C> {
            x: self.x,
            rows: self.rows,
            k: self.weight.width(),
            weight: self.weight,
            bias: self.bias,
            out: by_column,
            widen,
        });
    }
}

/// Something that runs a [`WithSimd`] operation in SIMD registers: one instruction set
/// ([`Simd::vectorize`]) or the best the CPU has ([`Arch::dispatch`]).
trait Dispatch {
    fn run<Op: WithSimd<Output = ()>>(self, op: Op);
}

impl Dispatch for Arch {
    fn run<Op: WithSimd<Output = ()>>(self, op: Op) {
        self.dispatch(op);
    }
}

#[cfg(target_arch = "x86_64")]
impl Dispatch for pulp::x86::V4 {
    fn run<Op: WithSimd<Output = ()>>(self, op: Op) {
        <Self as Simd>::vectorize(self, op);
    }
}

#[cfg(target_arch = "x86_64")]
impl Dispatch for pulp::x86::V3 {
    fn run<Op: WithSimd<Output = ()>>(self, op: Op) {
        <Self as Simd>::vectorize(self, op);
    }
}

impl Dispatch for pulp::Scalar {
    fn run<Op: WithSimd<Output = ()>>(self, op: Op) {
        <Self as Simd>::vectorize(self, op);
    }
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

/// Every output column: `out[c * rows + r]` = row r of x · row c of `weight` + `bias[c]`,
/// `C` columns at a time (their running sums held in registers together: 2 × 4 of them in
/// AVX2's sixteen registers, 4 × 4 in AVX-512's thirty-two).
struct Columns<'a, W, const C: usize> {
    x: &'a [f32],
    rows: usize,
    k: usize,
    weight: &'a Q8Rows,
    bias: &'a [f32],
    out: &'a mut [f32],
    widen: W,
}

impl<W: Widen, const C: usize> WithSimd for Columns<'_, W, C> {
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
        // The tokens in groups of at most GROUP, as even as can be (ten tokens: 4, 3 and 3), each
        // group's registers interleaved (register i of every token of the group side by side),
        // so that the inner loop reads them in order with no index to check.
        let count = rows.div_ceil(GROUP);
        let mut groups = Vec::with_capacity(count);
        let mut first = 0;
        for g in 0..count {
            let size = rows / count + usize::from(g < rows % count);
            let tokens: Vec<&[S::f32s]> = (first..first + size)
                .map(|r| S::as_simd_f32s(&x[r * k..(r + 1) * k]).0)
                .collect();
            let registers = tokens.first().map_or(0, |t| t.len());
            let lanes: Vec<S::f32s> = (0..registers)
                .flat_map(|i| tokens.iter().map(move |t| t[i]))
                .collect();
            groups.push((first, size, lanes));
            first += size;
        }
        // C weight rows widened to f32, reused for every group of tokens.
        let mut wide = vec![0f32; C * k];
        let mut first_column = 0;
        while first_column < weight.rows() {
            let columns = C.min(weight.rows() - first_column);
            for (c, buffer) in wide.chunks_exact_mut(k).enumerate().take(columns) {
                let (codes, scales) = weight.row(first_column + c);
                widen.widen(codes, scales, buffer);
            }
            let out = &mut out[first_column * rows..(first_column + columns) * rows];
            if columns == C {
                let w: [&[S::f32s]; C] =
                    std::array::from_fn(|c| S::as_simd_f32s(&wide[c * k..(c + 1) * k]).0);
                for (first, size, lanes) in &groups {
                    group::<S, C>(simd, lanes, w, out, rows, *first, *size);
                }
            } else {
                // The last few columns when C does not divide them (never in the model).
                for (c, out) in out.chunks_exact_mut(rows).enumerate() {
                    let w = [S::as_simd_f32s(&wide[c * k..(c + 1) * k]).0];
                    for (first, size, lanes) in &groups {
                        group::<S, 1>(simd, lanes, w, out, rows, *first, *size);
                    }
                }
            }
            for (c, out) in out.chunks_exact_mut(rows).enumerate() {
                for value in out {
                    *value += bias[first_column + c];
                }
            }
            first_column += columns;
        }
    }
}

/// The dot products of a group of `size` tokens from `first` on (`lanes`: their registers
/// interleaved) with `C` weight rows, into `out` (C columns of `rows` values).
#[expect(
    clippy::inline_always,
    reason = "pulp turns on the CPU's SIMD features only for code inlined into its dispatch"
)]
#[inline(always)]
fn group<S: Simd, const C: usize>(
    simd: S,
    lanes: &[S::f32s],
    w: [&[S::f32s]; C],
    out: &mut [f32],
    rows: usize,
    first: usize,
    size: usize,
) {
    match size {
        4 => store(tokens::<S, 4, C>(simd, lanes, w), out, rows, first),
        3 => store(tokens::<S, 3, C>(simd, lanes, w), out, rows, first),
        2 => store(tokens::<S, 2, C>(simd, lanes, w), out, rows, first),
        _ => store(tokens::<S, 1, C>(simd, lanes, w), out, rows, first),
    }
}

/// Each column's `N` sums into its rows `first..first + N` of `out`.
#[expect(
    clippy::inline_always,
    reason = "pulp turns on the CPU's SIMD features only for code inlined into its dispatch"
)]
#[inline(always)]
fn store<const N: usize, const C: usize>(
    sums: [[f32; N]; C],
    out: &mut [f32],
    rows: usize,
    first: usize,
) {
    for (column, out) in sums.iter().zip(out.chunks_exact_mut(rows)) {
        out[first..first + N].copy_from_slice(column);
    }
}

/// [`group`] for `N` tokens: `C × N` running sums, each weight register loaded once for all
/// `N` tokens and each token's once for all `C` rows. Returns the sums column by column.
#[expect(
    clippy::inline_always,
    reason = "pulp turns on the CPU's SIMD features only for code inlined into its dispatch"
)]
#[inline(always)]
fn tokens<S: Simd, const N: usize, const C: usize>(
    simd: S,
    lanes: &[S::f32s],
    w: [&[S::f32s]; C],
) -> [[f32; N]; C] {
    let zero = simd.splat_f32s(0.0);
    let mut sums = [[zero; N]; C];
    let (xs, _) = pulp::as_arrays::<N, S::f32s>(lanes);
    // Cut to the same length, so that indexing them by `i` needs no check.
    let w = w.map(|w| &w[..xs.len().min(w.len())]);
    let len = w.iter().map(|w| w.len()).min().unwrap_or(0);
    for (i, a) in xs.iter().enumerate().take(len) {
        for (sums, w) in sums.iter_mut().zip(&w) {
            let v = w[i];
            for (sum, a) in sums.iter_mut().zip(a) {
                *sum = simd.mul_add_e_f32s(*a, v, *sum);
            }
        }
    }
    sums.map(|column| column.map(|sum| simd.reduce_sum_f32s(sum)))
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

    /// The product in one instruction set, as a CPU whose best it is computes it.
    fn linear_in(
        simd: impl Dispatch,
        widen: impl Widen,
        x: &[f32],
        rows: usize,
        weight: &Q8Rows,
        bias: &[f32],
    ) -> Vec<f32> {
        let mut by_column = vec![0f32; weight.rows() * rows];
        let product = Product {
            x,
            rows,
            weight,
            bias,
        };
        product.in_registers::<_, 2>(simd, widen, &mut by_column);
        to_rows(&by_column, rows, weight.rows())
    }

    /// In AVX2 (registers of eight), as a CPU without AVX-512 computes it, where this one has
    /// AVX2.
    #[cfg(target_arch = "x86_64")]
    fn linear_avx2(x: &[f32], rows: usize, weight: &Q8Rows, bias: &[f32]) -> Option<Vec<f32>> {
        let simd = pulp::x86::V3::try_new()?;
        Some(linear_in(simd, simd, x, rows, weight, bias))
    }

    #[cfg(not(target_arch = "x86_64"))]
    fn linear_avx2(_: &[f32], _: usize, _: &Q8Rows, _: &[f32]) -> Option<Vec<f32>> {
        None
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
                    let avx2 = linear_avx2(&x, rows, &weight, &b);
                    for got in [
                        Some(linear(&x, rows, &weight, &b)),
                        Some(linear_in(pulp::Scalar::new(), Plain, &x, rows, &weight, &b)),
                        avx2,
                    ]
                    .into_iter()
                    .flatten()
                    {
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
