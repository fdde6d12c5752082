//! Scalar expressions as CUDA C: indices (32- or 64-bit), loads, constants, and the
//! unary, parameterised unary, binary and cast ops, each the prelude's `lf_*`
//! function of the interpreter's semantics.

use super::{f8_decode, f8_encode, flit, ilit, lane_value, reg, rep, round, unsupported, Rep};
use crate::semantics::{self, IntClamp};
use crate::CodegenError;
use half::{bf16, f16};
use lazyfuse_ir::kernel::{Affine, Const, Expr, LoopKernel};
use lazyfuse_ir::{BinaryOp, DType, Op, UnaryOp, UnaryParamOp};

/// `offset + Σ strides·i_d`, with constants of suffix `sfx` (`ll`: 64-bit; none:
/// 32-bit, where [`fits_i32`] proved every partial sum fits).
pub(super) fn index(a: &Affine, sfx: &str) -> String {
    let mut parts = Vec::new();
    if a.offset != 0 || a.strides.iter().all(|&s| s == 0) {
        parts.push(format!("{}{sfx}", a.offset));
    }
    for (d, &s) in a.strides.iter().enumerate() {
        match s {
            0 => {}
            1 => parts.push(format!("i{d}")),
            _ => parts.push(format!("{s}{sfx} * i{d}")),
        }
    }
    parts.join(" + ")
}

/// Whether every index of `k` fits 32-bit arithmetic: the dims and the parallel point
/// count, and for each affine access its constant, every term `s·i` over its range
/// and (so) every partial sum, since a partial sum lies between the access's
/// smallest and largest value when the terms are added to the constant in order.
pub(super) fn fits_i32(k: &LoopKernel) -> bool {
    let small = |v: i128| (i128::from(i32::MIN)..=i128::from(i32::MAX)).contains(&v);
    if !small(k.parallel_points() as i128) || !k.dims.iter().all(|&n| small(n as i128)) {
        return false;
    }
    let affine_ok = |a: &Affine| {
        small(a.offset as i128)
            && a.strides
                .iter()
                .zip(&k.dims)
                .all(|(&s, &n)| small(s as i128) && small(s as i128 * (n as i128 - 1).max(0)))
            && a.range(&k.dims)
                .is_none_or(|(lo, hi)| small(lo) && small(hi))
    };
    let loads_ok = k.exprs.iter().all(|e| match &e.expr {
        Expr::Load { index, .. } => affine_ok(index),
        _ => true,
    });
    loads_ok && k.stores.iter().all(|s| affine_ok(&s.index))
}

/// The register value of element `at` of param `param` (of dtype `dt`).
pub(super) fn load(param: usize, at: &str, dt: DType) -> String {
    lane_value(&format!("p{param}[{at}]"), dt)
}

pub(super) fn constant(c: Const, dt: DType) -> Result<String, CodegenError> {
    let r = rep(dt)?;
    Ok(match (r, c) {
        (Rep::Bool, Const::Bool(b)) => b.to_string(),
        (Rep::Int { c, .. }, Const::Int(i)) => ilit(i, c),
        (Rep::F32 | Rep::F64, Const::Float(f)) => flit(f, r),
        _ => return Err(CodegenError::Malformed(format!("constant {c} of {dt}"))),
    })
}

