//! Kernels of the unary pointwise ops: the unary math functions (`exp2` …
//! `erfinv`), the predicates (`isinf`, `signbit`, …), the parameterless activations
//! (`silu`, `mish`, `hardsigmoid`, `hardswish`) and the ops with host-number
//! parameters ([`UnaryParamOp`]: `nan_to_num`, `logit`, `round_decimals`, `gelu`,
//! `softplus`, `elu`, `leaky_relu`, `hardtanh`).
//!
//! Formulas are PyTorch's CPU ones (`aten/src/ATen/native/cpu/*Kernel.cpp` and
//! `c10/util/complex_math.h`), so that special values (NaN, ±inf, ±0) come out as
//! PyTorch's do. float16/bfloat16 compute in float32 and round once. `erf`/`erfc`
//! come from the `libm` crate (a port of musl's), `erfinv` is PyTorch's own
//! rational approximation refined by two Newton steps.

use super::map::{map, not_for};
use super::num::{cmul, complex_div, CReal, FloatStore, Int, Real};
use crate::buffer::{Buffer, Element};
use crate::error::{Error, Result};
use half::{bf16, f16};
use lazyfuse_ir::{DType, UnaryOp, UnaryParamOp};
use num_complex::Complex;

// The unary kernels per dtype category, reached from `elementwise`'s dispatch for
// the ops it does not compute itself.

pub(crate) fn bool_unary(op: UnaryOp, x: &[bool]) -> Result<Buffer> {
    use UnaryOp::*;
    Ok(match op {
        IsInf | IsPosInf | IsNegInf | Signbit => map(x, |_| false),
        IsFinite | IsReal => map(x, |_| true),
        _ => return Err(not_for(op, DType::Bool)),
    })
}

pub(crate) fn int_unary<T: Int>(op: UnaryOp, x: &[T]) -> Result<Buffer> {
    use UnaryOp::*;
    Ok(match op {
        Square => map(x, |a| a.wrapping_mul(a)),
        IsInf | IsPosInf | IsNegInf => map(x, |_| false),
        IsFinite | IsReal => map(x, |_| true),
        Signbit => map(x, |a: T| a.is_negative()),
        _ => return Err(not_for(op, T::DTYPE)),
    })
}

/// The real functions these kernels need beyond [`Real`].
pub(crate) trait Math: Real {
    const INFINITY: Self;
    fn exp2(self) -> Self;
    fn exp_m1(self) -> Self;
    fn log2(self) -> Self;
    fn log10(self) -> Self;
    fn ln_1p(self) -> Self;
    fn tan(self) -> Self;
    fn asin(self) -> Self;
    fn acos(self) -> Self;
    fn atan(self) -> Self;
    fn sinh(self) -> Self;
    fn cosh(self) -> Self;
    fn asinh(self) -> Self;
    fn acosh(self) -> Self;
    fn atanh(self) -> Self;
    fn erf(self) -> Self;
    fn erfc(self) -> Self;
    fn is_infinite(self) -> bool;
    fn is_finite(self) -> bool;
    fn is_sign_negative(self) -> bool;
}

