//! The runner of `memory_format.jsonl` (tests/data/seeds/README.md): elementwise ops,
//! copies and memory-format queries, judged on values and on the result's strides.

use crate::{
    as_array, as_str, binary, build_tensor, check_result, dtype_of, field, harness, isize_list,
    json_bool, json_f64, judge, realized, shape_str, unary, Arg, Outcome, R,
};
use lazyfuse::MemoryFormat;
use lazyfuse::{DType, Scalar, Tensor};
use serde_json::Value;

fn format_of(args: &Value) -> R<MemoryFormat> {
    Ok(
        match as_str(field(args, "memory_format")?, "memory_format")? {
            "contiguous_format" => MemoryFormat::Contiguous,
            "channels_last" => MemoryFormat::ChannelsLast,
            "channels_last_3d" => MemoryFormat::ChannelsLast3d,
            "preserve_format" => MemoryFormat::Preserve,
            other => return harness(format!("unknown memory format '{other}'")),
        },
    )
}

/// A host scalar argument: a JSON integer is an int, any other number a float.
fn scalar_arg(v: &Value) -> R<Scalar> {
    match v.as_i64() {
        Some(i) if !v.is_f64() => Ok(Scalar::Int(i)),
        _ => Ok(Scalar::Float(json_f64(v)?)),
    }
}

fn op_result(op: &str, inputs: &[Tensor], args: &Value) -> R<Tensor> {
    let x = inputs.first().map_or_else(|| harness("no inputs"), Ok)?;
    let arg = |i: usize| -> R<Arg> {
        match inputs.get(i) {
            Some(t) => Ok(Arg::T(t.clone())),
            None => Ok(Arg::S(scalar_arg(field(args, "other")?)?)),
        }
    };
    let dtype = || -> R<Option<DType>> {
        match args.get("dtype") {
            None | Some(Value::Null) => Ok(None),
            Some(d) => dtype_of(d).map(Some),
        }
    };
    Ok(match op {
        "add" | "sub" | "mul" | "div" | "maximum" | "eq" | "atan2" => {
            binary(op, &Arg::T(x.clone()), &arg(1)?, None)?
        }
        "exp" | "neg" | "abs" | "sigmoid" | "tanh" => unary(op, x, args)?,
        "to" => x.to_dtype(dtype_of(field(args, "dtype")?)?)?,
        "clamp" => {
            let bound = |k: &str| -> R<Option<Scalar>> {
                match args.get(k) {
                    None | Some(Value::Null) => Ok(None),
                    Some(v) => scalar_arg(v).map(Some),
                }
            };
            x.clamp(bound("min")?, bound("max")?)?
        }
        "clamp_tensor" | "where" => {
            let (a, b) = match (inputs.get(1), inputs.get(2)) {
                (Some(a), Some(b)) => (a, b),
                _ => return harness(format!("'{op}' takes three tensors")),
            };
            if op == "where" {
                Tensor::where_cond(x, a, b)?
            } else {
                x.clamp_tensor(Some(a), Some(b))?
            }
        }
        "contiguous" => x.contiguous_in(format_of(args)?)?,
        "clone" => match args.get("memory_format") {
            None => x.clone_in(MemoryFormat::Preserve)?,
            Some(_) => x.clone_in(format_of(args)?)?,
        },
        "zeros_like" => x.zeros_like_in(dtype()?, format_of(args)?)?,
        "full_like" => x.full_like_in(
            scalar_arg(field(args, "value")?)?,
            dtype()?,
            format_of(args)?,
        )?,
        other => return harness(format!("unknown memory_format op '{other}'")),
    })
}

/// One case: `is_contiguous` answers a bool; the other ops a tensor whose values,
/// and strides, are PyTorch's.
pub(super) fn run_memory_format(case: &Value) -> R<Outcome> {
    let op = as_str(field(case, "op")?, "op")?;
    let empty = Value::Object(Default::default());
    let args = case.get("args").unwrap_or(&empty);
    let expected = field(case, "result")?;
    let inputs = as_array(field(case, "inputs")?, "inputs")?
        .iter()
        .map(build_tensor)
        .collect::<R<Vec<_>>>()?;
    if op == "is_contiguous" {
        let want = json_bool(field(expected, "value")?)?;
        let got = inputs[0].is_contiguous_in(format_of(args)?);
        return Ok(if got == want {
            Outcome::Pass
        } else {
            Outcome::Fail(format!("is_contiguous: expected {want}, got {got}"))
        });
    }
    let got = op_result(op, &inputs, args).and_then(realized);
    Ok(judge(expected, got, |t| {
        let strides = isize_list(field(expected, "strides")?, "strides")?;
        if t.strides() != strides {
            return Ok(Outcome::Fail(format!(
                "strides: expected {strides:?}, got {:?} (shape {})",
                t.strides(),
                shape_str(&t.shape())
            )));
        }
        check_result(t, expected)
    }))
}
