//! Float32 and float64 transcendentals over a run of memory (in place or from a
//! source run), compiled for the widest vectors the processor has: JIT kernels
//! call these over runs of their own output (`lazyfuse_codegen`'s fast-math
//! output runs).
//!
//! Cranelift emits 128-bit vectors at most, and a kernel whose work is one
//! transcendental per element is bound by that width. Here the same arithmetic
//! is written once as scalar Rust and compiled three times: with AVX-512F, with
//! AVX2 and FMA (each picked at run time, the loop vectorized by the compiler to
//! 16 or 8 lanes), and portable. Each function is, operation for operation, the
//! inline vector code of `lazyfuse_codegen`'s `vmath` for float32 with FMA: the
//! same constants, the same fused multiply-adds, compares and integer steps in
//! the same order. Lane-wise IEEE operations round the same at every vector
//! width, so a run's results are bit for bit those of the kernel's own 128-bit
//! code, which computes the points of a row that no run covers (tests compare
//! both on the same values).
//!
//! Names: `lf_run_<op>_f32` for `exp`, `log`, `log2`, `log10`, `tanh`, `sigmoid`,
//! `silu`, `erf`, `gelu` (the exact form), `gelu_tanh`, and `expm1`, `log1p`,
//! `softplus` (PyTorch's defaults), `elu` (alpha 1), `mish`, `sinh` and `cosh`
//! (`vector_runs/activations.rs`), `sin`, `cos`, `tan` and `atan`
//! (`vector_runs/trig.rs`), each `unsafe extern "C" fn(dst: *mut f32, src:
//! *const f32, n: i64)`: in place where `dst == src`;
//! `lf_run_<op>_f64` for the first five and `gelu_tanh` on float64 (the forms in
//! `vector_runs/float64.rs`); and
//! `lf_row_<op>_f32`/`_f64`, which also subtract a shift and keep a reduction
//! phase's sums (`vector_runs/rows.rs`); `lf_reduce_<kind>` (a max, min,
//! sum or sum of squared deviations of a row, `vector_runs/reductions.rs`; of
//! a float16 or bfloat16 row, its max or min, `vector_runs/narrow_rows.rs`);
//! `lf_row_affine_<f32|f64>`, a row shifted, scaled, weighted and biased
//! (`vector_runs/affine.rs`); `lf_narrow_f16`/`_bf16`, a float32 run's
//! 16-bit codes, and `lf_widen_f16`/`_bf16`, codes as float32 values
//! (`vector_runs/narrow.rs`, `vector_runs/widen.rs`); and
//! `lf_ctile_<op>_<f16|bf16>`, the steps of a float16 or bfloat16 kernel over
//! tiles of its own codes (`vector_runs/code_tiles.rs`, float16's arithmetic
//! by the processor's float16 instructions where it has them,
//! `vector_runs/half_arith.rs`).

use lazyfuse_ir::fast_math::{TANH_CLAMP_FMA, TANH_P, TANH_Q, TANH_TINY};

/// Compiles `apply` (its parameters and body) three times — with AVX-512F,
/// with AVX2 and FMA (each vectorized by the compiler to 16 or 8 lanes), and
/// portably — and calls the widest one this processor runs ([`level`]) with
/// `args`. `apply`'s body reaches the calling module's items through `super::`
/// (it lands in a module of its own). With `avx512 path`, the AVX-512 level
/// calls `path` with `args` instead: an explicit vector form of the same
/// function, with its bits (`exp_scalef.rs`), compiled with those features.
macro_rules! by_level {
    (fn apply($($p:ident: $t:ty),* $(,)?) $body:block, ($($a:expr),* $(,)?)) => {
        by_level!(@levels ($($p: $t),*) $body, ($($a),*), wide::avx512, {
            #[cfg(target_arch = "x86_64")]
            #[target_feature(enable = "avx512f,fma,avx2")]
            pub(super) fn avx512($($p: $t),*) {
                apply($($p),*)
            }
        })
    };
    (fn apply($($p:ident: $t:ty),* $(,)?) $body:block, ($($a:expr),* $(,)?), avx512 $w:path) => {
        by_level!(@levels ($($p: $t),*) $body, ($($a),*), $w, {})
    };
    (@levels ($($p:ident: $t:ty),*) $body:block, ($($a:expr),*), $w:path, { $($avx512:item)* }) => {{
        mod wide {
            $($avx512)*
            #[cfg(target_arch = "x86_64")]
            #[target_feature(enable = "avx2,fma")]
            pub(super) fn avx2($($p: $t),*) {
                apply($($p),*)
            }
            #[inline(always)]
            pub(super) fn apply($($p: $t),*) $body
        }
        match $crate::vector_runs::level() {
            #[cfg(target_arch = "x86_64")]
            // SAFETY: level 3 means the processor has AVX-512F, AVX2 and FMA.
            3 => unsafe { $w($($a),*) },
            #[cfg(target_arch = "x86_64")]
            // SAFETY: level 2 means the processor has AVX2 and FMA.
            2 => unsafe { wide::avx2($($a),*) },
            _ => wide::apply($($a),*),
        }
    }};
}

