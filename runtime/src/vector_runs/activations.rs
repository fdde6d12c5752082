//! `expm1`, `log1p` and the activations built from them (`softplus`, `elu`,
//! `mish`), and the hyperbolic `sinh` and `cosh`, in float32, for the run and
//! row routines (`lf_run_<op>_f32`, `lf_row_<op>_f32`).
//!
//! Each is `vmath`'s FMA form operation for operation, as the module doc of
//! `vector_runs` requires: the same clamps, constants, fused multiply-adds,
//! compares and selects in the same order, so that a run gives the bits of a
//! kernel's inline code (`tests/output_runs.rs` compares the two). The
//! routines take no parameters: `softplus` is the one of PyTorch's defaults
//! (`beta = 1`, `threshold = 20`) and `elu` the plain one (`alpha = 1`, no
//! scales); other parameters keep the inline code.

use super::{clamp, combine_ln, exp, exp_core, horner, log_reduced, pow2i, scale2, signed_as};
use lazyfuse_ir::fast_math::SINH_TAYLOR;

/// Below this magnitude `expm1(x)` and `log1p(x)` return `x` (`vmath`'s
/// float32 `tiny`, the float64 constant rounded as `vmath` rounds it).
const TINY: f32 = 1e-8f64 as f32;

/// `vmath::expm1` (float32, FMA): `e^r - 1` scaled by `2^n` as `p·s + (s -
/// 1)`, or as `(1 + p)·2^n` in two factors above 20 (where the `- 1` is below
/// half an ulp); `x` itself below `1e-8` in magnitude (keeps `-0`).
#[inline(always)]
pub(super) fn expm1(x: f32) -> f32 {
    let xc = clamp(x, -20.0, 89.0);
    let (p, ni) = exp_core(xc);
    let (s1, s2) = scale2(ni);
    let s = s1 * s2;
    let small = p.mul_add(s, s - 1.0);
    let large = p.mul_add(s1, s1) * s2;
    let r = if x > 20.0 { large } else { small };
    if x.abs() < TINY {
        x
    } else {
        r
    }
}

/// `vmath::log1p` (float32, FMA): the logarithm of `u = 1 + x` (subnormals
/// scaled by `2^25` first) plus the rounding of `1 + x` as `(x - (u - 1)) /
/// u`; `x` itself below `1e-8` in magnitude; `-1` gives `-inf`, below `-1`
/// or NaN the default NaN, `+inf` itself.
#[inline(always)]
pub(super) fn log1p(x: f32) -> f32 {
    let u = 1.0 + x;
    let (kf, lp) = log_reduced(u);
    let c = (x - (u - 1.0)) / u;
    let r = combine_ln(kf, lp + c);
    let r = if x.abs() < TINY { x } else { r };
    // log_specials at -1
    let r = if x == f32::INFINITY { f32::INFINITY } else { r };
    let r = if x == -1.0 { f32::NEG_INFINITY } else { r };
    if x.is_nan() || x < -1.0 {
        f32::NAN
    } else {
        r
    }
}

/// `vmath::tanh`, the `expm1` form (float32, FMA), which `mish` takes:
/// `(e^2x - 1) / (e^2x - 1 + 2)` with `x` clamped to ±10, `x` itself below
/// `1e-4` in magnitude.
#[inline(always)]
fn tanh_expm1(x: f32) -> f32 {
    let xc = clamp(x, -10.0, 10.0);
    let (p, ni) = exp_core(xc + xc);
    let s = pow2i(ni);
    let em = p.mul_add(s, s - 1.0);
    let t = em / (em + 2.0);
    if x.abs() < 1e-4f64 as f32 {
        x
    } else {
        t
    }
}

/// `vmath`'s mish: `x · tanh(log1p(e^x))`.
#[inline(always)]
pub(super) fn mish(x: f32) -> f32 {
    x * tanh_expm1(log1p(exp(x)))
}

/// `vmath`'s softplus with PyTorch's defaults (`beta = 1`, `threshold = 20`):
/// `z = x·beta`, `z > threshold ? x : log1p(e^z) / beta` (NaN: the compare is
/// false).
#[inline(always)]
pub(super) fn softplus(x: f32) -> f32 {
    const BETA: f32 = 1.0;
    const THRESHOLD: f32 = 20.0;
    let z = x * BETA;
    let soft = log1p(exp(z)) / BETA;
    if z > THRESHOLD {
        x
    } else {
        soft
    }
}

/// `vmath`'s elu with `alpha = 1` and no scales: `x ≤ 0 ? expm1(x·1)·1 :
/// x·1` (NaN takes the positive side, as the interpreter's).
#[inline(always)]
pub(super) fn elu(x: f32) -> f32 {
    const ALPHA_SCALE: f32 = 1.0;
    const SCALE: f32 = 1.0;
    const INPUT_SCALE: f32 = 1.0;
    let neg = expm1(x * INPUT_SCALE) * ALPHA_SCALE;
    let pos = x * SCALE;
    if x <= 0.0 {
        neg
    } else {
        pos
    }
}

