//! GELU as the model defines it, `x · Φ(x)` with the exact normal distribution, without libm.
//!
//! A query's pass takes GELU of about 90,000 values (ten tokens × 1,536 × six layers). libm's
//! `erff` branches by range and calls `expf` for most of them; this rational function has no
//! branch but the clamp and no call, so a loop of it is plain multiply-adds. Its coefficients
//! were fitted for this crate (minimax, on |x| ≤ 3.92 where erf is within 3e-8 of ±1): its
//! error is at most 6e-7 against erf computed in 40 digits, under the 8-bit weights' own
//! rounding by three orders of magnitude. The test below holds it against libm.

use pulp::{Arch, Simd, WithSimd};

/// Past this, erf(x) is ±1 to within 3e-8.
const SATURATES: f32 = 3.92;
/// erf(x) ≈ x · P(x²) / Q(x²) on |x| ≤ [`SATURATES`].
const P: [f32; 6] = [
    1.128_382_3,
    0.356_579_9,
    0.071_573_37,
    0.009_866_41,
    0.000_246_809_85,
    -1.407_008_5e-6,
];
const Q: [f32; 5] = [
    1.0,
    0.649_359_2,
    0.179_872_47,
    0.027_545_597,
    0.002_301_213_7,
];

/// The error function, within 6e-7 (1e-6 counting f32 rounding) everywhere.
pub(crate) fn erf(x: f32) -> f32 {
    let x = x.clamp(-SATURATES, SATURATES);
    let s = x * x;
    // Horner's rule in plain products and sums: `mul_add` is a call to libm's `fmaf` where
    // the build does not assume the CPU has FMA.
    let p = ((((P[5] * s + P[4]) * s + P[3]) * s + P[2]) * s + P[1]) * s + P[0];
    let q = (((Q[4] * s + Q[3]) * s + Q[2]) * s + Q[1]) * s + Q[0];
    (x * p / q).clamp(-1.0, 1.0)
}

/// [`gelu`] of every value, in place, in the SIMD registers the CPU has: the same rational
/// function, a register of values at a time (its multiply-adds fused where the CPU has FMA, so a
/// value may differ from [`gelu`]'s in its last bit).
pub(crate) fn gelu_each(values: &mut [f32]) {
    Arch::new().dispatch(GeluEach(values));
}

struct GeluEach<'a>(&'a mut [f32]);

impl WithSimd for GeluEach<'_> {
    type Output = ();

    #[expect(
        clippy::inline_always,
        reason = "pulp turns on the CPU's SIMD features only for code inlined into its dispatch"
    )]
    #[inline(always)]
    fn with_simd<S: Simd>(self, simd: S) {
        let (registers, rest) = S::as_mut_simd_f32s(self.0);
        let splat = |v: f32| simd.splat_f32s(v);
        for value in registers {
            let x = *value;
            let scaled = simd.mul_f32s(x, splat(std::f32::consts::FRAC_1_SQRT_2));
            let clamped = simd.min_f32s(simd.max_f32s(scaled, splat(-SATURATES)), splat(SATURATES));
            let square = simd.mul_f32s(clamped, clamped);
            let mut numerator = splat(P[5]);
            for c in P[..5].iter().rev() {
                numerator = simd.mul_add_e_f32s(numerator, square, splat(*c));
            }
            let mut denominator = splat(Q[4]);
            for c in Q[..4].iter().rev() {
                denominator = simd.mul_add_e_f32s(denominator, square, splat(*c));
            }
            let erf = simd.div_f32s(simd.mul_f32s(clamped, numerator), denominator);
            let erf = simd.min_f32s(simd.max_f32s(erf, splat(-1.0)), splat(1.0));
            let half_x = simd.mul_f32s(x, splat(0.5));
            *value = simd.mul_add_e_f32s(half_x, erf, half_x);
        }
        for v in rest {
            *v = gelu(*v);
        }
    }
}

/// GELU with the exact normal distribution (the model's `hidden_act: gelu`, what candle's
/// `gelu_erf` computes through libm).
pub(crate) fn gelu(x: f32) -> f32 {
    0.5 * x * (1.0 + erf(x * std::f32::consts::FRAC_1_SQRT_2))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn erf_stays_within_a_millionth_of_libm_everywhere() {
        let mut worst = 0f32;
        for i in -800_000..=800_000 {
            let x = i as f32 / 100_000.0;
            worst = worst.max((erf(x) - libm::erff(x)).abs());
        }
        assert!(worst < 1e-6, "worst {worst}");
        for x in [
            f32::MAX,
            f32::MIN,
            f32::INFINITY,
            f32::NEG_INFINITY,
            1e30,
            -1e30,
        ] {
            assert!((erf(x).abs() - 1.0).abs() < 1e-6, "{x}");
        }
        assert!(erf(f32::NAN).is_nan());
        assert!(erf(0.0).abs() < f32::EPSILON && erf(-0.0).abs() < f32::EPSILON);
    }

    #[test]
    fn gelu_is_the_exact_one_within_its_rounding() {
        // An odd count, so that the SIMD pass has a rest done one value at a time.
        let xs: Vec<f32> = (-2_000..=2_000).map(|i| i as f32 / 200.0).collect();
        let mut each = xs.clone();
        gelu_each(&mut each);
        for (&x, &simd) in xs.iter().zip(&each) {
            let exact = 0.5 * x * (1.0 + libm::erff(x * std::f32::consts::FRAC_1_SQRT_2));
            assert!((gelu(x) - exact).abs() < 1e-5, "{x}: {} {exact}", gelu(x));
            assert!((simd - exact).abs() < 1e-5, "{x}: {simd} {exact} in SIMD");
        }
    }
}
