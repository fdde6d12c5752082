//! Float32 `sin`, `cos`, `tan` and `atan` for the run and row routines
//! (`lf_run_<op>_f32`, `lf_row_<op>_f32`): `vmath::trig` operation for
//! operation (the reduction by three parts of π/2, the Taylor series, the
//! quadrant's pick and sign or quotient, `sin x = tan x = x` for tiny `x`), so
//! a run gives the inline code's bits. A value beyond `TRIG_BOUND`, ±inf or
//! NaN takes the interpreter's function (`Trig::libm`), as the inline code's
//! lanes do. `atan` (`vmath::atan`) reduces every float itself.

use super::{horner, shifted, signed_as, SHIFTER};
use lazyfuse_ir::fast_math::{Trig, COS_TAYLOR, PIO2, SIN_TAYLOR, SIN_TINY, TRIG_BOUND};
use lazyfuse_ir::fast_math::{ATAN_T38, ATAN_T8, ATAN_TAYLOR};

/// `vmath::trig` without its far lanes: `kind` of `x` for `|x| ≤
/// TRIG_BOUND`.
#[inline(always)]
fn near(x: f32, kind: Trig) -> f32 {
    let (nf, ni) = shifted(x.mul_add(std::f64::consts::FRAC_2_PI as f32, SHIFTER));
    let mut r = x;
    for part in PIO2 {
        r = nf.mul_add(-part, r);
    }
    let z = r * r;
    let sr = (r * z).mul_add(horner(z, &SIN_TAYLOR), r);
    let w = 1.0 - 0.5 * z;
    let cr = (z * z).mul_add(horner(z, &COS_TAYLOR), w);
    let q = if kind == Trig::Cos {
        ni.wrapping_add(1)
    } else {
        ni
    };
    let odd = q & 1 == 1;
    let v = if kind == Trig::Tan {
        let (num, den) = if odd { (-cr, sr) } else { (sr, cr) };
        num / den
    } else {
        let v = if odd { cr } else { sr };
        let neg = (q.wrapping_shl(30) as u32) & 0x8000_0000;
        f32::from_bits(v.to_bits() ^ neg)
    };
    if kind != Trig::Cos && x.abs() < SIN_TINY {
        x
    } else {
        v
    }
}

/// Whether `x` is beyond the reduction (`|x| > TRIG_BOUND`, ±inf, NaN).
#[inline(always)]
fn far(x: f32) -> bool {
    // (vmath's `UnorderedOrGreaterThan`)
    x.is_nan() || x.abs() > TRIG_BOUND
}

/// `vmath::trig`: `kind` of `x`.
#[inline(always)]
fn trig(x: f32, kind: Trig) -> f32 {
    if far(x) {
        kind.libm()(x)
    } else {
        near(x, kind)
    }
}

/// `vmath`'s float32 `sin`.
#[inline(always)]
pub(super) fn sin(x: f32) -> f32 {
    trig(x, Trig::Sin)
}

/// `vmath`'s float32 `cos`.
#[inline(always)]
pub(super) fn cos(x: f32) -> f32 {
    trig(x, Trig::Cos)
}

/// `vmath`'s float32 `tan`.
#[inline(always)]
pub(super) fn tan(x: f32) -> f32 {
    trig(x, Trig::Tan)
}

/// `vmath::atan` (float32, FMA): `|x|` reduced to `|t| ≤ tan(π/8)` by `-1/|x|`
/// or `(|x| - 1)/(|x| + 1)`, adding π/2 or π/4 (in two parts), the Taylor
/// series, the sign of `x` put back.
#[inline(always)]
pub(super) fn atan(x: f32) -> f32 {
    let a = x.abs();
    let mid = (a - 1.0) / (a + 1.0);
    let ninv = -(1.0 / a);
    let (t8, t38) = (ATAN_T8 as f32, ATAN_T38 as f32);
    let angle = |v: f64| {
        let hi = v as f32;
        (hi, (v - f64::from(hi)) as f32)
    };
    let (q_hi, q_lo) = angle(std::f64::consts::FRAC_PI_4);
    let (h_hi, h_lo) = angle(std::f64::consts::FRAC_PI_2);
    let pick = |far: f32, quarter: f32, near: f32| {
        let v = if a > t8 { quarter } else { near };
        if a > t38 {
            far
        } else {
            v
        }
    };
    let t = pick(ninv, mid, a);
    let (hi, lo) = (pick(h_hi, q_hi, 0.0), pick(h_lo, q_lo, 0.0));
    let z = t * t;
    let y = (t * z).mul_add(horner(z, &ATAN_TAYLOR), t);
    let y = hi + (lo + y);
    signed_as(y, x)
}

