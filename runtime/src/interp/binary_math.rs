//! Kernels of the binary math functions (`fmax`, `fmin`, `hypot`, `copysign`,
//! `logaddexp`, `logaddexp2`, `xlogy`, `nextafter`, the bit shifts, `gcd`, `lcm`), with
//! the formulas of PyTorch's CPU kernels, including their edge cases: shifts out of
//! range, `gcd`/`lcm` at the integer minimum (C's `abs` after integer promotion),
//! `nextafter` on the bits of the stored type (float16/bfloat16 step by their own ulp).
//!
//! [`binary`] is consulted first by `elementwise::binary`; it answers `None` for the
//! older ops, so this file is the only place these ops' numerics live.

use super::num::{CReal, FloatStore, Int, Real};
use crate::buffer::{Buffer, Element};
use crate::error::{Error, Result};
use half::{bf16, f16};
use lazyfuse_ir::{BinaryOp, DType};
use num_complex::Complex;

fn not_for(op: BinaryOp, dtype: DType) -> Error {
    Error::Malformed(format!("{op:?} is not defined for {dtype} inputs"))
}

fn map2<T: Copy, U: Element>(x: &[T], y: &[T], f: impl Fn(T, T) -> U) -> Buffer {
    Buffer::from_vec(x.iter().zip(y).map(|(&a, &b)| f(a, b)).collect::<Vec<U>>())
}

/// True for the ops this file implements.
fn is_math(op: BinaryOp) -> bool {
    use BinaryOp::*;
    matches!(
        op,
        Fmax | Fmin
            | Hypot
            | Copysign
            | Logaddexp
            | Logaddexp2
            | Xlogy
            | Nextafter
            | BitwiseLeftShift
            | BitwiseRightShift
            | Gcd
            | Lcm
    )
}

/// Applies one of this file's ops to two buffers of one dtype, or `None` for any
/// other op.
pub(crate) fn binary(op: BinaryOp, x: &Buffer, y: &Buffer) -> Option<Result<Buffer>> {
    if !is_math(op) {
        return None;
    }
    Some(match (x, y) {
        (Buffer::Bool(a), Buffer::Bool(b)) => bool_math(op, a, b),
        (Buffer::U8(a), Buffer::U8(b)) => int_math(op, a, b),
        (Buffer::I8(a), Buffer::I8(b)) => int_math(op, a, b),
        (Buffer::I16(a), Buffer::I16(b)) => int_math(op, a, b),
        (Buffer::I32(a), Buffer::I32(b)) => int_math(op, a, b),
        (Buffer::I64(a), Buffer::I64(b)) => int_math(op, a, b),
        (Buffer::U16(a), Buffer::U16(b)) => int_math(op, a, b),
        (Buffer::U32(a), Buffer::U32(b)) => int_math(op, a, b),
        (Buffer::U64(a), Buffer::U64(b)) => int_math(op, a, b),
        (Buffer::F16(a), Buffer::F16(b)) => float_math(op, a, b),
        (Buffer::BF16(a), Buffer::BF16(b)) => float_math(op, a, b),
        (Buffer::F32(a), Buffer::F32(b)) => float_math(op, a, b),
        (Buffer::F64(a), Buffer::F64(b)) => float_math(op, a, b),
        (Buffer::C64(a), Buffer::C64(b)) => complex_math(op, a, b),
        (Buffer::C128(a), Buffer::C128(b)) => complex_math(op, a, b),
        (Buffer::Raw { dtype, .. }, _) => Err(Error::Unsupported(format!("{op:?} on {dtype}"))),
        _ => Err(Error::Malformed(format!(
            "{op:?} inputs have different dtypes ({} and {})",
            x.dtype(),
            y.dtype()
        ))),
    })
}

fn bool_math(op: BinaryOp, x: &[bool], y: &[bool]) -> Result<Buffer> {
    match op {
        BinaryOp::Fmax => Ok(map2(x, y, |a, b| a | b)),
        BinaryOp::Fmin => Ok(map2(x, y, |a, b| a & b)),
        _ => Err(not_for(op, DType::Bool)),
    }
}

// ---------------------------------------------------------------------------------------
// Integers

