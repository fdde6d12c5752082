//! Building a case's inputs: tensor objects (with their input views), scalars and
//! promotion operands, on the CPU or moved to `cuda:0` when the run asks for it.

use crate::{
    apply_view_step, as_array, as_i64, as_str, decode_vals, dtype_of, field, harness, ints,
    json_bool, json_complex, json_f64, read_vals, shape_str, usize_list, RunErr, Vals, R,
};
use lazyfuse::half::{bf16, f16};
use lazyfuse::{Complex, DType, RoundingMode, Scalar, Tensor};
use serde_json::Value;

/// A tensor object of the schema (§1.4: `dtype`, `shape`, `data`; its `view` steps are
/// not applied) as a contiguous tensor. The PyTorch-generated oracle tests
/// (`tests/ops_*.rs`) decode their tensors with it, so that one decoder serves all.
pub fn tensor_object(obj: &Value) -> Result<Tensor, String> {
    build_base_tensor(obj).map_err(RunErr::text)
}

/// Whether input tensors go to `cuda:0` (`--device cuda`): the op then runs there.
/// The command line sets it; the conformance tests leave it off.
pub static ON_CUDA: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// An input tensor on the device the cases run on (`--device`).
pub(crate) fn on_target_device(t: Tensor) -> R<Tensor> {
    if ON_CUDA.load(std::sync::atomic::Ordering::Relaxed) {
        Ok(t.to_device(lazyfuse::Device::cuda(0))?)
    } else {
        Ok(t)
    }
}

/// A contiguous tensor of `dtype` and `shape` holding `vals`.
pub(crate) fn tensor_from_vals(dtype: DType, shape: &[usize], vals: &Vals) -> R<Tensor> {
    on_target_device(tensor_from_vals_on_cpu(dtype, shape, vals)?)
}

pub(crate) fn tensor_from_vals_on_cpu(dtype: DType, shape: &[usize], vals: &Vals) -> R<Tensor> {
    let t = match (dtype, vals) {
        (DType::Bool, Vals::Bool(v)) => Tensor::from_vec(v.clone(), shape),
        (DType::U8, Vals::Int(v)) => Tensor::from_vec(ints::<u8>(v, dtype)?, shape),
        (DType::I8, Vals::Int(v)) => Tensor::from_vec(ints::<i8>(v, dtype)?, shape),
        (DType::I16, Vals::Int(v)) => Tensor::from_vec(ints::<i16>(v, dtype)?, shape),
        (DType::I32, Vals::Int(v)) => Tensor::from_vec(ints::<i32>(v, dtype)?, shape),
        (DType::I64, Vals::Int(v)) => Tensor::from_vec(ints::<i64>(v, dtype)?, shape),
        (DType::U16, Vals::Int(v)) => Tensor::from_vec(ints::<u16>(v, dtype)?, shape),
        (DType::U32, Vals::Int(v)) => Tensor::from_vec(ints::<u32>(v, dtype)?, shape),
        (DType::U64, Vals::Int(v)) => Tensor::from_vec(ints::<u64>(v, dtype)?, shape),
        (DType::F16, Vals::Float(v)) => {
            Tensor::from_vec(v.iter().map(|&x| f16::from_f64(x)).collect(), shape)
        }
        (DType::BF16, Vals::Float(v)) => {
            Tensor::from_vec(v.iter().map(|&x| bf16::from_f64(x)).collect(), shape)
        }
        (DType::F32, Vals::Float(v)) => {
            Tensor::from_vec(v.iter().map(|&x| x as f32).collect(), shape)
        }
        (DType::F64, Vals::Float(v)) => Tensor::from_vec(v.clone(), shape),
        (DType::C64, Vals::Complex(v)) => Tensor::from_vec(
            v.iter()
                .map(|&(re, im)| Complex::new(re as f32, im as f32))
                .collect(),
            shape,
        ),
        (DType::C128, Vals::Complex(v)) => Tensor::from_vec(
            v.iter().map(|&(re, im)| Complex::new(re, im)).collect(),
            shape,
        ),
        // the parts are half values, exact in complex64
        (DType::C32 | DType::BC32, Vals::Complex(_)) => {
            return Ok(tensor_from_vals_on_cpu(DType::C64, shape, vals)?.to_dtype(dtype)?)
        }
        _ => return harness(format!("cannot build an input tensor of dtype {dtype}")),
    };
    Ok(t?)
}