/// The `n` elements at `dst` as a mutable slice, and those at `src` as a
/// shared one unless it is the same address (`None`: in place).
///
/// # Safety
/// `src` must be valid for reads and `dst` for writes of `n` aligned
/// elements, the same run or disjoint, written by no one else while the slices
/// live.
unsafe fn run_slices<'a, T>(
    dst: *mut T,
    src: *const T,
    n: usize,
) -> (&'a mut [T], Option<&'a [T]>) {
    // SAFETY: the caller's contract above: one mutable slice where the runs
    // are the same, a shared and a mutable one where they are disjoint.
    unsafe {
        if std::ptr::eq(dst.cast_const(), src) {
            (std::slice::from_raw_parts_mut(dst, n), None)
        } else {
            (
                std::slice::from_raw_parts_mut(dst, n),
                Some(std::slice::from_raw_parts(src, n)),
            )
        }
    }
}

mod activations;
mod affine;
mod code_tiles;
mod column_sums;
mod erf_table;
mod exp_scalef;
mod float64;
mod half_arith;
mod half_hw;
mod handover;
mod level;
mod narrow;
mod narrow_rows;
mod prefetch;
mod reductions;
mod rows;
mod stream;
mod trig;
mod widen;

#[cfg(test)]
pub(crate) use level::each_level;
pub(crate) use level::level;
pub use level::{for_work, WIDE_MIN_WORK};

/// The run functions: symbol and address, for [`crate::jit_symbols`].
pub(crate) fn symbols() -> impl Iterator<Item = (String, *const u8)> {
    let fixed = rows::symbols()
        .into_iter()
        .chain(affine::symbols())
        .chain(reductions::symbols())
        .chain(erf_table::symbols())
        .chain(column_sums::symbols())
        .chain(narrow::symbols())
        .chain(narrow_rows::symbols())
        .chain(widen::symbols())
        .chain([
            (
                "lf_prefetch_lines",
                prefetch::lf_prefetch_lines as *const u8,
            ),
            ("lf_run_exp_f64", run_exp64 as *const u8),
            ("lf_run_log_f64", run_log64 as *const u8),
            ("lf_run_tanh_f64", run_tanh64 as *const u8),
            ("lf_run_sigmoid_f64", run_sigmoid64 as *const u8),
            ("lf_run_silu_f64", run_silu64 as *const u8),
            ("lf_run_gelu_tanh_f64", run_gelu_tanh64 as *const u8),
            ("lf_run_gelu_tanh_f32", run_gelu_tanh as *const u8),
            ("lf_run_log2_f32", run_log2 as *const u8),
            ("lf_run_log10_f32", run_log10 as *const u8),
            ("lf_run_exp_f32", run_exp as *const u8),
            ("lf_run_log_f32", run_log as *const u8),
            ("lf_run_tanh_f32", run_tanh as *const u8),
            ("lf_run_sigmoid_f32", run_sigmoid as *const u8),
            ("lf_run_silu_f32", run_silu as *const u8),
            ("lf_run_expm1_f32", run_expm1 as *const u8),
            ("lf_run_log1p_f32", run_log1p as *const u8),
            ("lf_run_softplus_f32", run_softplus as *const u8),
            ("lf_run_elu_f32", run_elu as *const u8),
            ("lf_run_mish_f32", run_mish as *const u8),
            ("lf_run_sin_f32", trig::run_sin as *const u8),
            ("lf_run_cos_f32", trig::run_cos as *const u8),
            ("lf_run_tan_f32", trig::run_tan as *const u8),
            ("lf_run_atan_f32", run_atan as *const u8),
            ("lf_run_sinh_f32", run_sinh as *const u8),
            ("lf_run_cosh_f32", run_cosh as *const u8),
        ]);
    fixed
        .map(|(name, f)| (name.to_string(), f))
        .chain(code_tiles::symbols())
}

/// `x < bound ? bound : x`, then `hi < x ? hi : x` (`vmath`'s clamp: NaN stays).
#[inline(always)]
fn clamp(x: f32, lo: f32, hi: f32) -> f32 {
    let x = if x < lo { lo } else { x };
    if hi < x {
        hi
    } else {
        x
    }
}