macro_rules! math_impl {
    ($t:ty, $asinh:path, $acosh:path, $atanh:path, $erf:path, $erfc:path) => {
        impl Math for $t {
            const INFINITY: Self = <$t>::INFINITY;
            fn exp2(self) -> Self {
                <$t>::exp2(self)
            }
            fn exp_m1(self) -> Self {
                <$t>::exp_m1(self)
            }
            fn log2(self) -> Self {
                <$t>::log2(self)
            }
            fn log10(self) -> Self {
                <$t>::log10(self)
            }
            fn ln_1p(self) -> Self {
                <$t>::ln_1p(self)
            }
            fn tan(self) -> Self {
                <$t>::tan(self)
            }
            fn asin(self) -> Self {
                <$t>::asin(self)
            }
            fn acos(self) -> Self {
                <$t>::acos(self)
            }
            fn atan(self) -> Self {
                <$t>::atan(self)
            }
            fn sinh(self) -> Self {
                <$t>::sinh(self)
            }
            fn cosh(self) -> Self {
                <$t>::cosh(self)
            }
            // musl's inverse hyperbolic functions stay accurate where std's
            // formulas overflow (`acosh(1e308)`).
            fn asinh(self) -> Self {
                $asinh(self)
            }
            fn acosh(self) -> Self {
                // musl's acosh ignores the sign of |x| >= 2 (acoshf(-100) is finite).
                if self < 1.0 {
                    <$t>::NAN
                } else {
                    $acosh(self)
                }
            }
            fn atanh(self) -> Self {
                $atanh(self)
            }
            fn erf(self) -> Self {
                $erf(self)
            }
            fn erfc(self) -> Self {
                $erfc(self)
            }
            fn is_infinite(self) -> bool {
                <$t>::is_infinite(self)
            }
            fn is_finite(self) -> bool {
                <$t>::is_finite(self)
            }
            fn is_sign_negative(self) -> bool {
                <$t>::is_sign_negative(self)
            }
        }
    };
}

math_impl!(
    f32,
    libm::asinhf,
    libm::acoshf,
    libm::atanhf,
    libm::erff,
    libm::erfcf
);
math_impl!(
    f64,
    libm::asinh,
    libm::acosh,
    libm::atanh,
    libm::erf,
    libm::erfc
);

fn c<R: Real>(v: f64) -> R {
    R::from_f64(v)
}

/// PyTorch's `calc_erfinv` (a translation of Pavlis's MATLAB `erfinv`): a rational
/// initial guess, then two Newton steps on `erf(x) - y`.
pub(crate) fn erfinv<R: Math>(y: R) -> R {
    let a = [0.886226899, -1.645349621, 0.914624893, -0.140543331].map(c::<R>);
    let b = [-2.118377725, 1.442710462, -0.329097515, 0.012229801].map(c::<R>);
    let cc = [-1.970840454, -1.624906493, 3.429567803, 1.641345311].map(c::<R>);
    let d = [3.543889200, 1.637067800].map(c::<R>);
    let one = R::ONE;
    let y_abs = y.abs();
    if y_abs > one {
        return R::NAN;
    }
    if y_abs == one {
        return R::INFINITY.copysign(y);
    }
    let mut x = if y_abs <= c(0.7) {
        let z = y * y;
        let num = ((a[3] * z + a[2]) * z + a[1]) * z + a[0];
        let dem = (((b[3] * z + b[2]) * z + b[1]) * z + b[0]) * z + one;
        y * num / dem
    } else {
        let z = (-((one - y_abs) / c(2.0)).ln()).sqrt();
        let num = ((cc[3] * z + cc[2]) * z + cc[1]) * z + cc[0];
        let dem = (d[1] * z + d[0]) * z + one;
        num.copysign(y) / dem
    };
    let two_over_sqrt_pi: R = c(2.0 / std::f64::consts::PI.sqrt());
    for _ in 0..2 {
        x = x - (x.erf() - y) / (two_over_sqrt_pi * (-x * x).exp());
    }
    x
}

/// PyTorch's `1 / (1 + exp(-x))`: exp overflowing to inf gives exactly 0, so no
/// NaN can appear for finite inputs.
pub(crate) fn sigmoid<R: Real>(a: R) -> R {
    R::ONE / (R::ONE + (-a).exp())
}

/// SiLU: `x / (1 + e^-x)`.
pub(crate) fn silu<R: Real>(a: R) -> R {
    a / (R::ONE + (-a).exp())
}

/// Mish: `x * tanh(ln(1 + e^x))`.
pub(crate) fn mish<R: Math>(a: R) -> R {
    a * a.exp().ln_1p().tanh()
}

