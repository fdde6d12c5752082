//! Elementwise kernels: `Unary`, `Binary` and `Where`, one generic kernel per dtype
//! category (bool, integer, real float, complex) with PyTorch's CPU formulas.
//!
//! Inputs of a binary op share one dtype (the builder promoted them); float16 and
//! bfloat16 compute each element in float32 and round once ([`FloatStore`]).

use super::map::{map, map2, not_for, try_map2};
use super::num::{cadd, cmul, cneg, complex_div, csub, CReal, FloatStore, Int, Real};
use crate::buffer::{Buffer, Element};
use crate::error::{Error, Result};
use lazyfuse_ir::{BinaryOp, DType, UnaryOp};
use num_complex::Complex;

// ---------------------------------------------------------------------------
// Unary

/// Applies a unary op (the output dtype follows from the op and the input dtype).
pub(crate) fn unary(op: UnaryOp, x: &Buffer) -> Result<Buffer> {
    match x {
        Buffer::Bool(v) => bool_unary(op, v),
        Buffer::U8(v) => int_unary(op, v),
        Buffer::I8(v) => int_unary(op, v),
        Buffer::I16(v) => int_unary(op, v),
        Buffer::I32(v) => int_unary(op, v),
        Buffer::I64(v) => int_unary(op, v),
        Buffer::U16(v) => int_unary(op, v),
        Buffer::U32(v) => int_unary(op, v),
        Buffer::U64(v) => int_unary(op, v),
        Buffer::F16(v) => float_unary(op, v),
        Buffer::BF16(v) => float_unary(op, v),
        Buffer::F32(v) => float_unary(op, v),
        Buffer::F64(v) => float_unary(op, v),
        Buffer::C64(v) => complex_unary(op, v),
        Buffer::C128(v) => complex_unary(op, v),
        Buffer::Raw { dtype, .. } => Err(Error::Unsupported(format!("{op:?} on {dtype}"))),
    }
}

fn bool_unary(op: UnaryOp, x: &[bool]) -> Result<Buffer> {
    use UnaryOp::*;
    Ok(match op {
        // sign/relu/rounding of a 0/1 value is the value itself.
        Sign | Sgn | Relu | Floor | Ceil | Round | Trunc => map(x, |a| a),
        LogicalNot | BitwiseNot => map(x, |a| !a),
        IsNan => map(x, |_| false),
        _ => return super::pointwise::bool_unary(op, x),
    })
}

fn int_unary<T: Int>(op: UnaryOp, x: &[T]) -> Result<Buffer> {
    use UnaryOp::*;
    Ok(match op {
        Neg => map(x, |a| a.wrapping_neg()),
        Abs => map(x, |a| a.wrapping_abs()),
        Sign | Sgn => map(x, |a| {
            if a.is_negative() {
                T::ONE.wrapping_neg()
            } else if a == T::ZERO {
                T::ZERO
            } else {
                T::ONE
            }
        }),
        Relu => map(x, |a| if a.is_negative() { T::ZERO } else { a }),
        Floor | Ceil | Round | Trunc => map(x, |a| a),
        LogicalNot => map(x, |a| a == T::ZERO),
        BitwiseNot => map(x, |a| a.bit_not()),
        IsNan => map(x, |_| false),
        _ => return super::pointwise::int_unary(op, x),
    })
}

