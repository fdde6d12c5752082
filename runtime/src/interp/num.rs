//! Numeric traits the kernels are generic over: [`Int`] (wrapping integer arithmetic
//! for every integer dtype), [`Real`] (the float math the kernels need, for `f32` and
//! `f64`), [`FloatStore`] (a stored float type with the types it computes and
//! accumulates in) and [`CReal`] (the complex functions of `num_complex` for the two
//! complex dtypes).
//!
//! The traits exist so that each op is written once per dtype *category* instead of
//! once per dtype; the storage-to-compute mapping (`f16` → `f32`, …) is where PyTorch's
//! "compute in float32, round once" rule for reduced-precision floats lives.

use crate::buffer::Element;
use half::{bf16, f16};
use num_complex::Complex;
use std::fmt::Debug;
use std::ops::{Add, Div, Mul, Neg, Rem, Sub};

/// An integer element type with two's-complement (wrapping) arithmetic.
pub(crate) trait Int: Element + Ord + Eq + Default {
    /// zero
    const ZERO: Self;
    /// one
    const ONE: Self;
    fn wrapping_add(self, o: Self) -> Self;
    fn wrapping_sub(self, o: Self) -> Self;
    fn wrapping_mul(self, o: Self) -> Self;
    /// Caller guarantees `o != 0`; `MIN / -1` wraps to `MIN`.
    fn wrapping_div(self, o: Self) -> Self;
    /// Caller guarantees `o != 0`; `MIN % -1` is 0.
    fn wrapping_rem(self, o: Self) -> Self;
    fn wrapping_neg(self) -> Self;
    /// `|x|`, wrapping at the minimum (identity for unsigned types).
    fn wrapping_abs(self) -> Self;
    fn is_negative(self) -> bool;
    fn bit_and(self, o: Self) -> Self;
    fn bit_or(self, o: Self) -> Self;
    fn bit_xor(self, o: Self) -> Self;
    fn bit_not(self) -> Self;
    /// Exact widening.
    fn to_i128(self) -> i128;
}

macro_rules! int_impl {
    ($t:ty, $abs:expr) => {
        impl Int for $t {
            const ZERO: Self = 0;
            const ONE: Self = 1;
            fn wrapping_add(self, o: Self) -> Self {
                <$t>::wrapping_add(self, o)
            }
            fn wrapping_sub(self, o: Self) -> Self {
                <$t>::wrapping_sub(self, o)
            }
            fn wrapping_mul(self, o: Self) -> Self {
                <$t>::wrapping_mul(self, o)
            }
            fn wrapping_div(self, o: Self) -> Self {
                <$t>::wrapping_div(self, o)
            }
            fn wrapping_rem(self, o: Self) -> Self {
                <$t>::wrapping_rem(self, o)
            }
            fn wrapping_neg(self) -> Self {
                <$t>::wrapping_neg(self)
            }
            fn wrapping_abs(self) -> Self {
                let f: fn($t) -> $t = $abs;
                f(self)
            }
            #[allow(unused_comparisons)]
            fn is_negative(self) -> bool {
                self < 0
            }
            fn bit_and(self, o: Self) -> Self {
                self & o
            }
            fn bit_or(self, o: Self) -> Self {
                self | o
            }
            fn bit_xor(self, o: Self) -> Self {
                self ^ o
            }
            fn bit_not(self) -> Self {
                !self
            }
            fn to_i128(self) -> i128 {
                self as i128
            }
        }
    };
}

int_impl!(u8, |x| x);
int_impl!(u16, |x| x);
int_impl!(u32, |x| x);
int_impl!(u64, |x| x);
int_impl!(i8, |x| x.wrapping_abs());
int_impl!(i16, |x| x.wrapping_abs());
int_impl!(i32, |x| x.wrapping_abs());
int_impl!(i64, |x| x.wrapping_abs());