/// Hardswish: `x * hardsigmoid(x)`.
pub(crate) fn hardswish<R: Real>(a: R) -> R {
    a * hardsigmoid(a)
}

/// `min(max(a + 3, 0), 6) / 6`, NaN propagating (PyTorch's vectorized kernel).
pub(crate) fn hardsigmoid<R: Real>(a: R) -> R {
    let t = a + c(3.0);
    if t.is_nan() {
        return t;
    }
    let t = if t < R::ZERO { R::ZERO } else { t };
    let six = c(6.0);
    (if t > six { six } else { t }) / six
}

pub(crate) fn float_unary<S: FloatStore>(op: UnaryOp, x: &[S]) -> Result<Buffer>
where
    S::C: Math,
{
    use UnaryOp::*;
    let f = |g: fn(S::C) -> S::C| map(x, move |a: S| S::narrow(g(a.widen())));
    let p = |g: fn(S::C) -> bool| map(x, move |a: S| g(a.widen()));
    Ok(match op {
        Square => f(|a| a * a),
        Exp2 => f(Math::exp2),
        Expm1 => f(Math::exp_m1),
        Log2 => f(Math::log2),
        Log10 => f(Math::log10),
        Log1p => f(Math::ln_1p),
        Tan => f(Math::tan),
        Asin => f(Math::asin),
        Acos => f(Math::acos),
        Atan => f(Math::atan),
        Sinh => f(Math::sinh),
        Cosh => f(Math::cosh),
        Asinh => f(Math::asinh),
        Acosh => f(Math::acosh),
        Atanh => f(Math::atanh),
        Erf => f(Math::erf),
        Erfc => f(Math::erfc),
        Erfinv => f(erfinv),
        Frac => f(|a| a - a.trunc()),
        Silu => f(silu),
        Mish => f(mish),
        Hardsigmoid => f(hardsigmoid),
        Hardswish => f(hardswish),
        IsInf => p(Math::is_infinite),
        IsPosInf => p(|a| a == <S::C as Math>::INFINITY),
        IsNegInf => p(|a| a == -<S::C as Math>::INFINITY),
        IsFinite => p(Math::is_finite),
        IsReal => p(|_| true),
        Signbit => p(Math::is_sign_negative),
        _ => return Err(not_for(op, S::DTYPE)),
    })
}

/// The complex functions of these ops that lazyfuse takes from `num_complex`,
/// per part type. complex64 computes them in complex128 and rounds once: their
/// formulas cancel badly in single precision (`acos` near the real axis).
pub(crate) trait CMath: CReal + Math
where
    Complex<Self>: Element,
{
    fn c_tan(z: Complex<Self>) -> Complex<Self>;
    fn c_asin(z: Complex<Self>) -> Complex<Self>;
    fn c_acos(z: Complex<Self>) -> Complex<Self>;
    fn c_atanh(z: Complex<Self>) -> Complex<Self>;
}

impl CMath for f64 {
    fn c_tan(z: Complex<Self>) -> Complex<Self> {
        z.tan()
    }
    fn c_asin(z: Complex<Self>) -> Complex<Self> {
        z.asin()
    }
    fn c_acos(z: Complex<Self>) -> Complex<Self> {
        z.acos()
    }
    fn c_atanh(z: Complex<Self>) -> Complex<Self> {
        z.atanh()
    }
}

/// `f` of a complex64 value, computed in complex128.
fn wide(z: Complex<f32>, f: fn(Complex<f64>) -> Complex<f64>) -> Complex<f32> {
    let w = f(Complex::new(f64::from(z.re), f64::from(z.im)));
    Complex::new(w.re as f32, w.im as f32)
}