/// `c[0] + x (c[1] + x (c[2] + …))` with the coefficients rounded to float32
/// and one FMA per step (`vmath::horner`).
#[inline(always)]
fn horner(x: f32, cs: &[f64]) -> f32 {
    let (last, rest) = cs.split_last().expect("coefficients");
    rest.iter()
        .rev()
        .fold(*last as f32, |acc, &c| acc.mul_add(x, c as f32))
}

/// `2^k` from exponent bits (`vmath::pow2i`).
#[inline(always)]
fn pow2i(k: i32) -> f32 {
    f32::from_bits((k.wrapping_add(127) << 23) as u32)
}

/// `1 / k!` for k = 1..=7 (`vmath::expm1_poly`'s coefficients, rounded from f64).
#[inline(always)]
fn taylor() -> [f32; 7] {
    let mut cs = [0.0f32; 7];
    let mut f = 1.0f64;
    for (k, c) in cs.iter_mut().enumerate() {
        f *= (k + 1) as f64;
        *c = (1.0 / f) as f32;
    }
    cs
}

/// `1.5 · 2^23`: added to a float32 of magnitude below `2^22`, it rounds it
/// to an integer held in its low mantissa bits (`vmath`'s shifter).
const SHIFTER: f32 = 12_582_912.0;

/// `vmath::shifted`: for `t = y + SHIFTER` (`y` rounded to an integer by
/// it), the integer as a float and as an `i32`.
#[inline(always)]
fn shifted(t: f32) -> (f32, i32) {
    let nf = t - SHIFTER;
    let ni = (t.to_bits() as i32).wrapping_sub(SHIFTER.to_bits() as i32);
    (nf, ni)
}

/// `vmath::signed_as`: the non-negative `v` with the sign bit of `x` (or'ed
/// in).
#[inline(always)]
fn signed_as(v: f32, x: f32) -> f32 {
    f32::from_bits(v.to_bits() | (x.to_bits() & 0x8000_0000))
}

/// `vmath::scale2`: `2^n` as two factors `(2^(n>>1), 2^(n - n>>1))`, each a
/// normal number.
#[inline(always)]
fn scale2(ni: i32) -> (f32, f32) {
    let n1 = ni >> 1;
    (pow2i(n1), pow2i(ni.wrapping_sub(n1)))
}

/// `-ln 2` split as `hi + lo`, `hi` with 12 low mantissa bits clear
/// (`vmath::split`), for `exp_core`'s reduction.
#[inline(always)]
fn neg_ln2_split() -> (f32, f32) {
    let hi = f32::from_bits((std::f64::consts::LN_2 as f32).to_bits() & !0xfff);
    let lo = std::f64::consts::LN_2 - f64::from(hi);
    (-hi, (-lo) as f32)
}

/// `exp`'s clamp bounds: below the first the result is 0, above the second
/// infinite.
const EXP_RANGE: (f32, f32) = (-104.0, 89.0);

/// `vmath::exp_core` for float32 with FMA: `x = n ln2 + r`, returns `(e^r - 1, n)`.
#[inline(always)]
fn exp_core(x: f32) -> (f32, i32) {
    let (nhi, nlo) = neg_ln2_split();
    let (nf, ni) = shifted(x.mul_add(std::f64::consts::LOG2_E as f32, SHIFTER));
    let r = nf.mul_add(nhi, x);
    let r = nf.mul_add(nlo, r);
    let cs = taylor();
    let mut q = cs[6];
    for &c in cs[..6].iter().rev() {
        q = q.mul_add(r, c);
    }
    (r * q, ni)
}

/// `vmath::exp` for float32 with FMA.
#[inline(always)]
fn exp(x: f32) -> f32 {
    let xc = clamp(x, EXP_RANGE.0, EXP_RANGE.1);
    let (p, ni) = exp_core(xc);
    let (s1, s2) = scale2(ni);
    p.mul_add(s1, s1) * s2
}

/// `vmath::tanh_rational` with FMA (its clamp for FMA).
#[inline(always)]
fn tanh(x: f32) -> f32 {
    let xc = clamp(x, -TANH_CLAMP_FMA as f32, TANH_CLAMP_FMA as f32);
    let x2 = xc * xc;
    let p = horner(x2, &TANH_P) * xc;
    let q = horner(x2, &TANH_Q);
    let t = p / q;
    if x.abs() < TANH_TINY as f32 {
        x
    } else {
        t
    }
}

/// `vmath::log_kind` for the natural logarithm (float32, FMA).
#[inline(always)]
fn log(x: f32) -> f32 {
    log_of(x, combine_ln)
}

