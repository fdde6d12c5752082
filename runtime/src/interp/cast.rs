//! Dtype conversion with PyTorch's `.to(dtype)` rules, shared by `Cast`, `Full` and
//! `Arange`.
//!
//! Every source element is first lifted, exactly, into a [`Value`] (bool, `i128`,
//! `f64` or complex `f64`), then converted into the target type:
//! - to bool: `!= 0` (NaN is true; a complex number is true if either part is);
//! - to an integer: integers wrap modulo 2^bits; floats truncate toward zero through
//!   `int64` and then wrap (PyTorch's uint8 rule; out-of-range values are
//!   platform-defined in the reference, here they saturate at the `int64` step);
//!   complex drops the imaginary part;
//! - to a float: integers round once to the target (`int64 → float16` goes through
//!   `float32`, as c10's `Half(float)` constructor does); `float64 → float16/bfloat16`
//!   also goes through `float32`, because c10's `Half`/`BFloat16` only have `float`
//!   constructors and `static_cast<Half>(double)` rounds twice;
//! - to complex: real values get a zero imaginary part.

use crate::buffer::Buffer;
use crate::error::{Error, Result};
use half::{bf16, f16};
use lazyfuse_ir::{DType, Scalar};
use num_complex::Complex;

/// One element, lifted exactly out of its storage type.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Value {
    /// a bool
    Bool(bool),
    /// any integer (every integer dtype fits in `i128`)
    Int(i128),
    /// any real float (every float dtype widens exactly to `f64`)
    Float(f64),
    /// any complex number
    Complex(f64, f64),
}

impl Value {
    /// The value of a scalar fill.
    pub(crate) fn from_scalar(s: Scalar) -> Value {
        match s {
            Scalar::Bool(b) => Value::Bool(b),
            Scalar::Int(i) => Value::Int(i as i128),
            Scalar::Float(f) => Value::Float(f),
            Scalar::Complex(re, im) => Value::Complex(re, im),
        }
    }

    fn truthy(self) -> bool {
        match self {
            Value::Bool(b) => b,
            Value::Int(i) => i != 0,
            Value::Float(f) => f != 0.0,
            Value::Complex(re, im) => re != 0.0 || im != 0.0,
        }
    }

    /// The value modulo 2^bits of the target, as `i128`.
    fn int_bits(self, unsigned64: bool) -> i128 {
        match self {
            Value::Bool(b) => b as i128,
            Value::Int(i) => i,
            Value::Float(f) | Value::Complex(f, _) => {
                // uint64 values at or above 2^63 do not fit the int64 step.
                if unsigned64 && f >= 9_223_372_036_854_775_808.0 {
                    f as u64 as i128
                } else {
                    f as i64 as i128
                }
            }
        }
    }

    fn to_f32(self) -> f32 {
        match self {
            Value::Bool(b) => b as u8 as f32,
            Value::Int(i) => i as f32,
            Value::Float(f) | Value::Complex(f, _) => f as f32,
        }
    }

    fn to_f64(self) -> f64 {
        match self {
            Value::Bool(b) => b as u8 as f64,
            Value::Int(i) => i as f64,
            Value::Float(f) | Value::Complex(f, _) => f,
        }
    }

    fn imag(self) -> f64 {
        match self {
            Value::Complex(_, im) => im,
            _ => 0.0,
        }
    }
}

/// An element type that lifts into a [`Value`].
pub(crate) trait ToValue: Copy {
    /// The exact value.
    fn value(self) -> Value;
}

impl ToValue for bool {
    fn value(self) -> Value {
        Value::Bool(self)
    }
}

macro_rules! to_value_int {
    ($($t:ty),*) => {$(
        impl ToValue for $t {
            fn value(self) -> Value {
                Value::Int(self as i128)
            }
        }
    )*};
}
to_value_int!(u8, i8, i16, i32, i64, u16, u32, u64);

impl ToValue for f16 {
    fn value(self) -> Value {
        Value::Float(self.to_f64())
    }
}
impl ToValue for bf16 {
    fn value(self) -> Value {
        Value::Float(self.to_f64())
    }
}
impl ToValue for f32 {
    fn value(self) -> Value {
        Value::Float(self as f64)
    }
}
impl ToValue for f64 {
    fn value(self) -> Value {
        Value::Float(self)
    }
}
impl ToValue for Complex<f32> {
    fn value(self) -> Value {
        Value::Complex(self.re as f64, self.im as f64)
    }
}
impl ToValue for Complex<f64> {
    fn value(self) -> Value {
        Value::Complex(self.re, self.im)
    }
}