fn float_unary<S: FloatStore>(op: UnaryOp, x: &[S]) -> Result<Buffer>
where
    S::C: super::pointwise::Math,
{
    use UnaryOp::*;
    let f = |g: fn(S::C) -> S::C| map(x, move |a: S| S::narrow(g(a.widen())));
    let zero = <S::C as Real>::ZERO;
    Ok(match op {
        Neg => f(|a| -a),
        Abs => f(Real::abs),
        // PyTorch's (0 < a) - (a < 0): NaN compares false both ways, so it gives 0.
        Sign | Sgn => f(|a| {
            if a > Real::ZERO {
                Real::ONE
            } else if a < Real::ZERO {
                -<S::C as Real>::ONE
            } else {
                Real::ZERO
            }
        }),
        Exp => f(Real::exp),
        Log => f(Real::ln),
        Sqrt => f(Real::sqrt),
        Rsqrt => f(|a| <S::C as Real>::ONE / a.sqrt()),
        Sin => f(Real::sin),
        Cos => f(Real::cos),
        Tanh => f(Real::tanh),
        Sigmoid => f(super::pointwise::sigmoid),
        // clamp_min(x, 0): NaN propagates.
        Relu => f(|a| if a < Real::ZERO { Real::ZERO } else { a }),
        Floor => f(Real::floor),
        Ceil => f(Real::ceil),
        Round => f(Real::round_ties_even),
        Trunc => f(Real::trunc),
        Reciprocal => f(|a| <S::C as Real>::ONE / a),
        LogicalNot => map(x, move |a: S| a.widen() == zero),
        IsNan => map(x, |a: S| a.widen().is_nan()),
        BitwiseNot => return Err(not_for(op, S::DTYPE)),
        // The unary math functions are computed in `pointwise`.
        _ => return super::pointwise::float_unary(op, x),
    })
}

fn complex_unary<P: super::pointwise::CMath + Element>(
    op: UnaryOp,
    x: &[Complex<P>],
) -> Result<Buffer>
where
    Complex<P>: Element,
{
    use UnaryOp::*;
    let one = Complex::new(P::ONE, P::ZERO);
    let f = |g: &dyn Fn(Complex<P>) -> Complex<P>| map(x, g);
    Ok(match op {
        Neg => f(&cneg),
        // |z| = hypot(re, im): real output.
        Abs => map(x, |a: Complex<P>| a.re.hypot(a.im)),
        Exp => f(&P::c_exp),
        Log => f(&P::c_ln),
        Sqrt => f(&P::c_sqrt),
        Rsqrt => f(&|a| complex_div(one, P::c_sqrt(a))),
        Sin => f(&P::c_sin),
        Cos => f(&P::c_cos),
        Tanh => f(&P::c_tanh),
        Sigmoid => f(&|a| complex_div(one, cadd(one, P::c_exp(cneg(a))))),
        Reciprocal => f(&|a| complex_div(one, a)),
        LogicalNot => map(x, |a: Complex<P>| a.re == P::ZERO && a.im == P::ZERO),
        IsNan => map(x, |a: Complex<P>| a.re.is_nan() || a.im.is_nan()),
        RealPart => map(x, |a: Complex<P>| a.re),
        ImagPart => map(x, |a: Complex<P>| a.im),
        Conj => f(&|a| Complex::new(a.re, -a.im)),
        _ => return super::pointwise::complex_unary(op, x),
    })
}

// ---------------------------------------------------------------------------
// Binary

