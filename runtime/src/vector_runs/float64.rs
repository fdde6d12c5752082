//! The float64 ops of the runs: `vmath`'s float64 FMA forms, operation for
//! operation (the float32 ones are in the parent module).

use lazyfuse_ir::fast_math::LN_2_TAIL;

/// 1.5 · 2^52: adding it rounds to an integer held in the low mantissa bits.
pub(super) const SHIFTER: f64 = 6_755_399_441_055_744.0;

/// `exp`'s clamp bounds: below the first the result is 0, above the second
/// infinite.
pub(super) const EXP_RANGE: (f64, f64) = (-746.0, 710.0);

/// `x < lo ? lo : x`, then `hi < x ? hi : x` (`vmath`'s clamp: NaN stays).
#[inline(always)]
fn clamp(x: f64, lo: f64, hi: f64) -> f64 {
    let x = if x < lo { lo } else { x };
    if hi < x {
        hi
    } else {
        x
    }
}

/// `2^k` from exponent bits (`vmath::pow2i`).
#[inline(always)]
fn pow2i(k: i64) -> f64 {
    f64::from_bits((k.wrapping_add(1023) << 52) as u64)
}

/// ln 2 as `hi + lo` with `hi`'s 21 low mantissa bits clear (`vmath::split`).
#[inline(always)]
pub(super) fn ln2_split() -> (f64, f64) {
    let ln2 = std::f64::consts::LN_2;
    let hi = f64::from_bits(ln2.to_bits() & !((1u64 << 21) - 1));
    (hi, (ln2 - hi) + LN_2_TAIL)
}

/// The Taylor coefficients of `e^r - 1` to degree 13: `1/k!` for k = 1..=13.
#[inline(always)]
pub(super) fn exp_taylor() -> [f64; 13] {
    let mut cs = [0.0f64; 13];
    let mut f = 1.0f64;
    for (k, c) in cs.iter_mut().enumerate() {
        f *= (k + 1) as f64;
        *c = 1.0 / f;
    }
    cs
}

/// `vmath::exp_core`: `x = n ln2 + r`, returns `(e^r - 1, n)`.
#[inline(always)]
fn exp_core(x: f64) -> (f64, i64) {
    let t = x.mul_add(std::f64::consts::LOG2_E, SHIFTER);
    let nf = t - SHIFTER;
    let ni = (t.to_bits() as i64).wrapping_sub(SHIFTER.to_bits() as i64);
    let (hi, lo) = ln2_split();
    let r = nf.mul_add(-hi, x);
    let r = nf.mul_add(-lo, r);
    let cs = exp_taylor();
    let mut q = cs[12];
    for &c in cs[..12].iter().rev() {
        q = q.mul_add(r, c);
    }
    (r * q, ni)
}

/// `vmath::exp` for float64 with FMA.
#[inline(always)]
pub(super) fn exp(x: f64) -> f64 {
    let xc = clamp(x, EXP_RANGE.0, EXP_RANGE.1);
    let (p, ni) = exp_core(xc);
    let n1 = ni >> 1;
    let n2 = ni.wrapping_sub(n1);
    let (s1, s2) = (pow2i(n1), pow2i(n2));
    p.mul_add(s1, s1) * s2
}

/// `vmath::tanh` (the `expm1` form) for float64 with FMA.
#[inline(always)]
pub(super) fn tanh(x: f64) -> f64 {
    let xc = clamp(x, -20.0, 20.0);
    let (p, ni) = exp_core(xc + xc);
    let s = pow2i(ni);
    let em = p.mul_add(s, s - 1.0);
    let t = em / (em + 2.0);
    if x.abs() < 1e-9 {
        x
    } else {
        t
    }
}

#[inline(always)]
pub(super) fn sigmoid(x: f64) -> f64 {
    1.0 / (1.0 + exp(-x))
}

#[inline(always)]
pub(super) fn silu(x: f64) -> f64 {
    x / (1.0 + exp(-x))
}

/// `vmath`'s tanh-form GELU (see the float32 one, `super::gelu_tanh`).
#[inline(always)]
pub(super) fn gelu_tanh(x: f64) -> f64 {
    let beta = std::f64::consts::SQRT_2 * std::f64::consts::FRAC_2_SQRT_PI * 0.5;
    let inner = beta * (x + 0.044715 * (x * x * x));
    x / (1.0 + exp(-(inner + inner)))
}

/// `2 / (2k + 3)` for k = 0..11: the series of [`log`]'s `2·atanh(s)`.
const LOG_ATANH: [f64; 11] = {
    let mut cs = [0.0; 11];
    let mut k = 0;
    while k < cs.len() {
        cs[k] = 2.0 / (2 * k + 3) as f64;
        k += 1;
    }
    cs
};

/// `vmath::log_kind` for the natural logarithm (float64, FMA).
#[inline(always)]
pub(super) fn log(x: f64) -> f64 {
    // log_reduce: subnormals scaled by 2^54 first.
    let small = x < f64::MIN_POSITIVE;
    let kadj = if small { -54.0 } else { 0.0 };
    let xs = x * 18_014_398_509_481_984.0; // 2^54
    let u = if small { xs } else { x };
    let sq = std::f64::consts::FRAC_1_SQRT_2.to_bits() as i64;
    let ix = (u.to_bits() as i64).wrapping_sub(sq);
    let k = ix >> 52;
    let m = f64::from_bits(((ix & ((1 << 52) - 1)).wrapping_add(sq)) as u64);
    let f = m - 1.0;
    let kf = f64::from_bits(k.wrapping_add(SHIFTER.to_bits() as i64) as u64) - SHIFTER;
    let kf = kf + kadj;
    // log1p_f: fdlibm's arrangement of 2·atanh(s), s = f / (2 + f), 11 terms.
    let s = f / (2.0 + f);
    let z = s * s;
    let cs = LOG_ATANH;
    let mut q = cs[10];
    for &c in cs[..10].iter().rev() {
        q = q.mul_add(z, c);
    }
    let r = z * q;
    let hfsq = (0.5 * f) * f;
    let t = hfsq + r;
    let lp = f - (hfsq - s * t);
    let (hi, lo) = ln2_split();
    let r = kf.mul_add(hi, kf.mul_add(lo, lp));
    let r = if x == f64::INFINITY { f64::INFINITY } else { r };
    let r = if x == 0.0 { f64::NEG_INFINITY } else { r };
    if x.is_nan() || x < 0.0 {
        f64::NAN
    } else {
        r
    }
}
