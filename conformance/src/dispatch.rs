//! From an op's name in a case to the lazyfuse call: binary, unary and value ops
//! with their arguments decoded (view steps: `view_steps.rs`).

use crate::{
    arg_isize, arg_opt_isize, as_i64, as_isize, dtype_of, field, harness, isize_list, json_bool,
    rounding_mode, Arg, R,
};
use lazyfuse::{BinaryOp, RoundingMode, Scalar, Tensor};
use serde_json::Value;

// Ops

/// Calls `$recv.$method(x)` with the operand `$arg` as `&Tensor` or `Scalar`.
macro_rules! with_arg {
    ($recv:expr, $method:ident, $arg:expr $(, $extra:expr)*) => {
        match $arg {
            Arg::T(t) => $recv.$method(t $(, $extra)*),
            Arg::S(s) => $recv.$method(*s $(, $extra)*),
        }
    };
}
pub(crate) use with_arg;

/// `a OP b` for the binary ops of §2 (`where` excluded).
pub(crate) fn binary(op: &str, a: &Arg, b: &Arg, mode: Option<RoundingMode>) -> R<Tensor> {
    let a = match a {
        Arg::T(t) => t,
        Arg::S(s) => return binary_scalar_left(op, *s, b, mode),
    };
    Ok(match op {
        "add" => with_arg!(a, add, b)?,
        "sub" => with_arg!(a, sub, b)?,
        "mul" => with_arg!(a, mul, b)?,
        "div" => match mode {
            None => with_arg!(a, div, b)?,
            Some(m) => with_arg!(a, div_mode, b, m)?,
        },
        "floor_divide" => with_arg!(a, floor_divide, b)?,
        "remainder" => with_arg!(a, remainder, b)?,
        "fmod" => with_arg!(a, fmod, b)?,
        "pow" => with_arg!(a, pow, b)?,
        "maximum" => with_arg!(a, maximum, b)?,
        "minimum" => with_arg!(a, minimum, b)?,
        "atan2" => with_arg!(a, atan2, b)?,
        "eq" => with_arg!(a, eq, b)?,
        "ne" => with_arg!(a, ne, b)?,
        "lt" => with_arg!(a, lt, b)?,
        "le" => with_arg!(a, le, b)?,
        "gt" => with_arg!(a, gt, b)?,
        "ge" => with_arg!(a, ge, b)?,
        "logical_and" => with_arg!(a, logical_and, b)?,
        "logical_or" => with_arg!(a, logical_or, b)?,
        "logical_xor" => with_arg!(a, logical_xor, b)?,
        "bitwise_and" => with_arg!(a, bitwise_and, b)?,
        "bitwise_or" => with_arg!(a, bitwise_or, b)?,
        "bitwise_xor" => with_arg!(a, bitwise_xor, b)?,
        "fmax" | "fmin" => match b {
            Arg::T(b) if op == "fmax" => a.fmax(b)?,
            Arg::T(b) => a.fmin(b)?,
            Arg::S(_) => return harness(format!("'{op}' takes two tensors")),
        },
        other => return harness(format!("unknown binary op '{other}'")),
    })
}

/// `scalar OP tensor` through `Tensor::binary`, the form behind Python's reflected
/// operators (`2 - t`), so promotion and errors are the library's own for that order.
pub(crate) fn binary_scalar_left(
    op: &str,
    s: Scalar,
    b: &Arg,
    mode: Option<RoundingMode>,
) -> R<Tensor> {
    let Arg::T(b) = b else {
        return harness(format!("'{op}' with two scalar operands"));
    };
    let op = match (op, mode) {
        ("div", Some(RoundingMode::Floor)) | ("floor_divide", None) => BinaryOp::DivFloor,
        ("div", Some(RoundingMode::Trunc)) => BinaryOp::DivTrunc,
        ("div", None) => BinaryOp::Div,
        ("add", None) => BinaryOp::Add,
        ("sub", None) => BinaryOp::Sub,
        ("mul", None) => BinaryOp::Mul,
        ("remainder", None) => BinaryOp::Remainder,
        ("fmod", None) => BinaryOp::Fmod,
        ("pow", None) => BinaryOp::Pow,
        ("maximum", None) => BinaryOp::Maximum,
        ("minimum", None) => BinaryOp::Minimum,
        ("atan2", None) => BinaryOp::Atan2,
        ("eq", None) => BinaryOp::Eq,
        ("ne", None) => BinaryOp::Ne,
        ("lt", None) => BinaryOp::Lt,
        ("le", None) => BinaryOp::Le,
        ("gt", None) => BinaryOp::Gt,
        ("ge", None) => BinaryOp::Ge,
        ("logical_and", None) => BinaryOp::LogicalAnd,
        ("logical_or", None) => BinaryOp::LogicalOr,
        ("logical_xor", None) => BinaryOp::LogicalXor,
        ("bitwise_and", None) => BinaryOp::BitwiseAnd,
        ("bitwise_or", None) => BinaryOp::BitwiseOr,
        ("bitwise_xor", None) => BinaryOp::BitwiseXor,
        (other, mode) => {
            return harness(format!(
                "unknown binary op '{other}' (rounding mode {mode:?})"
            ))
        }
    };
    Ok(Tensor::binary(op, s, b)?)
}