impl CMath for f32 {
    fn c_tan(z: Complex<Self>) -> Complex<Self> {
        wide(z, f64::c_tan)
    }
    fn c_asin(z: Complex<Self>) -> Complex<Self> {
        wide(z, f64::c_asin)
    }
    fn c_acos(z: Complex<Self>) -> Complex<Self> {
        wide(z, f64::c_acos)
    }
    fn c_atanh(z: Complex<Self>) -> Complex<Self> {
        wide(z, f64::c_atanh)
    }
}

/// `log(z) / ln(base)`, dividing each part by the real constant as c10 does.
fn c_log_base<P: CMath>(z: Complex<P>, ln_base: f64) -> Complex<P>
where
    Complex<P>: Element,
{
    let l = P::c_ln(z);
    let k: P = c(ln_base);
    Complex::new(l.re / k, l.im / k)
}

/// c10's `log1p(z)`: `0.5 log1p(x (x + 2) + y^2) + i atan2(y, x + 1)` near 0 (which
/// keeps tiny arguments exact), `log(|1 + z|)` otherwise.
fn c_log1p<P: CMath>(z: Complex<P>) -> Complex<P>
where
    Complex<P>: Element,
{
    let (x, y) = (z.re, z.im);
    // PyTorch's kernel gives NaN in both parts when either is NaN (hypot would turn
    // (NaN, inf) into an infinite modulus).
    if x.is_nan() || y.is_nan() {
        return Complex::new(P::NAN, P::NAN);
    }
    let zabs = x.hypot(y);
    let theta = y.atan2(x + P::ONE);
    if zabs < P::HALF {
        let r = x * (c::<P>(2.0) + x) + y * y;
        if r == P::ZERO {
            return Complex::new(x, theta);
        }
        Complex::new(P::HALF * r.ln_1p(), theta)
    } else {
        Complex::new((x + P::ONE).hypot(y).ln(), theta)
    }
}

/// c10's `expm1(z)`: `expm1(x) cos(y) - 2 sin(y/2)^2 + i e^x sin(y)`.
fn c_expm1<P: CMath>(z: Complex<P>) -> Complex<P>
where
    Complex<P>: Element,
{
    let (x, y) = (z.re, z.im);
    let a = (y / c(2.0)).sin();
    Complex::new(
        x.exp_m1() * y.cos() - c::<P>(2.0) * a * a,
        x.exp() * y.sin(),
    )
}

/// PyTorch's `sgn`: `z / |z|` by complex division (so `inf + 1j` gives NaN parts as
/// PyTorch's do), `0` for `0`.
fn c_sgn<P: CMath>(z: Complex<P>) -> Complex<P>
where
    Complex<P>: Element,
{
    if z.re == P::ZERO && z.im == P::ZERO {
        return Complex::new(P::ZERO, P::ZERO);
    }
    complex_div(z, Complex::new(z.re.hypot(z.im), P::ZERO))
}

/// glibc's `csinh` (which PyTorch's `std::sinh` reaches): C99 Annex G's special
/// values where a part is infinite, NaN or zero.
fn c_sinh<P: CMath>(z: Complex<P>) -> Complex<P>
where
    Complex<P>: Element,
{
    let (x, y) = (z.re, z.im);
    let negate = x.is_sign_negative();
    let rx = x.abs();
    let huge = P::INFINITY;
    let neg = |v: P| if negate { -v } else { v };
    if x.is_finite() {
        if y.is_finite() {
            if y == P::ZERO {
                return Complex::new(x.sinh(), y);
            }
            return Complex::new(neg(rx.sinh() * y.cos()), rx.cosh() * y.sin());
        }
        if x == P::ZERO {
            return Complex::new(neg(P::ZERO), P::NAN);
        }
        return Complex::new(P::NAN, P::NAN);
    }
    if x.is_infinite() {
        if y.is_finite() && y != P::ZERO {
            return Complex::new(neg(huge.copysign(y.cos())), huge.copysign(y.sin()));
        }
        if y == P::ZERO {
            return Complex::new(neg(huge), y);
        }
        return Complex::new(huge, P::NAN);
    }
    Complex::new(P::NAN, if y == P::ZERO { y } else { P::NAN })
}