/// Applies a binary op to two buffers of one dtype.
pub(crate) fn binary(op: BinaryOp, x: &Buffer, y: &Buffer) -> Result<Buffer> {
    if let Some(out) = super::binary_math::binary(op, x, y) {
        return out;
    }
    if op == BinaryOp::ComplexOf {
        return match (x, y) {
            (Buffer::F32(a), Buffer::F32(b)) => Ok(map2(a, b, Complex::new)),
            (Buffer::F64(a), Buffer::F64(b)) => Ok(map2(a, b, Complex::new)),
            _ => Err(Error::Unsupported(format!(
                "complex values of {} parts",
                x.dtype()
            ))),
        };
    }
    match (x, y) {
        (Buffer::Bool(a), Buffer::Bool(b)) => bool_binary(op, a, b),
        (Buffer::U8(a), Buffer::U8(b)) => int_binary(op, a, b),
        (Buffer::I8(a), Buffer::I8(b)) => int_binary(op, a, b),
        (Buffer::I16(a), Buffer::I16(b)) => int_binary(op, a, b),
        (Buffer::I32(a), Buffer::I32(b)) => int_binary(op, a, b),
        (Buffer::I64(a), Buffer::I64(b)) => int_binary(op, a, b),
        (Buffer::U16(a), Buffer::U16(b)) => int_binary(op, a, b),
        (Buffer::U32(a), Buffer::U32(b)) => int_binary(op, a, b),
        (Buffer::U64(a), Buffer::U64(b)) => int_binary(op, a, b),
        (Buffer::F16(a), Buffer::F16(b)) => float_binary(op, a, b),
        (Buffer::BF16(a), Buffer::BF16(b)) => float_binary(op, a, b),
        (Buffer::F32(a), Buffer::F32(b)) => float_binary(op, a, b),
        (Buffer::F64(a), Buffer::F64(b)) => float_binary(op, a, b),
        (Buffer::C64(a), Buffer::C64(b)) => complex_binary(op, a, b),
        (Buffer::C128(a), Buffer::C128(b)) => complex_binary(op, a, b),
        (Buffer::Raw { dtype, .. }, _) => Err(Error::Unsupported(format!("{op:?} on {dtype}"))),
        _ => Err(Error::Malformed(format!(
            "{op:?} inputs have different dtypes ({} and {})",
            x.dtype(),
            y.dtype()
        ))),
    }
}

fn bool_binary(op: BinaryOp, x: &[bool], y: &[bool]) -> Result<Buffer> {
    use BinaryOp::*;
    Ok(match op {
        // bool arithmetic is computed on 0/1 and converted back with `!= 0`.
        Add | Maximum | LogicalOr | BitwiseOr => map2(x, y, |a, b| a | b),
        Mul | Minimum | LogicalAnd | BitwiseAnd => map2(x, y, |a, b| a & b),
        Eq => map2(x, y, |a, b| a == b),
        Ne | LogicalXor | BitwiseXor => map2(x, y, |a, b| a != b),
        Lt => map2(x, y, |a, b| !a & b),
        Le => map2(x, y, |a, b| a <= b),
        Gt => map2(x, y, |a, b| a & !b),
        Ge => map2(x, y, |a, b| a >= b),
        _ => return Err(not_for(op, DType::Bool)),
    })
}

/// Python's `a // b` on integers (floor), `b != 0`.
fn int_div_floor<T: Int>(a: T, b: T) -> T {
    let q = a.wrapping_div(b);
    // Truncation rounded toward zero; step down when the signs differ and the
    // division was inexact.
    if a.is_negative() != b.is_negative() && a.wrapping_rem(b) != T::ZERO {
        q.wrapping_sub(T::ONE)
    } else {
        q
    }
}

/// Python's `a % b` on integers (sign of `b`), `b != 0`.
fn int_remainder<T: Int>(a: T, b: T) -> T {
    let r = a.wrapping_rem(b);
    if r != T::ZERO && r.is_negative() != b.is_negative() {
        r.wrapping_add(b)
    } else {
        r
    }
}

/// PyTorch's integer `pow`: repeated squaring with wrapping; a negative exponent
/// gives 1 for base 1, ±1 for base -1 and 0 otherwise.
pub(crate) fn int_pow<T: Int>(mut base: T, exp: T) -> T {
    if exp.is_negative() {
        return if base == T::ONE {
            T::ONE
        } else if base == T::ONE.wrapping_neg() {
            if exp.wrapping_rem(T::ONE.wrapping_add(T::ONE)) != T::ZERO {
                base
            } else {
                T::ONE
            }
        } else {
            T::ZERO
        };
    }
    let mut e = exp.to_i128();
    let mut result = T::ONE;
    while e != 0 {
        if e & 1 == 1 {
            result = result.wrapping_mul(base);
        }
        e >>= 1;
        base = base.wrapping_mul(base);
    }
    result
}

fn nonzero_divisor<T: Int>(b: T) -> Result<T> {
    if b == T::ZERO {
        Err(Error::ZeroDivision)
    } else {
        Ok(b)
    }
}