/// `where(cond, a, b)` with tensor or scalar branches.
pub(crate) fn where_op(cond: &Tensor, a: &Arg, b: &Arg) -> R<Tensor> {
    Ok(match (a, b) {
        (Arg::T(x), Arg::T(y)) => Tensor::where_cond(cond, x, y)?,
        (Arg::T(x), Arg::S(y)) => Tensor::where_cond(cond, x, *y)?,
        (Arg::S(x), Arg::T(y)) => Tensor::where_cond(cond, *x, y)?,
        (Arg::S(x), Arg::S(y)) => Tensor::where_cond(cond, *x, *y)?,
    })
}

/// The unary ops and simple reductions of unary.jsonl (§4).
pub(crate) fn unary(op: &str, x: &Tensor, args: &Value) -> R<Tensor> {
    let dim = || arg_isize(args, "dim");
    Ok(match op {
        "neg" => x.neg()?,
        "abs" => x.abs()?,
        "sign" => x.sign()?,
        "exp" => x.exp()?,
        "log" => x.log()?,
        "sqrt" => x.sqrt()?,
        "rsqrt" => x.rsqrt()?,
        "sin" => x.sin()?,
        "cos" => x.cos()?,
        "tanh" => x.tanh()?,
        "sigmoid" => x.sigmoid()?,
        "relu" => x.relu()?,
        "floor" => x.floor()?,
        "ceil" => x.ceil()?,
        "round" => x.round()?,
        "trunc" => x.trunc()?,
        "reciprocal" => x.reciprocal()?,
        "logical_not" => x.logical_not()?,
        "bitwise_not" => x.bitwise_not()?,
        "isnan" => x.isnan()?,
        // unary math, predicates and activations
        "sgn" => x.sgn()?,
        "exp2" => x.exp2()?,
        "expm1" => x.expm1()?,
        "log2" => x.log2()?,
        "log10" => x.log10()?,
        "log1p" => x.log1p()?,
        "tan" => x.tan()?,
        "asin" => x.asin()?,
        "acos" => x.acos()?,
        "atan" => x.atan()?,
        "sinh" => x.sinh()?,
        "cosh" => x.cosh()?,
        "asinh" => x.asinh()?,
        "acosh" => x.acosh()?,
        "atanh" => x.atanh()?,
        "erf" => x.erf()?,
        "erfc" => x.erfc()?,
        "erfinv" => x.erfinv()?,
        "frac" => x.frac()?,
        "square" => x.square()?,
        "positive" => x.positive()?,
        "isinf" => x.isinf()?,
        "isposinf" => x.isposinf()?,
        "isneginf" => x.isneginf()?,
        "isfinite" => x.isfinite()?,
        "isreal" => x.isreal()?,
        "signbit" => x.signbit()?,
        "silu" => x.silu()?,
        "mish" => x.mish()?,
        "hardsigmoid" => x.hardsigmoid()?,
        "hardswish" => x.hardswish()?,
        "relu6" => x.relu6()?,
        "sum" => x.sum(&[], false)?,
        "prod" => x.prod(&[], false)?,
        "mean" => x.mean(&[], false)?,
        "amax" => x.amax(&[], false)?,
        "amin" => x.amin(&[], false)?,
        "argmax" => x.argmax(None, false)?,
        "argmin" => x.argmin(None, false)?,
        "cumsum" => x.cumsum(dim()?)?,
        "softmax" => x.softmax(dim()?)?,
        "log_softmax" => x.log_softmax(dim()?)?,
        "all" => x.all(&[], false)?,
        "any" => x.any(&[], false)?,
        "nansum" => x.nansum(&[], false)?,
        "cumprod" => x.cumprod(dim()?)?,
        "logsumexp" => x.logsumexp(&[dim()?], false)?,
        other => return harness(format!("op '{other}' is not in the lazyfuse API")),
    })
}