/// glibc's `ccosh`, with C99's special values.
fn c_cosh<P: CMath>(z: Complex<P>) -> Complex<P>
where
    Complex<P>: Element,
{
    let (x, y) = (z.re, z.im);
    let huge = P::INFINITY;
    if x.is_finite() {
        if y.is_finite() {
            if y == P::ZERO {
                return Complex::new(x.cosh(), x.sinh() * y);
            }
            return Complex::new(x.cosh() * y.cos(), x.sinh() * y.sin());
        }
        let im = if x == P::ZERO { P::ZERO } else { P::NAN };
        return Complex::new(P::NAN, im);
    }
    if x.is_infinite() {
        let sx = P::ONE.copysign(x);
        if y.is_finite() && y != P::ZERO {
            return Complex::new(huge.copysign(y.cos()), huge.copysign(y.sin()) * sx);
        }
        if y == P::ZERO {
            return Complex::new(huge, y * sx);
        }
        return Complex::new(huge, P::NAN);
    }
    Complex::new(P::NAN, if y == P::ZERO { y } else { P::NAN })
}

/// `asin`, with C99's values on the real axis (the branch cuts `|x| > 1` take the
/// side given by the sign of the zero imaginary part, as glibc's `casin`).
fn c_asin<P: CMath>(z: Complex<P>) -> Complex<P>
where
    Complex<P>: Element,
{
    if z.im == P::ZERO && z.re.is_finite() {
        if z.re.abs() <= P::ONE {
            return Complex::new(z.re.asin(), z.im);
        }
        let half_pi: P = c(std::f64::consts::FRAC_PI_2);
        return Complex::new(half_pi.copysign(z.re), z.re.abs().acosh().copysign(z.im));
    }
    P::c_asin(z)
}

/// `acos`, with C99's values on the real axis (as glibc's `cacos`).
fn c_acos<P: CMath>(z: Complex<P>) -> Complex<P>
where
    Complex<P>: Element,
{
    if z.im == P::ZERO && z.re.is_finite() {
        if z.re.abs() <= P::ONE {
            return Complex::new(z.re.acos(), -z.im);
        }
        let re = if z.re > P::ZERO {
            P::ZERO
        } else {
            c(std::f64::consts::PI)
        };
        return Complex::new(re, -z.re.abs().acosh().copysign(z.im));
    }
    P::c_acos(z)
}

/// `atanh`, with C99's values on the real axis (as glibc's `catanh`).
fn c_atanh<P: CMath>(z: Complex<P>) -> Complex<P>
where
    Complex<P>: Element,
{
    if z.im == P::ZERO && z.re.is_finite() {
        let half_pi: P = c(std::f64::consts::FRAC_PI_2);
        if z.re.abs() <= P::ONE {
            return Complex::new(z.re.atanh(), z.im);
        }
        return Complex::new((P::ONE / z.re).atanh(), half_pi.copysign(z.im));
    }
    P::c_atanh(z)
}

/// `atan(z) = -i atanh(iz)`, which puts the branch cuts' signed zeros where
/// glibc's `catan` has them.
fn c_atan<P: CMath>(z: Complex<P>) -> Complex<P>
where
    Complex<P>: Element,
{
    let w = c_atanh(Complex::new(-z.im, z.re));
    Complex::new(w.im, -w.re)
}

/// `asinh(z) = -i asin(iz)` (signed zeros on the cuts as glibc's `casinh`).
fn c_asinh<P: CMath>(z: Complex<P>) -> Complex<P>
where
    Complex<P>: Element,
{
    let w = c_asin(Complex::new(-z.im, z.re));
    Complex::new(w.im, -w.re)
}

