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
//! - to complex: real values get a zero imaginary part;
//! - to a float8 dtype: the value goes to `float32` first, as above (so `float64` and
//!   `int64` round twice, as c10's `Float8_*(float)` constructors make
//!   `static_cast<Float8_*>(double)` do), then [`float8::Format::encode`] rounds it;
//! - from a float8 dtype: the code decodes exactly to `float32`
//!   ([`float8::Format::decode`]) and converts on by the rules for a float source.
//!
//! `complex32` and `bcomplex32` stay unconvertible (they are promotion results only).

use super::float8;
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
        // complex32/bcomplex32: each part rounded to the half type, as c10's
        // complex<Half>(complex<float>) does; stored as (re, im) little-endian pairs
        DType::C32 | DType::BC32 => Buffer::Raw {
            dtype: to,
            bytes: (0..n)
                .flat_map(|i| {
                    let v = get(i);
                    let (re, im) = (v.to_f32(), v.imag() as f32);
                    let part = |x: f32| match to {
                        DType::C32 => f16::from_f32(x).to_le_bytes(),
                        _ => bf16::from_f32(x).to_le_bytes(),
                    };
                    let (r, m) = (part(re), part(im));
                    [r[0], r[1], m[0], m[1]]
                })
                .collect(),
        },
        // float4 has no conversions in PyTorch: only its zero (the bytes of `zeros`)
        DType::F4E2M1FNX2 => {
            if (0..n).any(|i| get(i).truthy()) {
                return Err(Error::Unsupported(
                    "values other than zero in float4_e2m1fn_x2 (PyTorch converts nothing to it)"
                        .into(),
                ));
            }
            Buffer::Raw {
                dtype: to,
                bytes: vec![0; n],
            }
        }
        other => match float8::Format::of(other) {
            Some(format) => Buffer::Raw {
                dtype: other,
                bytes: (0..n).map(|i| format.encode(get(i).to_f32())).collect(),
            },
            None => {
                return Err(Error::Unsupported(format!(
                    "conversion to {other} (a storage-only dtype)"
                )))
            }
        },
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
        Buffer::Raw { dtype, bytes } if matches!(dtype, DType::C32 | DType::BC32) => {
            // two half parts per element; each widens exactly
            let half = |b: &[u8]| -> f64 {
                let bits = [b[0], b[1]];
                match dtype {
                    DType::C32 => f16::from_le_bytes(bits).to_f64(),
                    _ => bf16::from_le_bytes(bits).to_f64(),
                }
            };
            build(to, bytes.len() / 4, |i| {
                let e = &bytes[4 * i..4 * i + 4];
                Value::Complex(half(&e[..2]), half(&e[2..]))
            })
        }
        Buffer::Raw { dtype, bytes } => match float8::Format::of(*dtype) {
            // one byte per element; every code is exactly an f32
            Some(format) => build(to, bytes.len(), |i| {
                Value::Float(f64::from(format.decode(bytes[i])))
            }),
            None => Err(Error::Unsupported(format!(
                "conversion from {dtype} (a storage-only dtype)"
            ))),
        },
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

#[cfg(test)]
mod tests {
    use super::*;

    fn raw(dtype: DType, bytes: &[u8]) -> Buffer {
        Buffer::Raw {
            dtype,
            bytes: bytes.to_vec(),
        }
    }

    fn bytes(b: &Buffer) -> &[u8] {
        match b {
            Buffer::Raw { bytes, .. } => bytes,
            other => panic!("not raw: {other:?}"),
        }
    }

    #[test]
    fn to_float8_goes_through_float32() {
        // 1 + 2^-4 + 2^-30 is just above the e4m3fn tie between 1.0 and 1.125, but
        // float32 drops the 2^-30 first, so the tie goes to the even code 1.0 (0x38).
        let x = Buffer::from_vec(vec![1.0625f64 + 2f64.powi(-30), 1.0625]);
        assert_eq!(bytes(&cast(&x, DType::F8E4M3FN).unwrap()), [0x38, 0x38]);
        let x = Buffer::from_vec(vec![1.0625f32 + 2f32.powi(-20)]);
        assert_eq!(bytes(&cast(&x, DType::F8E4M3FN).unwrap()), [0x39]);
        // integers: 300 rounds to 288 (0x79 = 1.125 · 2^8); -1000 overflows to -NaN
        let x = Buffer::from_vec(vec![300i64, -1000, 0]);
        assert_eq!(
            bytes(&cast(&x, DType::F8E4M3FN).unwrap()),
            [0x79, 0xff, 0x00]
        );
        let x = Buffer::from_vec(vec![255u8]);
        assert_eq!(bytes(&cast(&x, DType::F8E5M2).unwrap()), [0x5c]); // 256
        let x = Buffer::from_vec(vec![true, false]);
        assert_eq!(bytes(&cast(&x, DType::F8E4M3FNUZ).unwrap()), [0x40, 0x00]);
        // complex: the real part only
        let x = Buffer::from_vec(vec![Complex::new(-2.0f32, 7.0)]);
        assert_eq!(bytes(&cast(&x, DType::F8E5M2).unwrap()), [0xc0]);
        let x = Buffer::from_vec(vec![f16::from_f32(-0.0), f16::INFINITY]);
        assert_eq!(bytes(&cast(&x, DType::F8E4M3FN).unwrap()), [0x80, 0x7f]);
    }