/// Builds a buffer of `n` elements of `to`, element `i` being `get(i)` converted.
pub(crate) fn build(to: DType, n: usize, get: impl Fn(usize) -> Value) -> Result<Buffer> {
    macro_rules! ints {
        ($t:ty, $u64:expr) => {
            Buffer::from_vec::<$t>((0..n).map(|i| get(i).int_bits($u64) as $t).collect())
        };
    }
    Ok(match to {
        DType::Bool => Buffer::Bool((0..n).map(|i| get(i).truthy()).collect()),
        DType::U8 => ints!(u8, false),
        DType::I8 => ints!(i8, false),
        DType::I16 => ints!(i16, false),
        DType::I32 => ints!(i32, false),
        DType::I64 => ints!(i64, false),
        DType::U16 => ints!(u16, false),
        DType::U32 => ints!(u32, false),
        DType::U64 => ints!(u64, true),
        DType::F16 => Buffer::F16((0..n).map(|i| f16::from_f32(get(i).to_f32())).collect()),
        DType::BF16 => Buffer::BF16((0..n).map(|i| bf16::from_f32(get(i).to_f32())).collect()),
        DType::F32 => Buffer::F32((0..n).map(|i| get(i).to_f32()).collect()),
        DType::F64 => Buffer::F64((0..n).map(|i| get(i).to_f64()).collect()),
        DType::C64 => Buffer::C64(
            (0..n)
                .map(|i| {
                    let v = get(i);
                    Complex::new(v.to_f32(), v.imag() as f32)
                })
                .collect(),
        ),
        DType::C128 => Buffer::C128(
            (0..n)
                .map(|i| {
                    let v = get(i);
                    Complex::new(v.to_f64(), v.imag())
                })
                .collect(),
        ),
        other => {
            return Err(Error::Unsupported(format!(
                "conversion to {other} (a storage-only dtype)"
            )))
        }
    })
}

/// `x.to(to)`.
pub(crate) fn cast(x: &Buffer, to: DType) -> Result<Buffer> {
    if x.dtype() == to {
        return Ok(x.clone());
    }
    fn from<S: ToValue>(v: &[S], to: DType) -> Result<Buffer> {
        build(to, v.len(), |i| v[i].value())
    }
    match x {
        Buffer::Bool(v) => from(v, to),
        Buffer::U8(v) => from(v, to),
        Buffer::I8(v) => from(v, to),
        Buffer::I16(v) => from(v, to),
        Buffer::I32(v) => from(v, to),
        Buffer::I64(v) => from(v, to),
        Buffer::U16(v) => from(v, to),
        Buffer::U32(v) => from(v, to),
        Buffer::U64(v) => from(v, to),
        Buffer::F16(v) => from(v, to),
        Buffer::BF16(v) => from(v, to),
        Buffer::F32(v) => from(v, to),
        Buffer::F64(v) => from(v, to),
        Buffer::C64(v) => from(v, to),
        Buffer::C128(v) => from(v, to),
        Buffer::Raw { dtype, .. } => Err(Error::Unsupported(format!(
            "conversion from {dtype} (a storage-only dtype)"
        ))),
    }
}

/// `full(shape, value, dtype)`: the scalar converted to the dtype, `n` times.
pub(crate) fn full(value: Scalar, to: DType, n: usize) -> Result<Buffer> {
    let v = Value::from_scalar(value);
    build(to, n, |_| v)
}

/// `arange(start, start + n * step, step)`: integer dtypes are computed exactly in
/// `int64` (wrapping), the others in `f64` and then converted.
pub(crate) fn arange(start: f64, step: f64, to: DType, n: usize) -> Result<Buffer> {
    if to.is_integer() {
        let (s, st) = (start as i64, step as i64);
        build(to, n, |i| {
            Value::Int(s.wrapping_add((i as i64).wrapping_mul(st)) as i128)
        })
    } else {
        build(to, n, |i| Value::Float(start + i as f64 * step))
    }
}