/// musl's `cacosh`: `±i acos(z)`, the sign chosen by the sign of `Im z`.
fn c_acosh<P: CMath>(z: Complex<P>) -> Complex<P>
where
    Complex<P>: Element,
{
    let negative = z.im.is_sign_negative();
    let w = c_acos(z);
    if negative {
        Complex::new(w.im, -w.re)
    } else {
        Complex::new(-w.im, w.re)
    }
}

pub(crate) fn complex_unary<P: CMath>(op: UnaryOp, x: &[Complex<P>]) -> Result<Buffer>
where
    Complex<P>: Element,
{
    use UnaryOp::*;
    let one = Complex::new(P::ONE, P::ZERO);
    let f = |g: &dyn Fn(Complex<P>) -> Complex<P>| map(x, g);
    let p = |g: &dyn Fn(Complex<P>) -> bool| map(x, g);
    let ln2 = std::f64::consts::LN_2;
    Ok(match op {
        Sgn => f(&c_sgn),
        Square => f(&|a| cmul(a, a)),
        // 2^z = e^(ln2 z), as c10 (there is no complex exp2).
        Exp2 => f(&|a| {
            let k: P = c(ln2);
            P::c_exp(Complex::new(a.re * k, a.im * k))
        }),
        Expm1 => f(&c_expm1),
        Log2 => f(&|a| c_log_base(a, ln2)),
        Log10 => f(&|a| c_log_base(a, std::f64::consts::LN_10)),
        Log1p => f(&c_log1p),
        Tan => f(&P::c_tan),
        Asin => f(&c_asin),
        Acos => f(&c_acos),
        Atan => f(&c_atan),
        Sinh => f(&c_sinh),
        Cosh => f(&c_cosh),
        Asinh => f(&c_asinh),
        Acosh => f(&c_acosh),
        Atanh => f(&c_atanh),
        Silu => f(&|a| {
            let e = P::c_exp(Complex::new(-a.re, -a.im));
            complex_div(a, Complex::new(one.re + e.re, e.im))
        }),
        IsInf => p(&|a| a.re.is_infinite() || a.im.is_infinite()),
        IsFinite => p(&|a| a.re.is_finite() && a.im.is_finite()),
        IsReal => p(&|a| a.im == P::ZERO),
        _ => return Err(not_for(op, <Complex<P> as Element>::DTYPE)),
    })
}

// ---------------------------------------------------------------------------
// Ops with parameters

/// Applies a [`UnaryParamOp`] (output dtype = input dtype).
pub(crate) fn unary_param(op: UnaryParamOp, x: &Buffer) -> Result<Buffer> {
    match x {
        Buffer::Bool(v) => int_param(op, v),
        Buffer::U8(v) => int_param(op, v),
        Buffer::I8(v) => int_param(op, v),
        Buffer::I16(v) => int_param(op, v),
        Buffer::I32(v) => int_param(op, v),
        Buffer::I64(v) => int_param(op, v),
        Buffer::U16(v) => int_param(op, v),
        Buffer::U32(v) => int_param(op, v),
        Buffer::U64(v) => int_param(op, v),
        Buffer::F16(v) => float_param(op, v),
        Buffer::BF16(v) => float_param(op, v),
        Buffer::F32(v) => float_param(op, v),
        Buffer::F64(v) => float_param(op, v),
        Buffer::C64(v) => complex_param(op, v),
        Buffer::C128(v) => complex_param(op, v),
        Buffer::Raw { dtype, .. } => Err(Error::Unsupported(format!("{} on {dtype}", op.name()))),
    }
}

fn int_param<T: Element + IntLike>(op: UnaryParamOp, x: &[T]) -> Result<Buffer> {
    match op {
        // Integers have no NaN or infinity: a copy, as PyTorch's.
        UnaryParamOp::NanToNum { .. } => Ok(Buffer::from_vec(x.to_vec())),
        UnaryParamOp::Hardtanh { min_val, max_val } => {
            // The builder truncated the bounds and checked that a result outside the
            // dtype's range cannot arise; `as` saturates the (integral) f64 values.
            let (lo, hi) = (min_val as i128, max_val as i128);
            Ok(map(x, |a: T| {
                let v = a.wide().max(lo).min(hi);
                T::narrow_from(v).unwrap_or(a)
            }))
        }
        _ => Err(not_for(op.name(), T::DTYPE)),
    }
}