// Building inputs

/// A binary-op operand: a tensor or a host scalar.
pub(crate) enum Arg {
    T(Tensor),
    S(Scalar),
}

impl Arg {
    pub(crate) fn describe(&self) -> String {
        match self {
            Arg::T(t) => format!("tensor {} {}", t.dtype(), shape_str(&t.shape())),
            Arg::S(s) => format!("scalar {s}"),
        }
    }
}

/// A tensor object (§1.4), with its optional `view` steps applied.
pub(crate) fn build_tensor(obj: &Value) -> R<Tensor> {
    let base = build_base_tensor(obj)?;
    apply_input_view(base, obj)
}

/// The contiguous tensor of a tensor object, before its `view` steps.
pub(crate) fn build_base_tensor(obj: &Value) -> R<Tensor> {
    let dtype = dtype_of(field(obj, "dtype")?)?;
    let shape = usize_list(field(obj, "shape")?, "shape")?;
    let data = as_array(field(obj, "data")?, "data")?;
    let vals = decode_vals(dtype, data)?;
    tensor_from_vals(dtype, &shape, &vals)
}

pub(crate) fn apply_input_view(mut t: Tensor, obj: &Value) -> R<Tensor> {
    if let Some(steps) = obj.get("view") {
        for step in as_array(steps, "view")? {
            t = apply_view_step(&t, step)?;
        }
    }
    Ok(t)
}

/// A host scalar operand (§1.7).
pub(crate) fn build_scalar(obj: &Value) -> R<Scalar> {
    let value = field(obj, "value")?;
    Ok(match as_str(field(obj, "scalar_type")?, "scalar_type")? {
        "bool" => Scalar::Bool(json_bool(value)?),
        "int" => Scalar::Int(as_i64(value, "int scalar")?),
        // Always a double, even when it looks integral (`3.0`).
        "float" => Scalar::Float(json_f64(value)?),
        "complex" => {
            let (re, im) = json_complex(value)?;
            Scalar::Complex(re, im)
        }
        other => return harness(format!("unknown scalar_type '{other}'")),
    })
}

/// A promotion.jsonl operand: every element 1 (`true`), or the alternating `cond`.
pub(crate) fn build_promotion_operand(obj: &Value, alternating: bool) -> R<Arg> {
    let kind = as_str(field(obj, "kind")?, "kind")?;
    match kind {
        "scalar" => Ok(Arg::S(build_scalar(obj)?)),
        "tensor" | "zerodim" => {
            let dtype = dtype_of(field(obj, "dtype")?)?;
            let shape = usize_list(field(obj, "shape")?, "shape")?;
            let t = if alternating {
                let n: usize = shape.iter().product();
                let v: Vec<bool> = (0..n).map(|i| i % 2 == 0).collect();
                Tensor::from_vec(v, &shape)?
            } else {
                Tensor::ones(&shape, dtype)
            };
            Ok(Arg::T(on_target_device(t)?))
        }
        other => harness(format!("unknown operand kind '{other}'")),
    }
}

/// An inplace.jsonl / values-style operand with data.
pub(crate) fn build_data_operand(obj: &Value) -> R<Arg> {
    match as_str(field(obj, "kind")?, "kind")? {
        "scalar" => Ok(Arg::S(build_scalar(obj)?)),
        "tensor" | "zerodim" => Ok(Arg::T(build_tensor(obj)?)),
        other => harness(format!("unknown operand kind '{other}'")),
    }
}

pub(crate) fn rounding_mode(v: Option<&Value>) -> R<Option<RoundingMode>> {
    match v {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) if s == "floor" => Ok(Some(RoundingMode::Floor)),
        Some(Value::String(s)) if s == "trunc" => Ok(Some(RoundingMode::Trunc)),
        Some(other) => harness(format!("unknown rounding_mode {other}")),
    }
}

/// A genuine copy (new storage) of `t`, contiguous, through the host.
pub(crate) fn deep_copy(t: &Tensor) -> R<Tensor> {
    let vals = read_vals(t)?;
    tensor_from_vals(t.dtype(), &t.shape(), &vals)
}