/// The reduction dims of values.jsonl: `null` and `[]` mean all dims.
pub(crate) fn reduce_dims(args: &Value) -> R<Vec<isize>> {
    match args.get("dim") {
        None | Some(Value::Null) => Ok(Vec::new()),
        Some(v @ Value::Array(_)) => isize_list(v, "dim"),
        Some(v) => Ok(vec![as_isize(v, "dim")?]),
    }
}

pub(crate) fn keepdim(args: &Value) -> R<bool> {
    match args.get("keepdim") {
        None | Some(Value::Null) => Ok(false),
        Some(v) => json_bool(v),
    }
}

/// A clamp bound: a JSON integer is an int scalar, a number with a fraction or an
/// exponent a float scalar (the difference decides the result dtype).
pub(crate) fn clamp_bound(v: Option<&Value>) -> R<Option<Scalar>> {
    match v {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Number(n)) if n.is_f64() => {
            Ok(Some(Scalar::Float(n.as_f64().unwrap_or(f64::NAN))))
        }
        Some(v) => Ok(Some(Scalar::Int(as_i64(v, "clamp bound")?))),
    }
}

/// The ops of values.jsonl (§7).
pub(crate) fn values_op(op: &str, inputs: &[Tensor], args: &Value) -> R<Tensor> {
    let one = |n: usize| -> R<()> {
        if inputs.len() == n {
            Ok(())
        } else {
            harness(format!("'{op}' expects {n} inputs, got {}", inputs.len()))
        }
    };
    match op {
        "add" | "sub" | "mul" | "div" | "floor_divide" | "remainder" | "fmod" | "pow"
        | "maximum" | "minimum" | "atan2" | "fmax" | "fmin" => {
            one(2)?;
            let mode = rounding_mode(args.get("rounding_mode"))?;
            let (a, b) = (Arg::T(inputs[0].clone()), Arg::T(inputs[1].clone()));
            binary(op, &a, &b, mode)
        }
        "exp" | "log" | "sqrt" | "tanh" | "sigmoid" | "neg" | "abs" => {
            one(1)?;
            unary(op, &inputs[0], args)
        }
        "to" => {
            one(1)?;
            Ok(inputs[0].to_dtype(dtype_of(field(args, "dtype")?)?)?)
        }
        "sum" | "mean" | "amax" | "amin" | "var" | "std" => {
            one(1)?;
            let (x, dims, kd) = (&inputs[0], reduce_dims(args)?, keepdim(args)?);
            Ok(match op {
                "sum" => x.sum(&dims, kd)?,
                "mean" => x.mean(&dims, kd)?,
                "amax" => x.amax(&dims, kd)?,
                "amin" => x.amin(&dims, kd)?,
                "var" => x.var(&dims, as_i64(field(args, "correction")?, "correction")?, kd)?,
                _ => x.std(&dims, as_i64(field(args, "correction")?, "correction")?, kd)?,
            })
        }
        "prod" | "argmax" | "argmin" => {
            one(1)?;
            let (x, dim, kd) = (&inputs[0], arg_opt_isize(args, "dim")?, keepdim(args)?);
            Ok(match op {
                "prod" => x.prod(dim.as_slice(), kd)?,
                "argmax" => x.argmax(dim, kd)?,
                _ => x.argmin(dim, kd)?,
            })
        }
        "cumsum" | "softmax" | "log_softmax" => {
            one(1)?;
            unary(op, &inputs[0], args)
        }
        "nansum" | "logsumexp" => {
            one(1)?;
            let (x, dims, kd) = (&inputs[0], reduce_dims(args)?, keepdim(args)?);
            Ok(if op == "nansum" {
                x.nansum(&dims, kd)?
            } else {
                x.logsumexp(&dims, kd)?
            })
        }
        "cumprod" => {
            one(1)?;
            unary(op, &inputs[0], args)
        }
        "matmul" => {
            one(2)?;
            Ok(inputs[0].matmul(&inputs[1])?)
        }
        "where" => {
            one(3)?;
            Ok(Tensor::where_cond(&inputs[0], &inputs[1], &inputs[2])?)
        }
        "clamp" => {
            one(1)?;
            let min = clamp_bound(args.get("min"))?;
            let max = clamp_bound(args.get("max"))?;
            Ok(inputs[0].clamp(min, max)?)
        }
        "clamp_tensor" => {
            one(3)?;
            Ok(inputs[0].clamp_tensor(Some(&inputs[1]), Some(&inputs[2]))?)
        }
        "cat" | "stack" => {
            let refs: Vec<&Tensor> = inputs.iter().collect();
            let dim = arg_isize(args, "dim")?;
            Ok(if op == "cat" {
                Tensor::cat(&refs, dim)?
            } else {
                Tensor::stack(&refs, dim)?
            })
        }
        other => harness(format!("op '{other}' is not in the lazyfuse API")),
    }
}