pub(super) fn unary(op: UnaryOp, x: &str, dt: DType) -> Result<String, CodegenError> {
    use UnaryOp::*;
    let r = rep(dt)?;
    let name = Op::Unary(op).name();
    Ok(match r {
        Rep::Bool => match op {
            Sign | Sgn | Relu | Floor | Ceil | Round | Trunc => x.to_string(),
            LogicalNot | BitwiseNot => format!("(!{x})"),
            IsNan | IsInf | IsPosInf | IsNegInf | Signbit => "false".into(),
            IsFinite | IsReal => "true".into(),
            _ => return Err(unsupported(name, dt)),
        },
        Rep::Int { c, signed, .. } => match op {
            Neg => format!("({c})(0ull - (u64){x})"),
            Abs if signed => format!("({x} < 0 ? ({c})(0ull - (u64){x}) : {x})"),
            Relu if signed => format!("({x} < 0 ? ({c})0 : {x})"),
            Abs | Relu | Floor | Ceil | Round | Trunc => x.to_string(),
            Sign | Sgn if signed => format!("({c})({x} > 0 ? 1 : ({x} < 0 ? -1 : 0))"),
            Sign | Sgn => format!("({c})({x} != 0)"),
            LogicalNot => format!("({x} == 0)"),
            BitwiseNot => format!("({c})(~{x})"),
            Square => format!("({c})((u64){x} * (u64){x})"),
            IsNan | IsInf | IsPosInf | IsNegInf => "false".into(),
            IsFinite | IsReal => "true".into(),
            Signbit if signed => format!("({x} < 0)"),
            Signbit => "false".into(),
            _ => return Err(unsupported(name, dt)),
        },
        Rep::F32 | Rep::F64 => {
            let ty = reg(r);
            let out = match op {
                Neg => format!("(-{x})"),
                Abs => format!("lf_fabs({x})"),
                Sqrt => format!("lf_sqrt({x})"),
                Rsqrt => format!("(({ty})1 / lf_sqrt({x}))"),
                Reciprocal => format!("(({ty})1 / {x})"),
                Floor => format!("lf_floor({x})"),
                Ceil => format!("lf_ceil({x})"),
                Trunc => format!("lf_trunc({x})"),
                Round => format!("lf_rint({x})"),
                Frac => format!("({x} - lf_trunc({x}))"),
                Square => format!("({x} * {x})"),
                Relu => format!("({x} < ({ty})0 ? ({ty})0 : {x})"),
                Sign | Sgn => {
                    format!("({x} > ({ty})0 ? ({ty})1 : ({x} < ({ty})0 ? ({ty})-1 : ({ty})0))")
                }
                LogicalNot => return Ok(format!("({x} == ({ty})0)")),
                IsNan => return Ok(format!("({x} != {x})")),
                IsInf => return Ok(format!("(lf_fabs({x}) == lf_inf<{ty}>())")),
                IsFinite => return Ok(format!("(lf_fabs({x}) < lf_inf<{ty}>())")),
                IsPosInf => return Ok(format!("({x} == lf_inf<{ty}>())")),
                IsNegInf => return Ok(format!("({x} == -lf_inf<{ty}>())")),
                IsReal => return Ok("true".into()),
                Signbit => return Ok(format!("lf_signbit({x})")),
                BitwiseNot => return Err(unsupported(name, dt)),
                Exp | Log | Sin | Cos | Tanh | Sigmoid | Exp2 | Expm1 | Log2 | Log10 | Log1p
                | Tan | Asin | Acos | Atan | Sinh | Cosh | Asinh | Acosh | Atanh | Erf | Erfc
                | Erfinv | Silu | Mish | Hardsigmoid | Hardswish => format!("lf_{name}({x})"),
                // complex values never enter loop kernels
                RealPart | ImagPart | Conj => return Err(unsupported(name, dt)),
            };
            round(out, dt)
        }
        Rep::F8 => return Err(unsupported(name, dt)),
    })
}

/// A value of `dt` (the stored type) converted from f64 in one rounding, then held
/// in its compute type: `nan_to_num`'s replacements.
pub(super) fn stored_from_f64(x: f64, dt: DType) -> f64 {
    match dt {
        DType::F16 => f16::from_f64(x).to_f64(),
        DType::BF16 => bf16::from_f64(x).to_f64(),
        DType::F32 => x as f32 as f64,
        _ => x,
    }
}