    #[test]
    fn from_float8_decodes_then_converts() {
        // e4m3fn: -1.75, 448, NaN, -0
        let x = raw(DType::F8E4M3FN, &[0xbe, 0x7e, 0x7f, 0x80]);
        let f = cast(&x, DType::F32).unwrap();
        let f = f.as_slice::<f32>().unwrap();
        assert_eq!(&f[..2], [-1.75, 448.0]);
        assert!(f[2].is_nan() && f[3] == 0.0 && f[3].is_sign_negative());
        let i = cast(&x, DType::I32).unwrap();
        assert_eq!(i.as_slice::<i32>().unwrap()[..2], [-1, 448]);
        let b = cast(&x, DType::Bool).unwrap();
        assert_eq!(b.as_slice::<bool>().unwrap(), [true, true, true, false]);
        let c = cast(&x, DType::C128).unwrap();
        assert_eq!(
            c.as_slice::<Complex<f64>>().unwrap()[0],
            Complex::new(-1.75, 0.0)
        );
        // e8m0: 2^-127 and 2^127 leave float16's range
        let x = raw(DType::F8E8M0FNU, &[0x00, 0xfe, 0x7f]);
        let h = cast(&x, DType::F16).unwrap();
        let h = h.as_slice::<f16>().unwrap();
        assert_eq!(h, [f16::ZERO, f16::INFINITY, f16::ONE]);
        // float8 to float8: e5m2's infinity is NaN in e4m3fn and in e4m3fnuz
        let x = raw(DType::F8E5M2, &[0x7c, 0xfc, 0x3c]);
        assert_eq!(
            bytes(&cast(&x, DType::F8E4M3FN).unwrap()),
            [0x7f, 0xff, 0x38]
        );
        assert_eq!(
            bytes(&cast(&x, DType::F8E4M3FNUZ).unwrap()),
            [0x80, 0x80, 0x40]
        );
    }

    #[test]
    fn full_of_float8() {
        let b = full(Scalar::Float(1.5), DType::F8E4M3FN, 2).unwrap();
        assert_eq!(b, raw(DType::F8E4M3FN, &[0x3c, 0x3c]));
        // zero in e8m0fnu is the smallest power of two, code 0
        assert_eq!(
            full(Scalar::Int(0), DType::F8E8M0FNU, 1).unwrap(),
            raw(DType::F8E8M0FNU, &[0])
        );
        assert_eq!(
            full(Scalar::Complex(-3.0, 0.0), DType::F8E5M2FNUZ, 1).unwrap(),
            raw(DType::F8E5M2FNUZ, &[0xc6]) // -3 = -1.5 · 2^1: s 10001 10
        );
    }

    #[test]
    fn half_complex_parts_round_and_widen() {
        let x = Buffer::from_vec(vec![Complex::new(1.0f32 + 1e-4, -2.0)]);
        let c32 = cast(&x, DType::C32).unwrap();
        // 1 + 1e-4 rounds to 1.0 in float16; the parts are little-endian halves
        assert_eq!(bytes(&c32), &[0x00, 0x3c, 0x00, 0xc0]);
        let back = cast(&c32, DType::C64).unwrap();
        assert_eq!(
            back.as_slice::<Complex<f32>>().unwrap(),
            &[Complex::new(1.0, -2.0)]
        );
        let bc = cast(&x, DType::BC32).unwrap();
        assert_eq!(bytes(&bc), &[0x80, 0x3f, 0x00, 0xc0]);
        assert_eq!(
            cast(&raw(DType::C32, &[0, 0x3c, 0, 0]), DType::F32)
                .unwrap()
                .as_slice::<f32>()
                .unwrap(),
            &[1.0]
        );
    }
}