/// `vmath::log_kind` for the base-2 logarithm (float32, FMA).
#[inline(always)]
fn log2(x: f32) -> f32 {
    log_of(x, combine_log2)
}

/// `vmath::log_kind` for the base-10 logarithm (float32, FMA).
#[inline(always)]
fn log10(x: f32) -> f32 {
    log_of(x, combine_log10)
}

/// `vmath::log_kind` (float32, FMA) whose last step, `log_combine`, is
/// `combine(k, lp)`: subnormals scaled by 2^25 first, then the special values.
#[inline(always)]
fn log_of(x: f32, combine: impl Fn(f32, f32) -> f32) -> f32 {
    let (kf, lp) = log_reduced(x);
    let r = combine(kf, lp);
    // log_specials
    let r = if x == f32::INFINITY { f32::INFINITY } else { r };
    let r = if x == 0.0 { f32::NEG_INFINITY } else { r };
    if x.is_nan() || x < 0.0 {
        f32::NAN
    } else {
        r
    }
}

/// [`log`] of a normal, positive, finite float32 (`MIN_POSITIVE ≤ x ≤
/// MAX`): without the subnormal scaling and the special values, which change
/// nothing there, so the same bits in a third fewer operations.
#[inline(always)]
fn log_normal(x: f32) -> f32 {
    let (kf, lp) = log_parts(x, 0.0);
    combine_ln(kf, lp)
}

/// [`log2`] of a normal, positive, finite float32 (as [`log_normal`]).
#[inline(always)]
fn log2_normal(x: f32) -> f32 {
    let (kf, lp) = log_parts(x, 0.0);
    combine_log2(kf, lp)
}

/// [`log10`] of a normal, positive, finite float32 (as [`log_normal`]).
#[inline(always)]
fn log10_normal(x: f32) -> f32 {
    let (kf, lp) = log_parts(x, 0.0);
    combine_log10(kf, lp)
}

/// Whether [`log_normal`] computes [`log`] of every one of `xs` (NaN: no).
#[inline(always)]
fn all_normal(xs: &[f32; 16]) -> bool {
    // (no early exit: one vector compare and one test)
    xs.iter().fold(true, |all, &x| {
        all & (f32::MIN_POSITIVE..=f32::MAX).contains(&x)
    })
}

/// `2 / (2k + 3)` for k = 0..5: the series of `log_scaled`'s `2·atanh(s)`.
const LOG_ATANH: [f32; 5] = {
    let mut cs = [0.0; 5];
    let mut k = 0;
    while k < cs.len() {
        cs[k] = (2.0 / (2 * k + 3) as f64) as f32;
        k += 1;
    }
    cs
};

/// `vmath::log_reduce` and `log1p_f`: [`log_parts`] of `u`, a subnormal `u`
/// scaled by `2^25` first.
#[inline(always)]
fn log_reduced(u: f32) -> (f32, f32) {
    let small = u < f32::MIN_POSITIVE;
    let kadj = if small { -25.0f32 } else { 0.0 };
    let us = u * 33_554_432.0; // 2^25
    log_parts(if small { us } else { u }, kadj)
}

/// `vmath::log_kind`'s steps after the subnormal scaling (`u` the scaled
/// value, `kadj` its exponent adjustment) and before `log_combine`: the
/// exponent `k` as a float and `log1p` of the reduced mantissa.
#[inline(always)]
fn log_parts(u: f32, kadj: f32) -> (f32, f32) {
    let sq = (std::f64::consts::FRAC_1_SQRT_2 as f32).to_bits() as i32;
    let ix = (u.to_bits() as i32).wrapping_sub(sq);
    let k = ix >> 23;
    let m = f32::from_bits(((ix & ((1 << 23) - 1)).wrapping_add(sq)) as u32);
    let f = m - 1.0;
    let kf = f32::from_bits(k.wrapping_add(SHIFTER.to_bits() as i32) as u32) - SHIFTER;
    let kf = kf + kadj;
    // log1p_f: fdlibm's arrangement of 2·atanh(s), s = f / (2 + f).
    let s = f / (2.0 + f);
    let z = s * s;
    let cs = LOG_ATANH;
    let mut q = cs[4];
    for &c in cs[..4].iter().rev() {
        q = q.mul_add(z, c);
    }
    let r = z * q;
    let hfsq = (0.5 * f) * f;
    let t = hfsq + r;
    let lp = f - (hfsq - s * t);
    (kf, lp)
}

