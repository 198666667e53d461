//! The integer dot products of the vector scan, written so that no compiler setting can undo them.
//!
//! The shipped build is optimised for size with link-time optimisation (`[profile.dist]`). A
//! product loop left to the compiler's vectoriser was vectorised in tests and benchmarks built
//! for speed, and in the package it ran at half that speed even with this crate at
//! `opt-level = 3`: the scan over 7,437 tools took 1.30 ms against 0.61 (docs/desktop.md). rustc
//! runs the loop vectoriser at levels 2 and 3 only, and the whole program's link-time pass looks
//! to follow the program's level, not a crate's. On x86-64 with AVX2 the products are therefore
//! spelled in instructions (sixteen codes widened to sixteen-bit lanes, multiplied and summed in
//! pairs by `vpmaddwd`): 0.60 ms in the same build. Elsewhere the plain loop is the answer.

/// Calls `each(row, dot(query, row's codes))` for every row of `codes`, `dims` codes a row.
pub(crate) fn for_each_dot(
    codes: &[i8],
    dims: usize,
    query: &[i8],
    mut each: impl FnMut(usize, i32),
) {
    let rows = codes.chunks_exact(dims.max(1));
    #[cfg(target_arch = "x86_64")]
    if let Some(simd) = pulp::x86::V3::try_new() {
        simd.vectorize(Avx2Scan {
            simd,
            rows,
            query,
            each: &mut each,
        });
        return;
    }
    for (row, codes) in rows.enumerate() {
        each(row, dot(query, codes));
    }
}

/// The integer dot product of two code vectors. Products of two `i8`s summed in `i32`: up to
/// `crate::vectors::MAX_DIMS` of them cannot overflow (each is at most 127²).
pub(crate) fn dot(a: &[i8], b: &[i8]) -> i32 {
    a.iter()
        .zip(b)
        .map(|(&x, &y)| i32::from(x) * i32::from(y))
        .sum()
}

#[cfg(target_arch = "x86_64")]
struct Avx2Scan<'a, F> {
    simd: pulp::x86::V3,
    rows: std::slice::ChunksExact<'a, i8>,
    query: &'a [i8],
    each: &'a mut F,
}

#[cfg(target_arch = "x86_64")]
impl<F: FnMut(usize, i32)> pulp::NullaryFnOnce for Avx2Scan<'_, F> {
    type Output = ();

    #[expect(
        clippy::inline_always,
        reason = "the CPU's AVX2 is turned on only for code inlined into pulp's `vectorize`"
    )]
    #[inline(always)]
    fn call(self) {
        let Self {
            simd,
            rows,
            query,
            each,
        } = self;
        for (row, codes) in rows.enumerate() {
            each(row, dot_avx2(simd, query, codes));
        }
    }
}

/// [`dot`] sixteen codes at a time: each half of the sum is at most 2 × 127² per lane and step,
/// and a lane sums at most `MAX_DIMS` / 8 products, so the `i32` lanes cannot overflow either.
#[cfg(target_arch = "x86_64")]
#[expect(
    clippy::inline_always,
    reason = "the CPU's AVX2 is turned on only for code inlined into pulp's `vectorize`"
)]
#[inline(always)]
fn dot_avx2(simd: pulp::x86::V3, a: &[i8], b: &[i8]) -> i32 {
    let (a_blocks, a_tail) = pulp::as_arrays::<16, i8>(a);
    let (b_blocks, b_tail) = pulp::as_arrays::<16, i8>(b);
    let mut sums = simd.avx._mm256_setzero_si256();
    for (x, y) in a_blocks.iter().zip(b_blocks) {
        let x = simd.avx2._mm256_cvtepi8_epi16(pulp::cast(*x));
        let y = simd.avx2._mm256_cvtepi8_epi16(pulp::cast(*y));
        sums = simd
            .avx2
            ._mm256_add_epi32(sums, simd.avx2._mm256_madd_epi16(x, y));
    }
    let lanes: [i32; 8] = pulp::cast(sums);
    lanes.iter().sum::<i32>() + dot(a_tail, b_tail)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_row_gets_the_exact_integer_product_whatever_the_length() {
        // Lengths around the sixteen-code blocks, extremes included (±127 is the widest code).
        for dims in [1, 15, 16, 17, 33, 384, 1024] {
            let query: Vec<i8> = (0..dims).map(|i| [127, -127, 3, 0, -1][i % 5]).collect();
            let codes: Vec<i8> = (0..dims * 3)
                .map(|i| [-127, 127, 5, -9, 0, 1, 64][i % 7])
                .collect();
            let mut got = Vec::new();
            for_each_dot(&codes, dims, &query, |row, product| {
                got.push((row, product));
            });
            let want: Vec<(usize, i32)> = codes
                .chunks_exact(dims)
                .enumerate()
                .map(|(row, codes)| {
                    let exact: i64 = query
                        .iter()
                        .zip(codes)
                        .map(|(&a, &b)| i64::from(a) * i64::from(b))
                        .sum();
                    (row, i32::try_from(exact).expect("within an i32"))
                })
                .collect();
            assert_eq!(got, want, "{dims} codes a row");
        }
        let widest = vec![-127i8; 1024];
        let mut got = Vec::new();
        for_each_dot(&widest, 1024, &widest, |_, product| got.push(product));
        assert_eq!(got, [1024 * 127 * 127]);
        assert_eq!(dot(&[127, -127, 3], &[127, 127, 2]), 6);
    }
}
