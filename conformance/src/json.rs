//! Typed access to a case's JSON: fields, lists, dtypes, and numbers that JSON writes
//! as strings (`"nan"`, `"inf"`, 64-bit integers).

use crate::{harness, RunErr, R};
use lazyfuse::half::{bf16, f16};
use lazyfuse::DType;
use serde_json::Value;

/// A float element of the schema: a JSON number or `"nan"`, `"inf"`, `"-inf"`.
pub fn float_element(v: &Value) -> Result<f64, String> {
    json_f64(v).map_err(RunErr::text)
}

pub(crate) fn field<'a>(v: &'a Value, key: &str) -> R<&'a Value> {
    v.get(key)
        .ok_or_else(|| RunErr::Harness(format!("missing key '{key}'")))
}

pub(crate) fn as_str<'a>(v: &'a Value, what: &str) -> R<&'a str> {
    v.as_str()
        .ok_or_else(|| RunErr::Harness(format!("{what}: expected a string, got {v}")))
}

pub(crate) fn as_i64(v: &Value, what: &str) -> R<i64> {
    v.as_i64()
        .ok_or_else(|| RunErr::Harness(format!("{what}: expected an integer, got {v}")))
}

pub(crate) fn as_isize(v: &Value, what: &str) -> R<isize> {
    let i = as_i64(v, what)?;
    isize::try_from(i).map_err(|_| RunErr::Harness(format!("{what}: {i} out of range")))
}

pub(crate) fn as_usize(v: &Value, what: &str) -> R<usize> {
    v.as_u64()
        .and_then(|u| usize::try_from(u).ok())
        .ok_or_else(|| RunErr::Harness(format!("{what}: expected a non-negative integer, got {v}")))
}

pub(crate) fn as_array<'a>(v: &'a Value, what: &str) -> R<&'a Vec<Value>> {
    v.as_array()
        .ok_or_else(|| RunErr::Harness(format!("{what}: expected an array, got {v}")))
}

pub(crate) fn isize_list(v: &Value, what: &str) -> R<Vec<isize>> {
    as_array(v, what)?
        .iter()
        .map(|x| as_isize(x, what))
        .collect()
}

pub(crate) fn usize_list(v: &Value, what: &str) -> R<Vec<usize>> {
    as_array(v, what)?
        .iter()
        .map(|x| as_usize(x, what))
        .collect()
}

pub(crate) fn arg_isize(args: &Value, key: &str) -> R<isize> {
    as_isize(field(args, key)?, key)
}

pub(crate) fn arg_usize(args: &Value, key: &str) -> R<usize> {
    as_usize(field(args, key)?, key)
}

/// An optional integer argument: absent or `null` is `None`.
pub(crate) fn arg_opt_isize(args: &Value, key: &str) -> R<Option<isize>> {
    match args.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(v) => as_isize(v, key).map(Some),
    }
}

pub(crate) fn dtype_of(v: &Value) -> R<DType> {
    let name = as_str(v, "dtype")?;
    name.parse::<DType>()
        .map_err(|_| RunErr::Harness(format!("unknown dtype name '{name}'")))
}

/// A float element: a JSON number or `"nan"`, `"inf"`, `"-inf"`.
pub(crate) fn json_f64(v: &Value) -> R<f64> {
    match v {
        Value::Number(n) => n
            .as_f64()
            .ok_or_else(|| RunErr::Harness(format!("bad float {n}"))),
        Value::String(s) => match s.as_str() {
            "nan" => Ok(f64::NAN),
            "inf" => Ok(f64::INFINITY),
            "-inf" => Ok(f64::NEG_INFINITY),
            _ => harness(format!("bad float string '{s}'")),
        },
        _ => harness(format!("expected a float, got {v}")),
    }
}

/// An integer element, parsed without going through `f64` (int64/uint64 extremes occur).
pub(crate) fn json_int(v: &Value) -> R<i128> {
    if let Some(i) = v.as_i64() {
        Ok(i128::from(i))
    } else if let Some(u) = v.as_u64() {
        Ok(i128::from(u))
    } else {
        harness(format!("expected an integer, got {v}"))
    }
}

pub(crate) fn json_bool(v: &Value) -> R<bool> {
    v.as_bool()
        .ok_or_else(|| RunErr::Harness(format!("expected a bool, got {v}")))
}

pub(crate) fn json_complex(v: &Value) -> R<(f64, f64)> {
    match v.as_array().map(Vec::as_slice) {
        Some([re, im]) => Ok((json_f64(re)?, json_f64(im)?)),
        _ => harness(format!("expected [re, im], got {v}")),
    }
}

/// Rounds a decoded `f64` to the float dtype (or complex part dtype) `dtype` and widens it
/// back, so that the expected value is exactly the recorded value of that dtype.
pub(crate) fn round_to(dtype: DType, x: f64) -> f64 {
    match dtype.to_real() {
        DType::F16 => f16::from_f64(x).to_f64(),
        DType::BF16 => bf16::from_f64(x).to_f64(),
        DType::F32 => x as f32 as f64,
        _ => x,
    }
}