/// `vmath::log_combine` for the base-2 logarithm: `k + lp·log2(e)`.
#[inline(always)]
fn combine_log2(kf: f32, lp: f32) -> f32 {
    lp.mul_add(std::f64::consts::LOG2_E as f32, kf)
}

/// `vmath::log_combine` for the base-10 logarithm: `k·log10(2)` in two parts
/// (`vmath::split`) plus `lp·log10(e)`.
#[inline(always)]
fn combine_log10(kf: f32, lp: f32) -> f32 {
    let v = std::f64::consts::LOG10_2;
    let hi = f32::from_bits((v as f32).to_bits() & !0xfff);
    let lo = (v - f64::from(hi)) as f32;
    let t = lp * std::f64::consts::LOG10_E as f32;
    kf.mul_add(hi, kf.mul_add(lo, t))
}

/// `vmath::log_combine` for the natural logarithm: `k·ln2` in two parts.
#[inline(always)]
fn combine_ln(kf: f32, lp: f32) -> f32 {
    let hi = f32::from_bits((std::f64::consts::LN_2 as f32).to_bits() & !0xfff);
    let lo = (std::f64::consts::LN_2 - f64::from(hi)) as f32;
    kf.mul_add(hi, kf.mul_add(lo, lp))
}

/// `1 + e^-x` (`vmath::one_plus_exp_neg`).
#[inline(always)]
fn one_plus_exp_neg(x: f32) -> f32 {
    1.0 + exp(-x)
}

#[inline(always)]
fn sigmoid(x: f32) -> f32 {
    1.0 / one_plus_exp_neg(x)
}

#[inline(always)]
fn silu(x: f32) -> f32 {
    x / one_plus_exp_neg(x)
}

/// `vmath`'s tanh-form GELU: `x / (1 + e^(-2u))`, `u = β (x + 0.044715 x³)`
/// as the interpreter computes it (NaN at `-inf`, as the interpreter's `-inf ·
/// 0`: `e^(+inf)` is inf).
#[inline(always)]
fn gelu_tanh(x: f32) -> f32 {
    let (beta, cubic) = gelu_tanh_coefficients();
    let inner = beta * (x + cubic * (x * x * x));
    x / one_plus_exp_neg(inner + inner)
}

/// The tanh-form GELU's `β = √(2/π)` and cubic coefficient `0.044715` in
/// float32 (shared with its explicit AVX-512 run, `exp_scalef.rs`).
#[inline(always)]
fn gelu_tanh_coefficients() -> (f32, f32) {
    let beta = (std::f64::consts::SQRT_2 * std::f64::consts::FRAC_2_SQRT_PI * 0.5) as f32;
    (beta, 0.044715f64 as f32)
}

/// One run function per op and element type: the op of the `n` elements at
/// `src` into `dst` (the same address: in place), in the widest code the
/// processor runs.
macro_rules! run_fn {
    ($name:ident, $($f:ident)::+, $t:ty $(, wide $($w:ident)::+)?) => {
        /// Writes the op of each of the `n` elements at `src` to `dst` (`n ≤ 0`:
        /// nothing); `dst == src` works in place.
        ///
        /// # Safety
        /// `src` must be valid for reads and `dst` for writes of `n` elements,
        /// both aligned; the two runs are the same or do not overlap, and no one
        /// else writes them during the call (the JIT kernel passes runs of its
        /// own output range, which its thread alone writes, and of an input it
        /// does not write).
        unsafe extern "C" fn $name(dst: *mut $t, src: *const $t, n: i64) {
            if n <= 0 {
                return;
            }
            // SAFETY: the caller's contract above.
            let (dst, src) = unsafe { run_slices(dst, src, n as usize) };
            by_level!(fn apply(dst: &mut [$t], src: Option<&[$t]>) {
                use super::$($f)::+ as f;
                // (plain loops: an iterator's `fold` is a function of its own,
                // which LLVM leaves out of line for a large op, and out of line
                // it runs without the level's features, a libm call per FMA)
                match src {
                    None => {
                        for v in dst.iter_mut() {
                            *v = f(*v);
                        }
                    }
                    Some(src) => {
                        // a line of the source at a time, each after asking
                        // for the line `prefetch::AHEAD` bytes on
                        const LINE: usize = 64 / std::mem::size_of::<$t>();
                        let n = dst.len().min(src.len());
                        let full = n - n % LINE;
                        for c in (0..full).step_by(LINE) {
                            super::prefetch::ahead(Some(src), c);
                            let xs: &[$t; LINE] =
                                src[c..c + LINE].try_into().expect("a line");
                            let ys: &mut [$t; LINE] =
                                (&mut dst[c..c + LINE]).try_into().expect("a line");
                            for (y, &x) in ys.iter_mut().zip(xs) {
                                *y = f(x);
                            }
                        }
                        for i in full..n {
                            dst[i] = f(src[i]);
                        }
                    }
                }
            }, (dst, src) $(, avx512 $($w)::+)?)
        }
    };
}