/// A native float type the kernels compute in (`f32` or `f64`).
pub(crate) trait Real:
    Copy
    + Debug
    + PartialOrd
    + Add<Output = Self>
    + Sub<Output = Self>
    + Mul<Output = Self>
    + Div<Output = Self>
    + Rem<Output = Self>
    + Neg<Output = Self>
{
    const ZERO: Self;
    const ONE: Self;
    const HALF: Self;
    const NAN: Self;
    fn from_f64(v: f64) -> Self;
    fn to_f64(self) -> f64;
    fn is_nan(self) -> bool;
    fn floor(self) -> Self;
    fn ceil(self) -> Self;
    fn trunc(self) -> Self;
    fn round_ties_even(self) -> Self;
    fn abs(self) -> Self;
    fn sqrt(self) -> Self;
    fn exp(self) -> Self;
    fn ln(self) -> Self;
    fn sin(self) -> Self;
    fn cos(self) -> Self;
    fn tanh(self) -> Self;
    fn powf(self, e: Self) -> Self;
    fn atan2(self, o: Self) -> Self;
    fn copysign(self, sign: Self) -> Self;
    fn hypot(self, o: Self) -> Self;
}

macro_rules! real_impl {
    ($t:ty) => {
        impl Real for $t {
            const ZERO: Self = 0.0;
            const ONE: Self = 1.0;
            const HALF: Self = 0.5;
            const NAN: Self = <$t>::NAN;
            fn from_f64(v: f64) -> Self {
                v as $t
            }
            fn to_f64(self) -> f64 {
                self as f64
            }
            fn is_nan(self) -> bool {
                <$t>::is_nan(self)
            }
            fn floor(self) -> Self {
                <$t>::floor(self)
            }
            fn ceil(self) -> Self {
                <$t>::ceil(self)
            }
            fn trunc(self) -> Self {
                <$t>::trunc(self)
            }
            fn round_ties_even(self) -> Self {
                <$t>::round_ties_even(self)
            }
            fn abs(self) -> Self {
                <$t>::abs(self)
            }
            fn sqrt(self) -> Self {
                <$t>::sqrt(self)
            }
            fn exp(self) -> Self {
                <$t>::exp(self)
            }
            fn ln(self) -> Self {
                <$t>::ln(self)
            }
            fn sin(self) -> Self {
                <$t>::sin(self)
            }
            fn cos(self) -> Self {
                <$t>::cos(self)
            }
            fn tanh(self) -> Self {
                <$t>::tanh(self)
            }
            fn powf(self, e: Self) -> Self {
                <$t>::powf(self, e)
            }
            fn atan2(self, o: Self) -> Self {
                <$t>::atan2(self, o)
            }
            fn copysign(self, sign: Self) -> Self {
                <$t>::copysign(self, sign)
            }
            fn hypot(self, o: Self) -> Self {
                <$t>::hypot(self, o)
            }
        }
    };
}

real_impl!(f32);
real_impl!(f64);

/// A stored real float type: `C` is the type elementwise ops compute in (PyTorch
/// computes `float16`/`bfloat16` in `float32` and rounds once), `A` the type
/// accumulating ops (reductions, cumsum, softmax, matmul) use.
pub(crate) trait FloatStore: Element {
    type C: Real;
    type A: Real;
    fn widen(self) -> Self::C;
    fn narrow(c: Self::C) -> Self;
    fn to_acc(self) -> Self::A;
    fn from_acc(a: Self::A) -> Self;
}

impl FloatStore for f16 {
    type C = f32;
    type A = f32;
    fn widen(self) -> f32 {
        self.to_f32()
    }
    fn narrow(c: f32) -> Self {
        f16::from_f32(c)
    }
    fn to_acc(self) -> f32 {
        self.to_f32()
    }
    fn from_acc(a: f32) -> Self {
        f16::from_f32(a)
    }
}

impl FloatStore for bf16 {
    type C = f32;
    type A = f32;
    fn widen(self) -> f32 {
        self.to_f32()
    }
    fn narrow(c: f32) -> Self {
        bf16::from_f32(c)
    }
    fn to_acc(self) -> f32 {
        self.to_f32()
    }
    fn from_acc(a: f32) -> Self {
        bf16::from_f32(a)
    }
}