/// What the shift and `gcd`/`lcm` kernels need beyond [`Int`]: the width, and
/// truncation from a wider value (two's complement).
pub(crate) trait IntBits: Int {
    const BITS: i128;
    const SIGNED: bool;
    fn truncate(v: i128) -> Self;
}

macro_rules! int_bits {
    ($($t:ty: $signed:expr),*) => {$(
        impl IntBits for $t {
            const BITS: i128 = <$t>::BITS as i128;
            const SIGNED: bool = $signed;
            fn truncate(v: i128) -> Self {
                v as $t
            }
        }
    )*};
}

int_bits!(u8: false, u16: false, u32: false, u64: false, i8: true, i16: true, i32: true, i64: true);

/// PyTorch's `lshift`: a shift amount that is negative (as the signed type of the same
/// width) or at least the bit width gives 0.
pub(crate) fn shift_left<T: IntBits>(a: T, b: T) -> T {
    let s = b.to_i128();
    if s < 0 || s >= T::BITS {
        return T::ZERO;
    }
    T::truncate(a.to_i128().wrapping_shl(s as u32))
}

/// PyTorch's `rshift`: out-of-range amounts shift by `BITS - 1` for signed types (the
/// sign fills: 0 or -1) and give 0 for unsigned ones.
pub(crate) fn shift_right<T: IntBits>(a: T, b: T) -> T {
    let s = b.to_i128();
    let max_shift = T::BITS - i128::from(T::SIGNED);
    let s = if s < 0 || s >= max_shift {
        max_shift
    } else {
        s
    };
    if s >= T::BITS {
        return T::ZERO;
    }
    T::truncate(a.to_i128() >> s)
}

/// PyTorch's `calc_gcd`: Euclid on `abs` of both, where `abs` of the minimum of a
/// type stays the minimum (for int8/int16 C's `abs` runs on the promoted `int` and
/// truncates back, which comes to the same).
pub(crate) fn gcd<T: IntBits>(a: T, b: T) -> T {
    let (mut a, mut b) = (a.wrapping_abs(), b.wrapping_abs());
    while a != T::ZERO {
        let c = a;
        a = b.wrapping_rem(a);
        b = c;
    }
    b
}

/// PyTorch's `lcm`: `abs(a / g * b)`, 0 when `g == 0`. Types narrower than `int` are
/// promoted by C before the product and `abs`, then truncated; `int` and wider wrap
/// in their own width.
pub(crate) fn lcm<T: IntBits>(a: T, b: T) -> T {
    let g = gcd(a, b);
    if g == T::ZERO {
        return T::ZERO;
    }
    if T::BITS < 32 {
        // Exact in i128: |a / g * b| < 2^32.
        let v = a.to_i128() / g.to_i128() * b.to_i128();
        T::truncate(v.abs())
    } else {
        a.wrapping_div(g).wrapping_mul(b).wrapping_abs()
    }
}

fn int_math<T: IntBits>(op: BinaryOp, x: &[T], y: &[T]) -> Result<Buffer> {
    use BinaryOp::*;
    Ok(match op {
        Fmax => map2(x, y, |a, b| a.max(b)),
        Fmin => map2(x, y, |a, b| a.min(b)),
        BitwiseLeftShift => map2(x, y, shift_left),
        BitwiseRightShift => map2(x, y, shift_right),
        Gcd => map2(x, y, gcd),
        Lcm => map2(x, y, lcm),
        _ => return Err(not_for(op, T::DTYPE)),
    })
}

// ---------------------------------------------------------------------------------------
// Real floats

/// The libm functions these kernels need beyond [`Real`].
pub(crate) trait RealMath: Real {
    fn ln_1p(self) -> Self;
    fn exp2(self) -> Self;
    fn is_infinite(self) -> bool;
    fn inv_ln2() -> Self;
}

macro_rules! real_math {
    ($($t:ident),*) => {$(
        impl RealMath for $t {
            fn ln_1p(self) -> Self {
                <$t>::ln_1p(self)
            }
            fn exp2(self) -> Self {
                <$t>::exp2(self)
            }
            fn is_infinite(self) -> bool {
                <$t>::is_infinite(self)
            }
            fn inv_ln2() -> Self {
                1.0 / std::$t::consts::LN_2
            }
        }
    )*};
}