/// A float32 logarithm's run function (`$log`: [`log`], [`log2`] or
/// [`log10`]): each sixteen elements that are all normal positive floats
/// through `$normal` (its steps without the subnormal scaling and the special
/// values), the others through `$log` (the same bits either way; E_log's
/// inputs are all of the first kind).
macro_rules! run_log_fn {
    ($name:ident, $log:ident, $normal:ident) => {
        /// Writes the logarithm of each of the `n` elements at `src` to `dst` (`n ≤
        /// 0`: nothing); `dst == src` works in place.
        ///
        /// # Safety
        /// As the other run functions': `src` valid for reads and `dst` for
        /// writes of `n` aligned elements, the same run or disjoint, written by
        /// no one else during the call.
        unsafe extern "C" fn $name(dst: *mut f32, src: *const f32, n: i64) {
            if n <= 0 {
                return;
            }
            // SAFETY: the caller's contract above.
            let (dst, src) = unsafe { run_slices(dst, src, n as usize) };
            by_level!(
                fn apply(dst: &mut [f32], src: Option<&[f32]>) {
                    use super::{all_normal, $log as log, $normal as log_normal};
                    let n = dst.len();
                    let full = n - n % 16;
                    for c in (0..full).step_by(16) {
                        super::prefetch::ahead(src, c);
                        let xs: [f32; 16] = match src {
                            Some(s) => s[c..c + 16].try_into().expect("16 elements"),
                            None => dst[c..c + 16].try_into().expect("16 elements"),
                        };
                        // (plain loops: `array::from_fn` is not always
                        // inlined, and out of line it runs without the
                        // level's features, an FMA a libcall)
                        let out = &mut dst[c..c + 16];
                        if all_normal(&xs) {
                            for (y, x) in out.iter_mut().zip(xs) {
                                *y = log_normal(x);
                            }
                        } else {
                            for (y, x) in out.iter_mut().zip(xs) {
                                *y = log(x);
                            }
                        }
                    }
                    for i in full..n {
                        dst[i] = log(src.map_or(dst[i], |s| s[i]));
                    }
                },
                (dst, src)
            )
        }
    };
}

run_fn!(run_exp, exp, f32, wide exp_scalef::run_f32);
run_fn!(run_tanh, tanh, f32);
run_fn!(run_sigmoid, sigmoid, f32, wide exp_scalef::run_sigmoid_f32);
run_fn!(run_silu, silu, f32, wide exp_scalef::run_silu_f32);
run_fn!(run_gelu_tanh, gelu_tanh, f32, wide exp_scalef::run_gelu_tanh_f32);
run_log_fn!(run_log, log, log_normal);
run_log_fn!(run_log2, log2, log2_normal);
run_log_fn!(run_log10, log10, log10_normal);
run_fn!(run_expm1, activations::expm1, f32);
run_fn!(run_log1p, activations::log1p, f32);
run_fn!(run_softplus, activations::softplus, f32);
run_fn!(run_elu, activations::elu, f32);
run_fn!(run_mish, activations::mish, f32);
run_fn!(run_atan, trig::atan, f32);
run_fn!(run_sinh, activations::sinh, f32);
run_fn!(run_cosh, activations::cosh, f32);
run_fn!(run_exp64, float64::exp, f64, wide exp_scalef::run_f64);
run_fn!(run_tanh64, float64::tanh, f64);
run_fn!(run_sigmoid64, float64::sigmoid, f64);
run_fn!(run_silu64, float64::silu, f64);
run_fn!(run_gelu_tanh64, float64::gelu_tanh, f64);
run_fn!(run_log64, float64::log, f64);

#[cfg(test)]
pub(crate) mod tests {
    use super::erf_table::{erf, gelu, run_erf, run_gelu};
    use super::*;

    /// A float element's bits (for exact comparisons, NaN payloads included).
    pub(crate) trait Bits: Copy + Default + std::fmt::Display {
        fn bits(self) -> u64;
    }

    impl Bits for f32 {
        fn bits(self) -> u64 {
            self.to_bits().into()
        }
    }

    impl Bits for f64 {
        fn bits(self) -> u64 {
            self.to_bits()
        }
    }