fn int_binary<T: Int>(op: BinaryOp, x: &[T], y: &[T]) -> Result<Buffer> {
    use BinaryOp::*;
    Ok(match op {
        Add => map2(x, y, T::wrapping_add),
        Sub => map2(x, y, T::wrapping_sub),
        Mul => map2(x, y, T::wrapping_mul),
        DivFloor => try_map2(x, y, |a, b| Ok(int_div_floor(a, nonzero_divisor(b)?)))?,
        DivTrunc => try_map2(x, y, |a, b| Ok(a.wrapping_div(nonzero_divisor(b)?)))?,
        Remainder => try_map2(x, y, |a, b| Ok(int_remainder(a, nonzero_divisor(b)?)))?,
        Fmod => try_map2(x, y, |a, b| Ok(a.wrapping_rem(nonzero_divisor(b)?)))?,
        Pow => map2(x, y, int_pow),
        Maximum => map2(x, y, |a, b| a.max(b)),
        Minimum => map2(x, y, |a, b| a.min(b)),
        Eq => map2(x, y, |a, b| a == b),
        Ne => map2(x, y, |a, b| a != b),
        Lt => map2(x, y, |a, b| a < b),
        Le => map2(x, y, |a, b| a <= b),
        Gt => map2(x, y, |a, b| a > b),
        Ge => map2(x, y, |a, b| a >= b),
        LogicalAnd => map2(x, y, |a, b| a != T::ZERO && b != T::ZERO),
        LogicalOr => map2(x, y, |a, b| a != T::ZERO || b != T::ZERO),
        LogicalXor => map2(x, y, |a, b| (a != T::ZERO) != (b != T::ZERO)),
        BitwiseAnd => map2(x, y, T::bit_and),
        BitwiseOr => map2(x, y, T::bit_or),
        BitwiseXor => map2(x, y, T::bit_xor),
        Div | Atan2 => return Err(not_for(op, T::DTYPE)),
        // The ops of `binary_math`, which answers them before this match.
        _ => return Err(not_for(op, T::DTYPE)),
    })
}

/// PyTorch's `div_floor_floating`: floor division that agrees with the remainder.
pub(crate) fn float_div_floor<R: Real>(a: R, b: R) -> R {
    if b == R::ZERO {
        return a / b;
    }
    let m = a % b;
    let mut div = (a - m) / b;
    if m != R::ZERO && (b < R::ZERO) != (m < R::ZERO) {
        div = div - R::ONE;
    }
    if div != R::ZERO {
        let mut floordiv = div.floor();
        if div - floordiv > R::HALF {
            floordiv = floordiv + R::ONE;
        }
        floordiv
    } else {
        R::ZERO.copysign(a / b)
    }
}

/// PyTorch's float `remainder`: `fmod`, moved into the divisor's sign.
pub(crate) fn float_remainder<R: Real>(a: R, b: R) -> R {
    let m = a % b;
    if m != R::ZERO && (b < R::ZERO) != (m < R::ZERO) {
        m + b
    } else {
        m
    }
}

fn truthy<R: Real>(a: R) -> bool {
    // NaN != 0, so NaN is true.
    a != R::ZERO
}