/// One run function per op: sixteen values at a time through [`near`] (the
/// loop the compiler vectorizes), then the far ones of the sixteen, if any,
/// through the interpreter's function; the last few one by one.
macro_rules! trig_run_fn {
    ($name:ident, $kind:expr) => {
        /// Writes the op of each of the `n` elements at `src` to `dst` (`n ≤ 0`:
        /// nothing); `dst == src` works in place.
        ///
        /// # Safety
        /// As the other run functions': `src` valid for reads and `dst` for
        /// writes of `n` aligned elements, the same run or disjoint, written by
        /// no one else during the call.
        pub(super) unsafe extern "C" fn $name(dst: *mut f32, src: *const f32, n: i64) {
            if n <= 0 {
                return;
            }
            // SAFETY: the caller's contract above.
            let (dst, src) = unsafe { super::run_slices(dst, src, n as usize) };
            by_level!(
                fn apply(dst: &mut [f32], src: Option<&[f32]>) {
                    use super::{far, near, trig};
                    use lazyfuse_ir::fast_math::Trig;
                    let kind: Trig = $kind;
                    let full = dst.len() - dst.len() % 16;
                    for c in (0..full).step_by(16) {
                        crate::vector_runs::prefetch::ahead(src, c);
                        let xs: [f32; 16] = match src {
                            Some(s) => s[c..c + 16].try_into().expect("16 elements"),
                            None => dst[c..c + 16].try_into().expect("16 elements"),
                        };
                        let mut ys = [0.0f32; 16];
                        let mut any = false;
                        for (y, &x) in ys.iter_mut().zip(&xs) {
                            *y = near(x, kind);
                            any |= far(x);
                        }
                        if any {
                            for (y, &x) in ys.iter_mut().zip(&xs) {
                                if far(x) {
                                    *y = kind.libm()(x);
                                }
                            }
                        }
                        dst[c..c + 16].copy_from_slice(&ys);
                    }
                    for i in full..dst.len() {
                        let x = src.map_or(dst[i], |s| s[i]);
                        dst[i] = trig(x, kind);
                    }
                },
                (dst, src)
            )
        }
    };
}

trig_run_fn!(run_sin, Trig::Sin);
trig_run_fn!(run_cos, Trig::Cos);
trig_run_fn!(run_tan, Trig::Tan);

#[cfg(test)]
mod tests {
    use super::*;

    /// Within 2 ulp of float64's sin and cos and 4 of its tan (relative to
    /// the result, at their zeros and tan's poles too) over the reduction's range, libm's own bits beyond;
    /// every level gives the portable function's bits.
    #[test]
    fn close_to_libm_and_the_same_at_every_level() {
        let mut xs: Vec<f32> = (0..200_000)
            .map(|i| (i as f32 * 0.0173 - 1700.0) * if i % 3 == 0 { 37.0 } else { 1.0 })
            .collect();
        // the float32 values nearest multiples of π/2, where r cancels most
        for k in 1..20_000 {
            let m = (k as f64 * std::f64::consts::FRAC_PI_2 * 3.0) as f32;
            xs.extend([m, f32::from_bits(m.to_bits() + 1), -m]);
        }
        xs.extend([
            0.0,
            -0.0,
            1e-30,
            -1e-40,
            TRIG_BOUND,
            -TRIG_BOUND,
            65_537.0,
            1e30,
            f32::MAX,
            f32::INFINITY,
            f32::NEG_INFINITY,
            f32::NAN,
        ]);
        for &x in &xs {
            for (kind, want, ulps) in [
                (Trig::Sin, f64::sin as fn(f64) -> f64, 2.0),
                (Trig::Cos, f64::cos, 2.0),
                (Trig::Tan, f64::tan, 4.0),
            ] {
                let (got, w) = (trig(x, kind), want(f64::from(x)));
                if far(x) {
                    let libm = kind.libm()(x);
                    assert!(got.to_bits() == libm.to_bits() || (got.is_nan() && libm.is_nan()));
                    continue;
                }
                let close = super::super::tests::within_ulps(got, w, ulps);
                assert!(close, "{kind:?} {x}: {got} vs {w}");
            }
        }
        assert_eq!(sin(-0.0).to_bits(), (-0.0f32).to_bits());
        assert_eq!(tan(-0.0).to_bits(), (-0.0f32).to_bits());
        // atan over every magnitude, within 2 ulp; its specials
        for &x in xs
            .iter()
            .chain(&[1e-30, 0.41421354, 0.41421357, 2.4142134, 2.4142137, 1e38])
        {
            let (got, w) = (atan(x), f64::from(x).atan());
            if x.is_nan() {
                assert!(got.is_nan());
                continue;
            }
            let close = super::super::tests::within_ulps(got, w, 2.0);
            assert!(close, "atan {x}: {got} vs {w}");
        }
        assert_eq!(atan(-0.0).to_bits(), (-0.0f32).to_bits());
        assert_eq!(atan(f32::NEG_INFINITY), -std::f32::consts::FRAC_PI_2);
        super::super::each_level(|| {
            let run = super::super::tests::run_gives_its_ops_bits;
            run(run_sin, sin, &xs);
            run(run_cos, cos, &xs);
            run(run_tan, tan, &xs);
            run(super::super::run_atan, atan, &xs);
        });
    }
}
