//! A dense layer's weights in 8 bits, laid out for the products that read them.
//!
//! The model file and candle hold `Q8_0` blocks: an f16 scale, then 32 signed bytes. Widening
//! such a block converts its f16 scale every time, a call per 32 weights on the query's path (a
//! third of a million per query). Here the bytes are one array and the scales another, already
//! f32 (exact: every f16 is an f32), so widening is a byte times a number, eight at a time in
//! AVX2. The values are the blocks' values bit for bit (tested).

use candle_core::{Device, Result, Tensor, bail};
use half::f16;

/// Values per block (one scale each), and the bytes of a `Q8_0` block: an f16 scale, then one
/// signed byte a value.
pub(crate) const BLOCK: usize = 32;
const BLOCK_BYTES: usize = 2 + BLOCK;

/// A `rows` × `width` matrix: value (r, i) is `codes[r * width + i] * scales[(r * width + i) /
/// BLOCK]`.
pub(crate) struct Q8Rows {
    rows: usize,
    width: usize,
    codes: Vec<i8>,
    scales: Vec<f32>,
}

impl Q8Rows {
    /// From `Q8_0` blocks (candle's `QTensor::data` of a `rows` × `width` matrix).
    pub(crate) fn from_q8_0(blocks: &[u8], rows: usize, width: usize) -> Result<Self> {
        let count = rows * width / BLOCK;
        if !width.is_multiple_of(BLOCK) || blocks.len() != count * BLOCK_BYTES {
            bail!(
                "{} bytes are not the Q8_0 blocks of a {rows} x {width} matrix",
                blocks.len()
            );
        }
        let mut codes = Vec::with_capacity(rows * width);
        let mut scales = Vec::with_capacity(count);
        for (scale, bytes) in q8_0_blocks(blocks) {
            scales.push(scale);
            codes.extend(bytes.iter().map(|b| b.cast_signed()));
        }
        Ok(Self {
            rows,
            width,
            codes,
            scales,
        })
    }

    pub(crate) fn rows(&self) -> usize {
        self.rows
    }

    pub(crate) fn width(&self) -> usize {
        self.width
    }

    /// Row `r`'s codes and its blocks' scales.
    pub(crate) fn row(&self, r: usize) -> (&[i8], &[f32]) {
        let blocks = self.width / BLOCK;
        (
            &self.codes[r * self.width..(r + 1) * self.width],
            &self.scales[r * blocks..(r + 1) * blocks],
        )
    }

    /// The whole matrix in f32, for candle's product over a batch of long texts.
    pub(crate) fn to_tensor(&self, device: &Device) -> Result<Tensor> {
        let mut wide = vec![0f32; self.rows * self.width];
        for (r, out) in wide.chunks_exact_mut(self.width.max(1)).enumerate() {
            let (codes, scales) = self.row(r);
            Plain.widen(codes, scales, out);
        }
        Tensor::from_vec(wide, (self.rows, self.width), device)
    }
}

/// `Q8_0` blocks as they are (one looked-up row of the vocabulary's table) to f32 values, as
/// candle dequantises them.
pub(crate) fn widen_blocks(blocks: &[u8], wide: &mut [f32]) {
    for ((scale, bytes), wide) in q8_0_blocks(blocks).zip(wide.chunks_exact_mut(BLOCK)) {
        for (w, &byte) in wide.iter_mut().zip(bytes) {
            *w = f32::from(byte.cast_signed()) * scale;
        }
    }
}

/// Each `Q8_0` block's scale (an f16, exactly an f32) and its bytes.
fn q8_0_blocks(blocks: &[u8]) -> impl Iterator<Item = (f32, &[u8])> {
    blocks.chunks_exact(BLOCK_BYTES).map(|block| {
        let (scale, bytes) = block.split_at(2);
        (f16::from_le_bytes([scale[0], scale[1]]).to_f32(), bytes)
    })
}

/// A row's blocks for widening: each block's f32 values to fill, its codes and its scale.
#[expect(
    clippy::inline_always,
    reason = "inlined into the SIMD dispatch of the widening that calls it"
)]
#[inline(always)]
fn row_blocks<'a>(
    codes: &'a [i8],
    scales: &'a [f32],
    wide: &'a mut [f32],
) -> impl Iterator<Item = (&'a mut [f32], &'a [i8], f32)> {
    wide.chunks_exact_mut(BLOCK)
        .zip(codes.chunks_exact(BLOCK))
        .zip(scales)
        .map(|((wide, codes), &scale)| (wide, codes, scale))
}

/// Widening a row's codes to f32 values, in the instructions the running CPU has.
pub(crate) trait Widen: Copy {
    /// `wide[i] = codes[i] * scales[i / BLOCK]`, for `codes.len()` values (a multiple of
    /// [`BLOCK`]).
    fn widen(self, codes: &[i8], scales: &[f32], wide: &mut [f32]);
}

/// In plain arithmetic, on any CPU.
#[derive(Clone, Copy)]
pub(crate) struct Plain;

impl Widen for Plain {
    #[expect(
        clippy::inline_always,
        reason = "inlined into the SIMD dispatch of the product that calls it"
    )]
    #[inline(always)]
    fn widen(self, codes: &[i8], scales: &[f32], wide: &mut [f32]) {
        for (wide, codes, scale) in row_blocks(codes, scales, wide) {
            for (w, &c) in wide.iter_mut().zip(codes) {
                *w = f32::from(c) * scale;
            }
        }
    }
}