real_math!(f32, f64);

/// The bits of a stored float, for `nextafter`.
pub(crate) trait FloatBits: FloatStore {
    const SIGN: u64;
    fn bits(self) -> u64;
    fn from_bits(b: u64) -> Self;
    fn as_f64(self) -> f64;
}

macro_rules! float_bits {
    ($($t:ty: $sign:expr, $u:ty, $to:expr),*) => {$(
        impl FloatBits for $t {
            const SIGN: u64 = $sign;
            fn bits(self) -> u64 {
                u64::from(self.to_bits())
            }
            fn from_bits(b: u64) -> Self {
                <$t>::from_bits(b as $u)
            }
            fn as_f64(self) -> f64 {
                let f: fn($t) -> f64 = $to;
                f(self)
            }
        }
    )*};
}

float_bits!(
    f16: 1 << 15, u16, |x| x.to_f64(),
    bf16: 1 << 15, u16, |x| x.to_f64(),
    f32: 1 << 31, u32, |x| f64::from(x),
    f64: 1 << 63, u64, |x| x
);

/// C's `nextafter` on the stored type: NaN in, NaN out; equal operands give `y`; from
/// zero the smallest subnormal with `y`'s sign; otherwise one step of the bit pattern
/// (away from zero when `y` lies further out).
pub(crate) fn nextafter<S: FloatBits>(x: S, y: S) -> S {
    let (xf, yf) = (x.as_f64(), y.as_f64());
    if xf.is_nan() || yf.is_nan() {
        return S::narrow(<S::C as Real>::NAN);
    }
    if xf == yf {
        return y;
    }
    if xf == 0.0 {
        return S::from_bits(1 | if yf < 0.0 { S::SIGN } else { 0 });
    }
    let bits = x.bits();
    if (yf > xf) == (xf > 0.0) {
        S::from_bits(bits + 1)
    } else {
        S::from_bits(bits - 1)
    }
}

/// `std::fmax`/`std::fmin` as PyTorch calls them: a NaN operand yields the other; on
/// equal operands (`-0` and `0`) the first wins.
pub(crate) fn fmax<R: Real>(a: R, b: R) -> R {
    if a.is_nan() {
        b
    } else if b.is_nan() {
        a
    } else if a < b {
        b
    } else {
        a
    }
}

pub(crate) fn fmin<R: Real>(a: R, b: R) -> R {
    if a.is_nan() {
        b
    } else if b.is_nan() {
        a
    } else if b < a {
        b
    } else {
        a
    }
}

/// PyTorch's scalar `logaddexp`: equal infinities give themselves, otherwise
/// `max + log1p(exp(-|a - b|))` (NaN propagates).
pub(crate) fn logaddexp<R: RealMath>(a: R, b: R) -> R {
    if a.is_infinite() && a == b {
        return a;
    }
    let m = if a < b { b } else { a };
    m + (-(a - b).abs()).exp().ln_1p()
}

pub(crate) fn logaddexp2<R: RealMath>(a: R, b: R) -> R {
    if a.is_infinite() && a == b {
        return a;
    }
    let m = if a < b { b } else { a };
    m + (-(a - b).abs()).exp2().ln_1p() * R::inv_ln2()
}

/// PyTorch's `xlogy`: NaN `y` gives NaN, `x == 0` gives 0, else `x * log(y)`.
pub(crate) fn xlogy<R: Real>(x: R, y: R) -> R {
    if y.is_nan() {
        R::NAN
    } else if x == R::ZERO {
        R::ZERO
    } else {
        x * y.ln()
    }
}

fn float_math<S: FloatBits>(op: BinaryOp, x: &[S], y: &[S]) -> Result<Buffer>
where
    S::C: RealMath,
{
    use BinaryOp::*;
    let f = |g: fn(S::C, S::C) -> S::C| {
        map2(x, y, move |a: S, b: S| S::narrow(g(a.widen(), b.widen())))
    };
    Ok(match op {
        Fmax => f(fmax),
        Fmin => f(fmin),
        Hypot => f(Real::hypot),
        Copysign => f(Real::copysign),
        Logaddexp => f(logaddexp),
        Logaddexp2 => f(logaddexp2),
        Xlogy => f(xlogy),
        Nextafter => map2(x, y, nextafter),
        _ => return Err(not_for(op, S::DTYPE)),
    })
}