/// Integer-like element types: an exact `i128` view and a checked way back.
pub(crate) trait IntLike: Copy {
    fn wide(self) -> i128;
    fn narrow_from(v: i128) -> Option<Self>;
}

impl IntLike for bool {
    fn wide(self) -> i128 {
        i128::from(self)
    }
    fn narrow_from(v: i128) -> Option<Self> {
        match v {
            0 => Some(false),
            1 => Some(true),
            _ => None,
        }
    }
}

macro_rules! intlike_impl {
    ($($t:ty),*) => {$(
        impl IntLike for $t {
            fn wide(self) -> i128 {
                self as i128
            }
            fn narrow_from(v: i128) -> Option<Self> {
                <$t>::try_from(v).ok()
            }
        }
    )*};
}
intlike_impl!(u8, i8, i16, i32, i64, u16, u32, u64);

/// A stored float type converted from `f64` in one rounding (PyTorch converts the
/// `nan_to_num` replacements straight to the tensor's type).
pub(crate) trait FromF64: FloatStore {
    fn from_f64(v: f64) -> Self;
    /// The largest finite value.
    const MAX: f64;
}

impl FromF64 for f16 {
    fn from_f64(v: f64) -> Self {
        f16::from_f64(v)
    }
    const MAX: f64 = 65504.0;
}

impl FromF64 for bf16 {
    fn from_f64(v: f64) -> Self {
        bf16::from_f64(v)
    }
    const MAX: f64 = 3.3895313892515355e38;
}

impl FromF64 for f32 {
    fn from_f64(v: f64) -> Self {
        v as f32
    }
    const MAX: f64 = f32::MAX as f64;
}

impl FromF64 for f64 {
    fn from_f64(v: f64) -> Self {
        v
    }
    const MAX: f64 = f64::MAX;
}

/// `max(a, b)` and `min(a, b)` with NaN propagating from either side (PyTorch's
/// vectorized `clamp`).
fn nan_max<R: Real>(a: R, b: R) -> R {
    if a.is_nan() || b.is_nan() {
        R::NAN
    } else if a < b {
        b
    } else {
        a
    }
}

fn nan_min<R: Real>(a: R, b: R) -> R {
    if a.is_nan() || b.is_nan() {
        R::NAN
    } else if b < a {
        b
    } else {
        a
    }
}

/// One element of a real [`UnaryParamOp`] in the compute type (not `NanToNum`,
/// which works on the stored type).
pub(crate) fn param_real<R: Math>(op: UnaryParamOp, a: R) -> R {
    match op {
        UnaryParamOp::NanToNum { .. } => a,
        UnaryParamOp::Logit { eps } => {
            // PyTorch: no clamping unless eps >= 0; x == 1 is +inf exactly.
            let x = match eps {
                Some(e) if e >= 0.0 => {
                    let (lo, hi) = (c::<R>(e), R::ONE - c::<R>(e));
                    if a < lo {
                        lo
                    } else if a > hi {
                        hi
                    } else {
                        a
                    }
                }
                _ => a,
            };
            if x == R::ONE {
                R::INFINITY
            } else {
                (x / (R::ONE - x)).ln()
            }
        }
        UnaryParamOp::RoundDecimals { decimals } => {
            let ten: R = c(10f64.powf(decimals.unsigned_abs() as f64));
            if decimals < 0 {
                (a / ten).round_ties_even() * ten
            } else {
                (a * ten).round_ties_even() / ten
            }
        }
        UnaryParamOp::Gelu { tanh: false } => {
            a * R::HALF * (R::ONE + (a * c(std::f64::consts::FRAC_1_SQRT_2)).erf())
        }
        UnaryParamOp::Gelu { tanh: true } => {
            let beta: R = c(std::f64::consts::SQRT_2 * std::f64::consts::FRAC_2_SQRT_PI * 0.5);
            let inner = beta * (a + c::<R>(0.044715) * (a * a * a));
            R::HALF * a * (R::ONE + inner.tanh())
        }
        UnaryParamOp::Softplus { beta, threshold } => {
            let z = a * c(beta);
            if z > c(threshold) {
                a
            } else {
                z.exp().ln_1p() / c(beta)
            }
        }
        UnaryParamOp::Elu {
            alpha,
            scale,
            input_scale,
        } => {
            if a <= R::ZERO {
                (a * c(input_scale)).exp_m1() * c(alpha * scale)
            } else {
                a * c(scale)
            }
        }
        UnaryParamOp::LeakyRelu { negative_slope } => {
            if a > R::ZERO {
                a
            } else {
                a * c(negative_slope)
            }
        }
        UnaryParamOp::Hardtanh { min_val, max_val } => nan_min(nan_max(a, c(min_val)), c(max_val)),
    }
}