pub(super) fn unary_param(op: UnaryParamOp, x: &str, dt: DType) -> Result<String, CodegenError> {
    let r = rep(dt)?;
    match (r, op) {
        (Rep::Bool | Rep::Int { .. }, UnaryParamOp::NanToNum { .. }) => Ok(x.to_string()),
        (Rep::Bool | Rep::Int { .. }, UnaryParamOp::Hardtanh { min_val, max_val }) => {
            let c = reg(r);
            let lit = |v: i128| {
                if dt == DType::Bool {
                    (v != 0).to_string()
                } else {
                    ilit(v, c)
                }
            };
            Ok(match semantics::int_hardtanh(min_val, max_val, dt) {
                IntClamp::Keep => x.to_string(),
                IntClamp::Const(v) => lit(v),
                IntClamp::Bounds { below, above } => {
                    let mut v = x.to_string();
                    if let Some(lo) = below {
                        let l = lit(lo);
                        v = format!("({v} < {l} ? {l} : {v})");
                    }
                    if let Some(hi) = above {
                        let h = lit(hi);
                        v = format!("({v} > {h} ? {h} : {v})");
                    }
                    v
                }
            })
        }
        (
            Rep::F32 | Rep::F64,
            UnaryParamOp::NanToNum {
                nan,
                posinf,
                neginf,
            },
        ) => {
            let ty = reg(r);
            let n = flit(stored_from_f64(nan, dt), r);
            let p = flit(stored_from_f64(posinf, dt), r);
            let m = flit(stored_from_f64(neginf, dt), r);
            Ok(format!(
                "({x} != {x} ? {n} : ({x} == lf_inf<{ty}>() ? {p} : ({x} == -lf_inf<{ty}>() ? {m} : {x})))"
            ))
        }
        (Rep::F32 | Rep::F64, _) => {
            // Parameters convert to the compute type as the interpreter's `c(...)`;
            // where it computes a parameter in the compute type, so does this.
            let f = |v: f64| flit(v, r);
            let out = match op {
                UnaryParamOp::NanToNum { .. } => unreachable!("matched above"),
                UnaryParamOp::Logit { eps } => match eps {
                    Some(e) if e >= 0.0 => {
                        let hi = if r == Rep::F64 {
                            1.0 - e
                        } else {
                            f64::from(1.0f32 - e as f32)
                        };
                        format!("lf_logit({x}, 1, {}, {})", f(e), f(hi))
                    }
                    _ => format!("lf_logit({x}, 0, {}, {})", f(0.0), f(1.0)),
                },
                UnaryParamOp::RoundDecimals { decimals } => {
                    let ten = 10f64.powf(decimals.unsigned_abs() as f64);
                    format!(
                        "lf_round_decimals({x}, {}, {})",
                        i32::from(decimals < 0),
                        f(ten)
                    )
                }
                UnaryParamOp::Gelu { tanh: false } => {
                    format!("lf_gelu({x}, {})", f(std::f64::consts::FRAC_1_SQRT_2))
                }
                UnaryParamOp::Gelu { tanh: true } => {
                    let beta = std::f64::consts::SQRT_2 * std::f64::consts::FRAC_2_SQRT_PI * 0.5;
                    format!("lf_gelu_tanh({x}, {}, {})", f(beta), f(0.044715))
                }
                UnaryParamOp::Softplus { beta, threshold } => {
                    format!("lf_softplus({x}, {}, {})", f(beta), f(threshold))
                }
                UnaryParamOp::Elu {
                    alpha,
                    scale,
                    input_scale,
                } => format!(
                    "lf_elu({x}, {}, {}, {})",
                    f(input_scale),
                    f(alpha * scale),
                    f(scale)
                ),
                UnaryParamOp::LeakyRelu { negative_slope } => {
                    format!("lf_leaky_relu({x}, {})", f(negative_slope))
                }
                UnaryParamOp::Hardtanh { min_val, max_val } => {
                    format!("lf_hardtanh({x}, {}, {})", f(min_val), f(max_val))
                }
            };
            Ok(round(out, dt))
        }
        _ => Err(unsupported(op.name(), dt)),
    }
}

