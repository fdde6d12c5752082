//! Element values widened for comparison (`f64`, `i128`, complex pairs, bools): decoded
//! from a case's data, read back from a tensor, and rounded to a dtype's precision.

use crate::{harness, json_bool, json_complex, json_f64, json_int, round_to, RunErr, R};
use lazyfuse::half::{bf16, f16};
use lazyfuse::{Complex, DType, Element, Tensor};
use serde_json::Value;

// Element values, widened for comparison

/// The elements of a tensor, widened to one type per category.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Vals {
    Bool(Vec<bool>),
    Int(Vec<i128>),
    Float(Vec<f64>),
    Complex(Vec<(f64, f64)>),
}

impl Vals {
    pub(crate) fn len(&self) -> usize {
        match self {
            Vals::Bool(v) => v.len(),
            Vals::Int(v) => v.len(),
            Vals::Float(v) => v.len(),
            Vals::Complex(v) => v.len(),
        }
    }
}

/// Decodes a JSON `data` list of `dtype` elements (§1.4).
pub(crate) fn decode_vals(dtype: DType, data: &[Value]) -> R<Vals> {
    Ok(if dtype == DType::Bool {
        Vals::Bool(data.iter().map(json_bool).collect::<R<_>>()?)
    } else if dtype.is_integer() {
        Vals::Int(data.iter().map(json_int).collect::<R<_>>()?)
    } else if dtype.is_complex() {
        Vals::Complex(
            data.iter()
                .map(|v| {
                    let (re, im) = json_complex(v)?;
                    Ok((round_to(dtype, re), round_to(dtype, im)))
                })
                .collect::<R<_>>()?,
        )
    } else if dtype.is_floating_point() {
        Vals::Float(
            data.iter()
                .map(|v| Ok(round_to(dtype, json_f64(v)?)))
                .collect::<R<_>>()?,
        )
    } else {
        return harness(format!("no element decoding for dtype {dtype}"));
    })
}

pub(crate) fn ints<T: TryFrom<i128>>(v: &[i128], dtype: DType) -> R<Vec<T>> {
    v.iter()
        .map(|&i| {
            T::try_from(i).map_err(|_| RunErr::Harness(format!("{i} does not fit in {dtype}")))
        })
        .collect()
}

pub(crate) fn read_as<T: Element>(t: &Tensor, f: impl Fn(&T) -> f64) -> lazyfuse::Result<Vec<f64>> {
    Ok(t.to_vec::<T>()?.iter().map(f).collect())
}

pub(crate) fn read_ints<T: Element + Into<i128>>(t: &Tensor) -> lazyfuse::Result<Vals> {
    Ok(Vals::Int(
        t.to_vec::<T>()?.into_iter().map(Into::into).collect(),
    ))
}

/// Reads a tensor's elements (logical row-major order), widened.
pub(crate) fn read_vals(t: &Tensor) -> R<Vals> {
    Ok(match t.dtype() {
        DType::Bool => Vals::Bool(t.to_vec::<bool>()?),
        DType::U8 => read_ints::<u8>(t)?,
        DType::I8 => read_ints::<i8>(t)?,
        DType::I16 => read_ints::<i16>(t)?,
        DType::I32 => read_ints::<i32>(t)?,
        DType::I64 => read_ints::<i64>(t)?,
        DType::U16 => read_ints::<u16>(t)?,
        DType::U32 => read_ints::<u32>(t)?,
        DType::U64 => read_ints::<u64>(t)?,
        DType::F16 => Vals::Float(read_as::<f16>(t, |x| x.to_f64())?),
        DType::BF16 => Vals::Float(read_as::<bf16>(t, |x| x.to_f64())?),
        DType::F32 => Vals::Float(read_as::<f32>(t, |&x| f64::from(x))?),
        DType::F64 => Vals::Float(t.to_vec::<f64>()?),
        DType::C64 => Vals::Complex(
            t.to_vec::<Complex<f32>>()?
                .iter()
                .map(|c| (f64::from(c.re), f64::from(c.im)))
                .collect(),
        ),
        DType::C128 => Vals::Complex(
            t.to_vec::<Complex<f64>>()?
                .iter()
                .map(|c| (c.re, c.im))
                .collect(),
        ),
        // (each half part widens exactly)
        DType::C32 | DType::BC32 => read_vals(&t.to_dtype(DType::C64)?)?,
        other => return harness(format!("the runner cannot read elements of dtype {other}")),
    })
}