/// `vmath::hyperbolic` (float32, FMA): `sinh` (or `cosh`) of `a = |x|` as
/// `(e ∓ 1/e)/2` with `e = e^a` up to 9, `(h/2)·h` with `h = e^(a/2)` beyond,
/// `sinh` signed as `x` and its Taylor series below 1.
#[inline(always)]
fn hyperbolic(x: f32, cosh: bool) -> f32 {
    let a = x.abs();
    let e = exp(a);
    let ie = 1.0 / e;
    let mid = 0.5 * if cosh { e + ie } else { e - ie };
    let h = exp(0.5 * a);
    let large = (0.5 * h) * h;
    let r = if a > 9.0 { large } else { mid };
    if cosh {
        return r;
    }
    let r = signed_as(r, x);
    let z = x * x;
    let small = (x * z).mul_add(horner(z, &SINH_TAYLOR), x);
    if a < 1.0 {
        small
    } else {
        r
    }
}

/// `vmath`'s float32 `sinh`.
#[inline(always)]
pub(super) fn sinh(x: f32) -> f32 {
    hyperbolic(x, false)
}

/// `vmath`'s float32 `cosh`.
#[inline(always)]
pub(super) fn cosh(x: f32) -> f32 {
    hyperbolic(x, true)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Close to libm in float64 where the forms are accurate: `expm1` and
    /// `log1p` within a few ulp, the activations within float32's
    /// conformance tolerance.
    #[test]
    fn close_to_libm() {
        let rel = |got: f32, want: f64| {
            (f64::from(got) - want).abs() <= 4e-7 * want.abs().max(f64::from(f32::MIN_POSITIVE))
        };
        for i in -40_000..38_000 {
            let x = i as f32 * 2.3e-3;
            let xd = f64::from(x);
            assert!(rel(expm1(x), xd.exp_m1()), "expm1({x})");
            if x > -1.0 {
                assert!(rel(log1p(x), xd.ln_1p()), "log1p({x})");
            }
            let sp = if xd > 20.0 { xd } else { xd.exp().ln_1p() };
            assert!(
                (f64::from(softplus(x)) - sp).abs() <= 1e-6 * sp.max(1e-30),
                "softplus({x})"
            );
            let e = if xd <= 0.0 { xd.exp_m1() } else { xd };
            assert!(rel(elu(x), e), "elu({x})");
            let m = xd * xd.exp().ln_1p().tanh();
            assert!(
                (f64::from(mish(x)) - m).abs() <= 2e-6 * m.abs().max(1e-6),
                "mish({x})"
            );
        }
        for tiny in [1e-9f32, -1e-9, 0.0, -0.0] {
            assert_eq!(expm1(tiny).to_bits(), tiny.to_bits());
            assert_eq!(log1p(tiny).to_bits(), tiny.to_bits());
        }
        assert_eq!(expm1(f32::NEG_INFINITY), -1.0);
        assert_eq!(expm1(f32::INFINITY), f32::INFINITY);
        assert_eq!(log1p(-1.0), f32::NEG_INFINITY);
        assert_eq!(log1p(f32::INFINITY), f32::INFINITY);
        assert!(log1p(-2.0).is_nan() && log1p(f32::NAN).is_nan() && expm1(f32::NAN).is_nan());
        assert_eq!(softplus(30.0), 30.0);
        assert_eq!(softplus(f32::NEG_INFINITY), 0.0);
        assert!(softplus(f32::NAN).is_nan() && elu(f32::NAN).is_nan() && mish(f32::NAN).is_nan());
        assert_eq!(elu(f32::NEG_INFINITY), -1.0);
        assert_eq!(mish(f32::INFINITY), f32::INFINITY);
        // sinh and cosh within 3 ulp of float64's up to overflow
        for i in -8_900..8_900 {
            let x = i as f32 * 0.01 + 1e-3;
            for (got, want) in [
                (sinh(x), f64::from(x).sinh()),
                (cosh(x), f64::from(x).cosh()),
            ] {
                let close = super::super::tests::within_ulps(got, want, 3.0);
                assert!(close, "{x}: {got} vs {want}");
            }
        }
        assert_eq!(sinh(-0.0).to_bits(), (-0.0f32).to_bits());
        assert_eq!(sinh(f32::NEG_INFINITY), f32::NEG_INFINITY);
        assert_eq!(cosh(f32::NEG_INFINITY), f32::INFINITY);
        assert_eq!(sinh(95.0), f32::INFINITY);
        assert!(sinh(f32::NAN).is_nan() && cosh(f32::NAN).is_nan());
    }
}