fn float_param<S: FromF64>(op: UnaryParamOp, x: &[S]) -> Result<Buffer>
where
    S::C: Math,
{
    if let UnaryParamOp::NanToNum {
        nan,
        posinf,
        neginf,
    } = op
    {
        return Ok(map(x, move |a: S| nan_to_num(a, nan, posinf, neginf)));
    }
    Ok(map(x, move |a: S| S::narrow(param_real(op, a.widen()))))
}

/// One element of `nan_to_num` on the stored type (the replacements convert from
/// `f64` in one rounding, as PyTorch's do).
pub(crate) fn nan_to_num<S: FromF64>(a: S, nan: f64, posinf: f64, neginf: f64) -> S
where
    S::C: Math,
{
    let inf = <S::C as Math>::INFINITY;
    let w = a.widen();
    if w.is_nan() {
        S::from_f64(nan)
    } else if w == inf {
        S::from_f64(posinf)
    } else if w == -inf {
        S::from_f64(neginf)
    } else {
        a
    }
}

fn complex_param<P: CMath>(op: UnaryParamOp, x: &[Complex<P>]) -> Result<Buffer>
where
    Complex<P>: Element,
{
    match op {
        // Each part on its own, as PyTorch's complex nan_to_num.
        UnaryParamOp::NanToNum {
            nan,
            posinf,
            neginf,
        } => {
            let (n, p, m): (P, P, P) = (c(nan), c(posinf), c(neginf));
            let part = move |v: P| {
                if v.is_nan() {
                    n
                } else if v == P::INFINITY {
                    p
                } else if v == -P::INFINITY {
                    m
                } else {
                    v
                }
            };
            Ok(map(x, move |a: Complex<P>| {
                Complex::new(part(a.re), part(a.im))
            }))
        }
        _ => Err(not_for(op.name(), <Complex<P> as Element>::DTYPE)),
    }
}

/// The default `nan_to_num` replacements of `dtype` (PyTorch: 0, and the largest and
/// lowest finite values of the dtype, or of its part type for complex).
///
/// ```
/// use lazyfuse_ir::DType;
/// use lazyfuse_runtime::interp::nan_to_num_defaults;
/// assert_eq!(nan_to_num_defaults(DType::F16), (0.0, 65504.0, -65504.0));
/// ```
pub fn nan_to_num_defaults(dtype: DType) -> (f64, f64, f64) {
    let max = match dtype.to_real() {
        DType::F16 => <f16 as FromF64>::MAX,
        DType::BF16 => <bf16 as FromF64>::MAX,
        DType::F32 => <f32 as FromF64>::MAX,
        _ => f64::MAX,
    };
    (0.0, max, -max)
}