pub(super) fn binary(op: BinaryOp, x: &str, y: &str, dt: DType) -> Result<String, CodegenError> {
    use BinaryOp::*;
    let r = rep(dt)?;
    let name = Op::Binary(op).name();
    Ok(match r {
        Rep::Bool => match op {
            Add | Maximum | LogicalOr | BitwiseOr | Fmax => format!("({x} || {y})"),
            Mul | Minimum | LogicalAnd | BitwiseAnd | Fmin => format!("({x} && {y})"),
            Eq => format!("({x} == {y})"),
            Ne | LogicalXor | BitwiseXor => format!("({x} != {y})"),
            Lt => format!("((int){x} < (int){y})"),
            Le => format!("((int){x} <= (int){y})"),
            Gt => format!("((int){x} > (int){y})"),
            Ge => format!("((int){x} >= (int){y})"),
            _ => return Err(unsupported(name, dt)),
        },
        Rep::Int { c, signed, bits } => match op {
            Add => format!("({c})((u64){x} + (u64){y})"),
            Sub => format!("({c})((u64){x} - (u64){y})"),
            Mul => format!("({c})((u64){x} * (u64){y})"),
            DivFloor | DivTrunc | Remainder | Fmod => {
                let kind = match op {
                    DivFloor => 0,
                    DivTrunc => 1,
                    Remainder => 2,
                    _ => 3,
                };
                let min = if signed {
                    ilit(-(1i128 << (bits - 1)), c)
                } else {
                    format!("({c})0")
                };
                format!(
                    "lf_idiv<{c}>({x}, {y}, {kind}, {min}, {}, status)",
                    i32::from(signed)
                )
            }
            Maximum | Fmax => format!("({x} < {y} ? {y} : {x})"),
            Minimum | Fmin => format!("({y} < {x} ? {y} : {x})"),
            Eq => format!("({x} == {y})"),
            Ne => format!("({x} != {y})"),
            Lt => format!("({x} < {y})"),
            Le => format!("({x} <= {y})"),
            Gt => format!("({x} > {y})"),
            Ge => format!("({x} >= {y})"),
            LogicalAnd => format!("({x} != 0 && {y} != 0)"),
            LogicalOr => format!("({x} != 0 || {y} != 0)"),
            LogicalXor => format!("(({x} != 0) != ({y} != 0))"),
            BitwiseAnd => format!("({c})({x} & {y})"),
            BitwiseOr => format!("({c})({x} | {y})"),
            BitwiseXor => format!("({c})({x} ^ {y})"),
            Pow => format!("lf_int_pow<{c}>({x}, {y})"),
            BitwiseLeftShift => format!("lf_shift_left<{c}>({x}, {y}, {bits})"),
            BitwiseRightShift => {
                format!(
                    "lf_shift_right<{c}>({x}, {y}, {bits}, {})",
                    i32::from(signed)
                )
            }
            Gcd => format!("lf_gcd<{c}>({x}, {y})"),
            Lcm => format!("lf_lcm<{c}>({x}, {y}, {bits})"),
            _ => return Err(unsupported(name, dt)),
        },
        Rep::F32 | Rep::F64 => {
            let ty = reg(r);
            let out = match op {
                Add => format!("({x} + {y})"),
                Sub => format!("({x} - {y})"),
                Mul => format!("({x} * {y})"),
                Div => format!("({x} / {y})"),
                DivTrunc => format!("lf_trunc({x} / {y})"),
                Maximum => format!("lf_maximum({x}, {y})"),
                Minimum => format!("lf_minimum({x}, {y})"),
                Eq => return Ok(format!("({x} == {y})")),
                Ne => return Ok(format!("({x} != {y})")),
                Lt => return Ok(format!("({x} < {y})")),
                Le => return Ok(format!("({x} <= {y})")),
                Gt => return Ok(format!("({x} > {y})")),
                Ge => return Ok(format!("({x} >= {y})")),
                LogicalAnd => return Ok(format!("({x} != ({ty})0 && {y} != ({ty})0)")),
                LogicalOr => return Ok(format!("({x} != ({ty})0 || {y} != ({ty})0)")),
                LogicalXor => return Ok(format!("(({x} != ({ty})0) != ({y} != ({ty})0))")),
                // On the stored type's bits: one function per dtype, no rounding after.
                Nextafter => {
                    let sfx = match dt {
                        DType::F16 => "f16",
                        DType::BF16 => "bf16",
                        DType::F32 => "f32",
                        _ => "f64",
                    };
                    return Ok(format!("lf_nextafter_{sfx}({x}, {y})"));
                }
                DivFloor | Remainder | Fmod | Pow | Atan2 | Fmax | Fmin | Hypot | Copysign
                | Logaddexp | Logaddexp2 | Xlogy => format!("lf_{name}({x}, {y})"),
                _ => return Err(unsupported(name, dt)),
            };
            round(out, dt)
        }
        Rep::F8 => return Err(unsupported(name, dt)),
    })
}

/// `x` of `from` converted to `to` with the interpreter's cast rules (the CPU
/// backend's `cast`).
pub(super) fn cast(x: &str, from: DType, to: DType) -> Result<String, CodegenError> {
    let (fr, tr) = (rep(from)?, rep(to)?);
    if from == to {
        return Ok(x.to_string());
    }
    if fr == Rep::F8 {
        let f = f8_decode(x, from);
        return cast(&f, DType::F32, to);
    }
    // An integer or bool value widened to 64 bits by its signedness.
    let wide = |x: &str| match fr {
        Rep::Int { signed: true, .. } => format!("(i64){x}"),
        _ => format!("(u64){x}"),
    };
    Ok(match tr {
        Rep::Bool => match fr {
            Rep::Bool => x.to_string(),
            Rep::Int { .. } => format!("({x} != 0)"),
            _ => format!("({x} != 0)"),
        },
        Rep::Int { c, .. } => match fr {
            Rep::Bool | Rep::Int { .. } => format!("({c}){}", wide(x)),
            Rep::F32 | Rep::F64 if to == DType::U64 => format!("lf_f2u64({x})"),
            Rep::F32 | Rep::F64 => format!("({c})lf_f2i64({x})"),
            Rep::F8 => unreachable!("decoded above"),
        },
        Rep::F32 | Rep::F64 | Rep::F8 => {
            let target = if tr == Rep::F64 { "double" } else { "float" };
            let f = match fr {
                Rep::Bool | Rep::Int { .. } => format!("({target}){}", wide(x)),
                _ => format!("({target}){x}"),
            };
            if tr == Rep::F8 {
                f8_encode(&f, to)
            } else {
                round(f, to)
            }
        }
    })
}