impl FloatStore for f32 {
    type C = f32;
    // Accumulating float32 in double (as PyTorch's CPU cumsum does) keeps the
    // oracle at least as accurate as the reference.
    type A = f64;
    fn widen(self) -> f32 {
        self
    }
    fn narrow(c: f32) -> Self {
        c
    }
    fn to_acc(self) -> f64 {
        self as f64
    }
    fn from_acc(a: f64) -> Self {
        a as f32
    }
}

impl FloatStore for f64 {
    type C = f64;
    type A = f64;
    fn widen(self) -> f64 {
        self
    }
    fn narrow(c: f64) -> Self {
        c
    }
    fn to_acc(self) -> f64 {
        self
    }
    fn from_acc(a: f64) -> Self {
        a
    }
}

/// The part type of a computable complex dtype, with `num_complex`'s functions.
pub(crate) trait CReal: Real
where
    Complex<Self>: Element,
{
    fn c_exp(z: Complex<Self>) -> Complex<Self>;
    fn c_ln(z: Complex<Self>) -> Complex<Self>;
    fn c_sqrt(z: Complex<Self>) -> Complex<Self>;
    fn c_sin(z: Complex<Self>) -> Complex<Self>;
    fn c_cos(z: Complex<Self>) -> Complex<Self>;
    fn c_tanh(z: Complex<Self>) -> Complex<Self>;
    fn c_powc(z: Complex<Self>, e: Complex<Self>) -> Complex<Self>;
}

macro_rules! creal_impl {
    ($t:ty) => {
        impl CReal for $t {
            fn c_exp(z: Complex<Self>) -> Complex<Self> {
                z.exp()
            }
            fn c_ln(z: Complex<Self>) -> Complex<Self> {
                z.ln()
            }
            fn c_sqrt(z: Complex<Self>) -> Complex<Self> {
                z.sqrt()
            }
            fn c_sin(z: Complex<Self>) -> Complex<Self> {
                z.sin()
            }
            fn c_cos(z: Complex<Self>) -> Complex<Self> {
                z.cos()
            }
            fn c_tanh(z: Complex<Self>) -> Complex<Self> {
                z.tanh()
            }
            fn c_powc(z: Complex<Self>, e: Complex<Self>) -> Complex<Self> {
                z.powc(e)
            }
        }
    };
}

creal_impl!(f32);
creal_impl!(f64);

/// PyTorch's (NumPy's) complex division `a / b`: Smith's scaling, and a zero divisor
/// gives `(a.re / 0, a.im / 0)` (so `1 / 0` is `(inf, nan)`).
pub(crate) fn complex_div<T: Real>(a: Complex<T>, b: Complex<T>) -> Complex<T> {
    let (c, d) = (b.re, b.im);
    let (abs_c, abs_d) = (c.abs(), d.abs());
    if abs_c >= abs_d {
        if abs_c == T::ZERO && abs_d == T::ZERO {
            return Complex::new(a.re / abs_c, a.im / abs_d);
        }
        let rat = d / c;
        let scl = T::ONE / (c + d * rat);
        Complex::new((a.re + a.im * rat) * scl, (a.im - a.re * rat) * scl)
    } else {
        let rat = c / d;
        let scl = T::ONE / (d + c * rat);
        Complex::new((a.re * rat + a.im) * scl, (a.im * rat - a.re) * scl)
    }
}

/// `a + b` (num_complex's operators need `num_traits`, which [`Real`] does not name).
pub(crate) fn cadd<T: Real>(a: Complex<T>, b: Complex<T>) -> Complex<T> {
    Complex::new(a.re + b.re, a.im + b.im)
}

/// `a - b`
pub(crate) fn csub<T: Real>(a: Complex<T>, b: Complex<T>) -> Complex<T> {
    Complex::new(a.re - b.re, a.im - b.im)
}

/// `a * b`, the textbook formula (as c10::complex).
pub(crate) fn cmul<T: Real>(a: Complex<T>, b: Complex<T>) -> Complex<T> {
    Complex::new(a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re)
}

/// `-a`
pub(crate) fn cneg<T: Real>(a: Complex<T>) -> Complex<T> {
    Complex::new(-a.re, -a.im)
}