// ---------------------------------------------------------------------------------------
// Complex

fn c_is_nan<P: Real>(z: Complex<P>) -> bool {
    z.re.is_nan() || z.im.is_nan()
}

/// PyTorch's complex `_log_add_exp_helper`: order by real part (a NaN operand wins
/// both places), NaN is infectious, equal infinite real parts are special-cased, and
/// otherwise `log1p(exp(min - max)) + max`.
fn c_logaddexp<P: CReal + RealMath>(x: Complex<P>, y: Complex<P>) -> Complex<P>
where
    Complex<P>: Element,
{
    let (min, max) = if c_is_nan(y) {
        (y, y)
    } else if c_is_nan(x) {
        (x, x)
    } else if x.re < y.re {
        (x, y)
    } else {
        (y, x)
    };
    let one = Complex::new(P::ONE, P::ZERO);
    let add = |a: Complex<P>, b: Complex<P>| Complex::new(a.re + b.re, a.im + b.im);
    if c_is_nan(min) {
        Complex::new(P::NAN, P::NAN)
    } else if min.re.is_infinite() && min.re == max.re {
        if min.re < P::ZERO {
            min
        } else {
            P::c_ln(add(P::c_exp(min), P::c_exp(max)))
        }
    } else {
        let d = Complex::new(min.re - max.re, min.im - max.im);
        add(P::c_ln(add(one, P::c_exp(d))), max)
    }
}

fn complex_math<P: CReal + RealMath>(
    op: BinaryOp,
    x: &[Complex<P>],
    y: &[Complex<P>],
) -> Result<Buffer>
where
    Complex<P>: Element,
{
    match op {
        BinaryOp::Logaddexp => Ok(map2(x, y, c_logaddexp)),
        _ => Err(not_for(op, <Complex<P> as Element>::DTYPE)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shifts_out_of_range() {
        assert_eq!(shift_left(1i8, 7), -128);
        assert_eq!(shift_left(1i8, 8), 0);
        assert_eq!(shift_left(1i8, -1), 0);
        assert_eq!(shift_left(1u8, 200), 0);
        assert_eq!(shift_right(-128i8, 100), -1);
        assert_eq!(shift_right(5i8, -1), 0);
        assert_eq!(shift_right(200u8, 7), 1);
        assert_eq!(shift_right(255u8, 8), 0);
        assert_eq!(shift_right(u64::MAX, 64), 0);
        assert_eq!(shift_left(3i64, 62), -4611686018427387904);
    }

    #[test]
    fn gcd_lcm_at_the_minimum() {
        assert_eq!(gcd(-128i8, 0), -128);
        assert_eq!(gcd(-128i8, 6), -2);
        assert_eq!(gcd(i64::MIN, 6), -2);
        assert_eq!(lcm(50i8, 3), -106);
        assert_eq!(lcm(127i8, 2), -2);
        assert_eq!(lcm(200u8, 3), 88);
        assert_eq!(lcm(300i16, 301), 24764);
        assert_eq!(lcm(-300000i32, 30001), 410365408);
        assert_eq!(lcm(0i32, 5), 0);
    }

    #[test]
    fn nextafter_steps_the_stored_type() {
        assert_eq!(nextafter(f16::ONE, f16::from_f32(2.0)).to_bits(), 15361);
        assert_eq!(nextafter(bf16::ONE, bf16::ZERO).to_bits(), 16255);
        assert_eq!(nextafter(0.0f32, -1.0).to_bits(), 0x8000_0001);
        assert_eq!(nextafter(f32::INFINITY, 0.0), f32::MAX);
        assert!(nextafter(1.0f64, f64::NAN).is_nan());
        assert_eq!(nextafter(0.0f64, -0.0).to_bits(), (-0.0f64).to_bits());
    }
}