fn float_binary<S: FloatStore>(op: BinaryOp, x: &[S], y: &[S]) -> Result<Buffer> {
    use BinaryOp::*;
    let f = |g: fn(S::C, S::C) -> S::C| {
        map2(x, y, move |a: S, b: S| S::narrow(g(a.widen(), b.widen())))
    };
    let p = |g: fn(S::C, S::C) -> bool| map2(x, y, move |a: S, b: S| g(a.widen(), b.widen()));
    Ok(match op {
        Add => f(|a, b| a + b),
        Sub => f(|a, b| a - b),
        Mul => f(|a, b| a * b),
        Div => f(|a, b| a / b),
        DivFloor => f(float_div_floor),
        DivTrunc => f(|a, b| (a / b).trunc()),
        Remainder => f(float_remainder),
        Fmod => f(|a, b| a % b),
        Pow => f(Real::powf),
        Maximum => f(|a, b| {
            if a.is_nan() || b.is_nan() {
                <S::C as Real>::NAN
            } else if a < b {
                b
            } else {
                a
            }
        }),
        Minimum => f(|a, b| {
            if a.is_nan() || b.is_nan() {
                <S::C as Real>::NAN
            } else if b < a {
                b
            } else {
                a
            }
        }),
        Atan2 => f(Real::atan2),
        Eq => p(|a, b| a == b),
        Ne => p(|a, b| a != b),
        Lt => p(|a, b| a < b),
        Le => p(|a, b| a <= b),
        Gt => p(|a, b| a > b),
        Ge => p(|a, b| a >= b),
        LogicalAnd => p(|a, b| truthy(a) && truthy(b)),
        LogicalOr => p(|a, b| truthy(a) || truthy(b)),
        LogicalXor => p(|a, b| truthy(a) != truthy(b)),
        BitwiseAnd | BitwiseOr | BitwiseXor => return Err(not_for(op, S::DTYPE)),
        // The ops of `binary_math`, which answers them before this match.
        _ => return Err(not_for(op, S::DTYPE)),
    })
}

fn complex_binary<P: CReal>(op: BinaryOp, x: &[Complex<P>], y: &[Complex<P>]) -> Result<Buffer>
where
    Complex<P>: Element,
{
    use BinaryOp::*;
    let t = |a: Complex<P>| a.re != P::ZERO || a.im != P::ZERO;
    Ok(match op {
        Add => map2(x, y, cadd),
        Sub => map2(x, y, csub),
        Mul => map2(x, y, cmul),
        Div => map2(x, y, complex_div),
        Pow => map2(x, y, P::c_powc),
        Eq => map2(x, y, |a, b| a == b),
        Ne => map2(x, y, |a, b| a != b),
        LogicalAnd => map2(x, y, |a, b| t(a) && t(b)),
        LogicalOr => map2(x, y, |a, b| t(a) || t(b)),
        LogicalXor => map2(x, y, |a, b| t(a) != t(b)),
        _ => return Err(not_for(op, <Complex<P> as Element>::DTYPE)),
    })
}

// ---------------------------------------------------------------------------
// Where

/// `where(cond, x, y)` for two buffers of one dtype.
pub(crate) fn where_(cond: &Buffer, x: &Buffer, y: &Buffer) -> Result<Buffer> {
    let Buffer::Bool(c) = cond else {
        return Err(Error::Malformed(format!(
            "where condition is {}, not bool",
            cond.dtype()
        )));
    };
    fn pick<T: Element>(c: &[bool], a: &[T], b: &[T]) -> Buffer {
        Buffer::from_vec(
            c.iter()
                .zip(a.iter().zip(b))
                .map(|(&c, (&a, &b))| if c { a } else { b })
                .collect::<Vec<T>>(),
        )
    }
    if x.dtype() != y.dtype() {
        return Err(Error::Malformed(format!(
            "where branches have different dtypes ({} and {})",
            x.dtype(),
            y.dtype()
        )));
    }
    Ok(match (x, y) {
        (Buffer::Raw { dtype, bytes: a }, Buffer::Raw { bytes: b, .. }) => {
            let size = dtype.size_in_bytes();
            let mut out = Vec::with_capacity(a.len());
            for (i, &c) in c.iter().enumerate() {
                let src = if c { a } else { b };
                out.extend_from_slice(&src[i * size..(i + 1) * size]);
            }
            Buffer::Raw {
                dtype: *dtype,
                bytes: out,
            }
        }
        _ => crate::with_buffer!(x, a => {
            let b = y.as_slice().ok_or_else(|| Error::Malformed("where branch dtypes".into()))?;
            pick(c, a, b)
        }, raw => return Err(Error::Malformed("where of mixed raw buffers".into()))),
    })
}