    /// Whether the float32 `got` is within `ulps` of the float32 spacing at
    /// `want` from it.
    pub(crate) fn within_ulps(got: f32, want: f64, ulps: f64) -> bool {
        let a = want.abs() as f32;
        let ulp = f64::from(f32::from_bits(a.to_bits() + 1)) - f64::from(a);
        (f64::from(got) - want).abs() <= ulps * ulp
    }

    /// The run function `run`, in place and from a source run, gives `f`'s
    /// bits on each of `xs`.
    pub(crate) fn run_gives_its_ops_bits<T: Bits>(
        run: unsafe extern "C" fn(*mut T, *const T, i64),
        f: fn(T) -> T,
        xs: &[T],
    ) {
        let mut got = xs.to_vec();
        let mut into = vec![T::default(); xs.len()];
        // SAFETY: `got` (in place) and `xs` → `into` (disjoint) are live
        // buffers of that length.
        unsafe {
            run(got.as_mut_ptr(), got.as_ptr(), got.len() as i64);
            run(into.as_mut_ptr(), xs.as_ptr(), xs.len() as i64);
        }
        for ((&x, y), z) in xs.iter().zip(&got).zip(&into) {
            assert_eq!(y.bits(), f(x).bits(), "at {x}");
            assert_eq!(z.bits(), f(x).bits(), "at {x}");
        }
    }

    /// Every level computes the same bits (the portable function is the
    /// reference).
    #[test]
    fn levels_agree_bit_for_bit() {
        each_level(|| {
            let mut xs: Vec<f32> = (0..20_000)
                .map(|i| ((i as f32) * 0.013 - 130.0) * if i % 3 == 0 { -1.0 } else { 1.0 })
                .collect();
            xs.extend([
                0.0,
                -0.0,
                f32::NAN,
                f32::INFINITY,
                f32::NEG_INFINITY,
                1e-30,
                -1e-30,
                3e-4,
                88.72,
                -103.9,
                f32::MAX,
                f32::MIN,
            ]);
            type Run = unsafe extern "C" fn(*mut f32, *const f32, i64);
            for (run, f) in [
                (run_exp as Run, exp as fn(f32) -> f32),
                (run_tanh, tanh),
                (run_sigmoid, sigmoid),
                (run_silu, silu),
                (run_log, log),
                (run_erf, erf),
                (run_gelu, gelu),
                (run_gelu_tanh, gelu_tanh),
                (run_log2, log2),
                (run_log10, log10),
                (run_expm1, activations::expm1),
                (run_log1p, activations::log1p),
                (run_softplus, activations::softplus),
                (run_elu, activations::elu),
                (run_mish, activations::mish),
                (run_sinh, activations::sinh),
                (run_cosh, activations::cosh),
            ] {
                run_gives_its_ops_bits(run, f, &xs);
            }
        });
    }

    /// Runs of every length up to forty, in place and from a source, give
    /// their op's bits at every level: the tails (the masked vector of exp,
    /// sigmoid, SiLU and the tanh-form GELU at the widest level, the others'
    /// elements one by one) and the specials in them.
    #[test]
    fn tails_of_every_length_give_the_ops_bits() {
        let specials = [f32::NAN, -0.0, f32::INFINITY, 1e-40, -3.5, 88.8, 0.5];
        let xs: Vec<f32> = (0..40)
            .map(|i| {
                specials
                    .get(i % 11)
                    .copied()
                    .unwrap_or(i as f32 * 0.37 - 4.0)
            })
            .collect();
        let xs64: Vec<f64> = xs.iter().map(|&x| f64::from(x) * 1.7).collect();
        each_level(|| {
            for n in 1..=xs.len() {
                type Run = unsafe extern "C" fn(*mut f32, *const f32, i64);
                for (run, f) in [
                    (run_exp as Run, exp as fn(f32) -> f32),
                    (run_tanh, tanh),
                    (run_sigmoid, sigmoid),
                    (run_silu, silu),
                    (run_gelu_tanh, gelu_tanh),
                    (run_log, log),
                    (run_log10, log10),
                    (run_expm1, activations::expm1),
                ] {
                    run_gives_its_ops_bits(run, f, &xs[..n]);
                }
                type Run64 = unsafe extern "C" fn(*mut f64, *const f64, i64);
                for (run, f) in [
                    (run_exp64 as Run64, float64::exp as fn(f64) -> f64),
                    (run_tanh64, float64::tanh),
                    (run_log64, float64::log),
                ] {
                    run_gives_its_ops_bits(run, f, &xs64[..n]);
                }
            }
        });
    }