/// In AVX2: eight bytes sign-extended to eight `i32`s, converted (exactly) and multiplied.
#[cfg(target_arch = "x86_64")]
impl Widen for pulp::x86::V3 {
    #[expect(
        clippy::inline_always,
        reason = "the CPU's AVX2 is on only in code inlined into pulp's dispatch"
    )]
    #[inline(always)]
    fn widen(self, codes: &[i8], scales: &[f32], wide: &mut [f32]) {
        for (wide, codes, scale) in row_blocks(codes, scales, wide) {
            let scale = self.avx._mm256_set1_ps(scale);
            let (eights, _) = pulp::as_arrays_mut::<8, f32>(wide);
            let (sixteens, _) = pulp::as_arrays::<16, i8>(codes);
            for (out, codes) in eights.chunks_exact_mut(2).zip(sixteens) {
                let codes: std::arch::x86_64::__m128i = pulp::cast(*codes);
                let low = self.avx2._mm256_cvtepi8_epi32(codes);
                let high = self
                    .avx2
                    ._mm256_cvtepi8_epi32(self.sse2._mm_srli_si128::<8>(codes));
                out[0] = pulp::cast(
                    self.avx
                        ._mm256_mul_ps(self.avx._mm256_cvtepi32_ps(low), scale),
                );
                out[1] = pulp::cast(
                    self.avx
                        ._mm256_mul_ps(self.avx._mm256_cvtepi32_ps(high), scale),
                );
            }
        }
    }
}

/// In AVX-512: sixteen bytes sign-extended to sixteen `i32`s, converted and multiplied.
#[cfg(target_arch = "x86_64")]
impl Widen for pulp::x86::V4 {
    #[expect(
        clippy::inline_always,
        reason = "the CPU's AVX-512 is on only in code inlined into pulp's dispatch"
    )]
    #[inline(always)]
    fn widen(self, codes: &[i8], scales: &[f32], wide: &mut [f32]) {
        for (wide, codes, scale) in row_blocks(codes, scales, wide) {
            let scale = self.avx512f._mm512_set1_ps(scale);
            let (sixteens_out, _) = pulp::as_arrays_mut::<16, f32>(wide);
            let (sixteens, _) = pulp::as_arrays::<16, i8>(codes);
            for (out, codes) in sixteens_out.iter_mut().zip(sixteens) {
                let codes: std::arch::x86_64::__m128i = pulp::cast(*codes);
                let values = self
                    .avx512f
                    ._mm512_cvtepi32_ps(self.avx512f._mm512_cvtepi8_epi32(codes));
                *out = pulp::cast(self.avx512f._mm512_mul_ps(values, scale));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use candle_core::quantized::{GgmlDType, QTensor};

    use super::*;

    /// One row's codes and scales to f32 values, in a given instruction set.
    type WidenRow<'a> = &'a dyn Fn(&[i8], &[f32], &mut [f32]);

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
        let tensor = Tensor::from_vec(values, (4, 384), &Device::Cpu).expect("tensor");
        let blocks = QTensor::quantize(&tensor, GgmlDType::Q8_0).expect("quantises");
        let want = (blocks.dequantize(&Device::Cpu))
            .and_then(|t| t.flatten_all())
            .and_then(|t| t.to_vec1::<f32>())
            .expect("dequantises");
        let rows = Q8Rows::from_q8_0(&blocks.data().expect("raw blocks"), 4, 384).expect("rows");
        let same = |got: &[f32]| {
            got.iter()
                .zip(&want)
                .all(|(g, w)| g.to_bits() == w.to_bits())
        };
        let all = (rows.to_tensor(&Device::Cpu))
            .and_then(|t| t.flatten_all())
            .and_then(|t| t.to_vec1::<f32>())
            .expect("values");
        assert!(same(&all));
        // Each row widened by `widen`, as the product does.
        let widened = |widen: WidenRow<'_>| {
            let mut got = vec![f32::NAN; 4 * 384];
            for (r, out) in got.chunks_exact_mut(384).enumerate() {
                let (codes, scales) = rows.row(r);
                widen(codes, scales, out);
            }
            got
        };
        #[cfg(target_arch = "x86_64")]
        if let Some(simd) = pulp::x86::V3::try_new() {
            let got = widened(&|codes, scales, out| {
                simd.vectorize(|| simd.widen(codes, scales, out));
            });
            assert!(same(&got), "AVX2 widening");
        }
        #[cfg(target_arch = "x86_64")]
        if let Some(simd) = pulp::x86::V4::try_new() {
            let got = widened(&|codes, scales, out| {
                simd.vectorize(|| simd.widen(codes, scales, out));
            });
            assert!(same(&got), "AVX-512 widening");
        }
        assert!(same(&widened(
            &|codes, scales, out| Plain.widen(codes, scales, out)
        )));
    }

    #[test]
    fn blocks_of_the_wrong_size_are_refused() {
        assert!(Q8Rows::from_q8_0(&[0; BLOCK_BYTES], 1, 32).is_ok());
        assert!(Q8Rows::from_q8_0(&[0; BLOCK_BYTES], 1, 64).is_err());
        assert!(Q8Rows::from_q8_0(&[0; BLOCK_BYTES + 1], 1, 32).is_err());
        assert!(Q8Rows::from_q8_0(&[0; BLOCK_BYTES], 1, 33).is_err());
    }
}