    /// `log_normal` gives `log`'s bits (and `log2_normal`, `log10_normal`
    /// those of `log2`, `log10`) on every normal positive float32 it is
    /// given (a stride through all their bit patterns, both ends included),
    /// and `all_normal` admits exactly those.
    #[test]
    fn log_normal_is_log_on_normal_floats() {
        let (lo, hi) = (f32::MIN_POSITIVE.to_bits(), f32::MAX.to_bits());
        for b in (lo..=hi).step_by(997).chain([lo, hi]) {
            let x = f32::from_bits(b);
            assert_eq!(log_normal(x).to_bits(), log(x).to_bits(), "at {x:e}");
            assert_eq!(log2_normal(x).to_bits(), log2(x).to_bits(), "at {x:e}");
            assert_eq!(log10_normal(x).to_bits(), log10(x).to_bits(), "at {x:e}");
        }
        let normal = [1.0f32; 16];
        assert!(all_normal(&normal));
        for bad in [0.0, -0.0, -1.0, 1e-40, f32::INFINITY, f32::NAN] {
            let mut xs = normal;
            xs[9] = bad;
            assert!(!all_normal(&xs), "{bad}");
        }
    }

    /// The float64 ops too, against their portable form and libm.
    #[test]
    fn float64_levels_agree_bit_for_bit() {
        each_level(|| {
            let mut xs: Vec<f64> = (0..20_000)
                .map(|i| ((i as f64) * 0.071 - 720.0) * if i % 3 == 0 { -1.0 } else { 1.0 })
                .collect();
            xs.extend([
                0.0,
                -0.0,
                f64::NAN,
                f64::INFINITY,
                f64::NEG_INFINITY,
                1e-300,
                5e-320,
            ]);
            xs.extend([1e-10, -2e-9, 19.9, -20.5, 709.9, -745.5, f64::MAX, f64::MIN]);
            type Run = unsafe extern "C" fn(*mut f64, *const f64, i64);
            for (run, f, libm_f) in [
                (
                    run_exp64 as Run,
                    float64::exp as fn(f64) -> f64,
                    f64::exp as fn(f64) -> f64,
                ),
                (run_tanh64, float64::tanh, f64::tanh),
                (run_log64, float64::log, f64::ln),
                (run_sigmoid64, float64::sigmoid, |x: f64| {
                    1.0 / (1.0 + (-x).exp())
                }),
                (run_silu64, float64::silu, |x: f64| x / (1.0 + (-x).exp())),
                (run_gelu_tanh64, float64::gelu_tanh, |x: f64| {
                    let beta = std::f64::consts::SQRT_2 * std::f64::consts::FRAC_2_SQRT_PI * 0.5;
                    let u = beta * (x + 0.044715 * (x * x * x));
                    x / (1.0 + (-(u + u)).exp())
                }),
            ] {
                run_gives_its_ops_bits(run, f, &xs);
                for x in &xs {
                    let (y, want) = (&f(*x), libm_f(*x));
                    let close = (y - want).abs() <= 1e-14 * want.abs().max(1e-300);
                    assert!(
                        close || (y.is_nan() && want.is_nan()) || y == &want,
                        "{x}: {y} vs {want}"
                    );
                }
            }
        });
    }

    #[test]
    fn exp_and_tanh_are_close_to_libm() {
        for i in -2000..2000 {
            let x = i as f32 * 0.04;
            let e = exp(x);
            let want = f64::from(x).exp();
            if want < f64::from(f32::MAX) && want > 1e-37 {
                assert!(((f64::from(e) - want) / want).abs() < 4e-7, "exp({x})");
            }
            let t = tanh(x);
            assert!(
                (f64::from(t) - f64::from(x).tanh()).abs() < 1e-6,
                "tanh({x})"
            );
        }
        assert_eq!(exp(f32::NEG_INFINITY), 0.0);
        assert_eq!(exp(f32::INFINITY), f32::INFINITY);
        assert!(exp(f32::NAN).is_nan() && tanh(f32::NAN).is_nan());
        assert_eq!(tanh(-0.0).to_bits(), (-0.0f32).to_bits());
        assert_eq!(sigmoid(0.0), 0.5);
        assert_eq!(silu(0.0), 0.0);
        for i in 1..4000 {
            let x = i as f32 * 0.37;
            let l = log(x);
            assert!(
                (f64::from(l) - f64::from(x).ln()).abs() < 2e-7 * f64::from(x).ln().abs().max(1.0)
            );
        }
        assert_eq!(log(0.0), f32::NEG_INFINITY);
        assert!(log(-1.0).is_nan());
        assert_eq!(log(f32::INFINITY), f32::INFINITY);
        assert!((f64::from(log(1e-42)) - f64::from(1e-42f32).ln()).abs() < 1e-5);
    }
}
