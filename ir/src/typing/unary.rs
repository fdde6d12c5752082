//! Dtype rules of the unary ops: arithmetic, math functions, predicates and
//! activations, the ops with host-number parameters, and PyTorch's own refusals of
//! unary kernels for the half complex types.

use super::clamp::CLAMP_COMPLEX;
use super::{computable, is_integral, Signature};
use crate::dtype::{Category, DType};
use crate::error::{Error, Result};
use crate::op::{UnaryOp, UnaryParamOp};

pub(super) const NEG_BOOL: &str = "Negation, the `-` operator, on a bool tensor is not supported. If you are trying to invert a mask, use the `~` or `logical_not()` operator instead.";

pub(super) const SIGN_COMPLEX: &str = "Unlike NumPy, torch.sign is not intended to support complex numbers. Please use torch.sgn instead.";

/// The signature of an elementwise unary op on `dtype`.
///
/// Floating functions (`exp`, `log`, `sqrt`, `rsqrt`, `sin`, `cos`, `tanh`,
/// `sigmoid`, `reciprocal`) lift bool/integers to `default_float`; `isnan` and
/// `logical_not` output `bool`; `abs` of complex outputs the real dtype; rounding ops
/// are the identity on integers. Refusals are PyTorch's (`neg` of bool, `sign` of
/// complex, `bitwise_not` of floats, …).
///
/// ```
/// use lazyfuse_ir::typing::unary;
/// use lazyfuse_ir::{DType, UnaryOp};
/// assert_eq!(unary(UnaryOp::Exp, DType::I16, DType::F32).unwrap().output, DType::F32);
/// assert_eq!(unary(UnaryOp::Abs, DType::C128, DType::F32).unwrap().output, DType::F64);
/// assert!(unary(UnaryOp::Neg, DType::Bool, DType::F32).is_err());
/// ```
pub fn unary(op: UnaryOp, dtype: DType, default_float: DType) -> Result<Signature> {
    use UnaryOp::*;
    let cat = dtype.category();
    let complex = cat == Category::Complex;
    let bool_ = cat == Category::Bool;
    if let Some(sig) = unary_math(op, dtype, default_float) {
        return sig;
    }
    let refuse = |kernel: &str| Err(Error::not_implemented(kernel, dtype));
    let sig = match op {
        Neg if bool_ => return Err(Error::invalid("neg", NEG_BOOL)),
        Abs if bool_ => return refuse("abs_cpu"),
        Abs => Signature {
            compute: dtype,
            output: dtype.to_real(),
        },
        Sign if complex => return Err(Error::invalid("sign", SIGN_COMPLEX)),
        Exp | Log | Sqrt | Rsqrt | Sin | Cos | Tanh | Sigmoid | Reciprocal
            if is_integral(dtype) =>
        {
            Signature::same(default_float)
        }
        Relu if bool_ => {
            return Err(Error::invalid(
                "relu",
                "Boolean inputs not supported for relu",
            ))
        }
        Relu if complex => return Err(Error::invalid("relu", CLAMP_COMPLEX)),
        Floor | Ceil | Trunc => {
            let name = match op {
                Floor => "floor",
                Ceil => "ceil",
                _ => "trunc",
            };
            if bool_ {
                return refuse(&format!("{name}_vml_cpu"));
            }
            if complex {
                return Err(Error::invalid(
                    name,
                    format!("{name} is not supported for complex inputs"),
                ));
            }
            Signature::same(dtype)
        }
        Round if bool_ || complex => return refuse("round_vml_cpu"),
        BitwiseNot if cat >= Category::Floating => return refuse("bitwise_not_cpu"),
        LogicalNot | IsNan => Signature {
            compute: dtype,
            output: DType::Bool,
        },
        _ => Signature::same(dtype),
    };
    half_complex_unary(op, sig.compute)?;
    // complex32 neg, abs and isnan: computed through complex64 by the facade
    if sig.compute == DType::C32 && matches!(op, Neg | Abs | IsNan) {
        return Ok(sig);
    }
    computable(sig.compute)?;
    Ok(sig)
}

/// The half-precision complex dtypes, which lazyfuse stores but does not compute in.
pub(super) fn is_half_complex(dtype: DType) -> bool {
    matches!(dtype, DType::C32 | DType::BC32)
}

/// The kernel name PyTorch's CPU dispatch of each unary math op prints in its
/// "not implemented for" errors.
pub(super) fn kernel_name(op: UnaryOp) -> &'static str {
    use UnaryOp::*;
    match op {
        Sgn => "sign_cpu",
        Square => "pow",
        Exp2 => "exp2",
        Expm1 => "expm1_vml_cpu",
        Log2 => "log2_vml_cpu",
        Log10 => "log10_vml_cpu",
        Log1p => "log1p_vml_cpu",
        Tan => "tan_vml_cpu",
        Asin => "asin_vml_cpu",
        Acos => "acos_vml_cpu",
        Atan => "atan_vml_cpu",
        Sinh => "sinh_cpu",
        Cosh => "cosh_cpu",
        Asinh => "asinh_cpu",
        Acosh => "acosh_cpu",
        Atanh => "atanh_cpu",
        Erf => "erf_vml_cpu",
        Erfc => "erfc_vml_cpu",
        Erfinv => "erfinv_vml_cpu",
        Frac => "frac_cpu",
        Silu => "silu_cpu",
        Mish => "mish_cpu",
        Hardsigmoid => "hardsigmoid_cpu",
        Hardswish => "hardswish_cpu",
        _ => "",
    }
}

/// The rules of the unary math ops (`None` for the arithmetic ones, which
/// [`unary`] handles itself).
///
/// - Floating functions (`exp2` … `atanh`, `erf`, `erfc`, `erfinv`) lift bool and
///   integers to `default_float`; `erf`/`erfc`/`erfinv` refuse complex.
/// - `square` is PyTorch's `pow(x, 2)`: bool computes in `int64`.
/// - `frac` and the activations `silu`, `mish`, `hardsigmoid`, `hardswish` accept
///   floating inputs only (`silu` also complex), naming their kernel.
/// - The predicates output bool for every dtype; `isposinf`, `isneginf` and
///   `signbit` refuse complex with PyTorch's messages.
/// - complex32/bcomplex32: PyTorch's refusal where it has one, else unsupported.
pub(super) fn unary_math(
    op: UnaryOp,
    dtype: DType,
    default_float: DType,
) -> Option<Result<Signature>> {
    use UnaryOp::*;
    let cat = dtype.category();
    let complex = cat == Category::Complex;
    let refuse = || Err(Error::not_implemented(kernel_name(op), dtype));
    let floating = cat == Category::Floating;
    let sig = match op {
        // PyTorch computes sgn in complex32 but has no bcomplex32 kernel.
        Sgn if dtype == DType::BC32 => return Some(Err(Error::not_implemented("sgn_cpu", dtype))),
        Sgn => Signature::same(dtype),
        Square if dtype == DType::Bool => Signature::same(DType::I64),
        Square if is_half_complex(dtype) => return Some(refuse()),
        Square => Signature::same(dtype),
        Exp2 | Expm1 | Log2 | Log10 | Log1p | Tan | Asin | Acos | Atan | Sinh | Cosh | Asinh
        | Acosh | Atanh => {
            if is_half_complex(dtype) {
                return Some(refuse());
            }
            if is_integral(dtype) {
                Signature::same(default_float)
            } else {
                Signature::same(dtype)
            }
        }
        Erf | Erfc | Erfinv => {
            if complex {
                return Some(refuse());
            }
            if is_integral(dtype) {
                Signature::same(default_float)
            } else {
                Signature::same(dtype)
            }
        }
        Silu if complex && !is_half_complex(dtype) => Signature::same(dtype),
        Frac | Silu | Mish | Hardsigmoid | Hardswish => {
            if !floating {
                return Some(refuse());
            }
            Signature::same(dtype)
        }
        IsPosInf | IsNegInf if complex => {
            let name = if op == IsPosInf {
                "isposinf"
            } else {
                "isneginf"
            };
            return Some(Err(Error::invalid(
                name,
                format!("{name} does not support complex inputs."),
            )));
        }
        Signbit if complex => {
            return Some(Err(Error::invalid(
                "signbit",
                "signbit is not implemented for complex tensors.",
            )))
        }
        IsInf | IsPosInf | IsNegInf | IsFinite | IsReal | Signbit => Signature {
            compute: dtype,
            output: DType::Bool,
        },
        _ => return None,
    };
    // complex32 predicates: computed exactly through complex64 by the facade
    if dtype == DType::C32 && matches!(op, IsInf | IsFinite | IsReal) {
        return Some(Ok(sig));
    }
    Some(computable(sig.compute).map(|()| sig))
}

/// Checks `positive` (PyTorch's unary `+`, which returns its input itself): refused
/// for bool only.
///
/// ```
/// use lazyfuse_ir::{typing::positive, DType};
/// assert!(positive(DType::C32).is_ok());
/// assert_eq!(
///     positive(DType::Bool).unwrap_err().to_string(),
///     "The `+` operator, on a bool tensor is not supported."
/// );
/// ```
pub fn positive(dtype: DType) -> Result<()> {
    if dtype == DType::Bool {
        return Err(Error::invalid(
            "positive",
            "The `+` operator, on a bool tensor is not supported.",
        ));
    }
    Ok(())
}

/// The signature of a unary op with parameters ([`UnaryParamOp`]) on `dtype`.
///
/// - `nan_to_num` keeps every dtype (the identity on bool and integers); refused for
///   complex32 (`"nan_to_num"`).
/// - `logit` lifts bool/integers to `default_float`, refuses complex (`"logit_cpu"`).
/// - `round_decimals` accepts real floating inputs only (`"round_cpu"`;
///   `decimals == 0` is plain `round`, whose kernel is `"round_vml_cpu"`).
/// - `gelu`, `softplus`, `elu`, `leaky_relu` accept real floating inputs only, naming
///   their kernel; `hardtanh` (and `relu6`) also integers, refusing bool and complex
///   with PyTorch's texts.
///
/// ```
/// use lazyfuse_ir::{typing::unary_param, DType, UnaryParamOp};
/// let logit = UnaryParamOp::Logit { eps: None };
/// assert_eq!(unary_param(logit, DType::U8, DType::F32).unwrap().output, DType::F32);
/// let gelu = UnaryParamOp::Gelu { tanh: false };
/// let err = unary_param(gelu, DType::I64, DType::F32).unwrap_err();
/// assert_eq!(err.to_string(), "\"GeluKernelImpl\" not implemented for 'Long'");
/// ```
pub fn unary_param(op: UnaryParamOp, dtype: DType, default_float: DType) -> Result<Signature> {
    let cat = dtype.category();
    let floating = cat == Category::Floating;
    let refuse = |kernel: &str| Err(Error::not_implemented(kernel, dtype));
    let sig = match op {
        UnaryParamOp::NanToNum { .. } if is_half_complex(dtype) => return refuse("nan_to_num"),
        UnaryParamOp::NanToNum { .. } => Signature::same(dtype),
        UnaryParamOp::Logit { .. } if cat == Category::Complex => return refuse("logit_cpu"),
        UnaryParamOp::Logit { .. } if is_integral(dtype) => Signature::same(default_float),
        UnaryParamOp::Logit { .. } => Signature::same(dtype),
        UnaryParamOp::RoundDecimals { decimals } if !floating => {
            return refuse(if decimals == 0 {
                "round_vml_cpu"
            } else {
                "round_cpu"
            })
        }
        UnaryParamOp::Hardtanh { .. } if dtype == DType::Bool => {
            return Err(Error::invalid(
                "hardtanh",
                "Bool inputs not supported for hardtanh",
            ))
        }
        UnaryParamOp::Hardtanh { .. } if cat == Category::Complex => {
            return Err(Error::invalid("hardtanh", CLAMP_COMPLEX))
        }
        UnaryParamOp::Gelu { .. } if !floating => return refuse("GeluKernelImpl"),
        UnaryParamOp::Softplus { .. } if !floating => return refuse("softplus_cpu"),
        UnaryParamOp::Elu { .. } if !floating => return refuse("elu_cpu"),
        UnaryParamOp::LeakyRelu { .. } if !floating => return refuse("leaky_relu_cpu"),
        _ => Signature::same(dtype),
    };
    computable(sig.compute)?;
    Ok(sig)
}

// ---- complex32/bcomplex32: PyTorch's own refusals ----
//
// complex32 and bcomplex32 are storage-only in lazyfuse (`computable` says
// `Unsupported`), but where PyTorch itself has no kernel for them its error is the
// answer, not "unsupported". The tables below are PyTorch 2.15's CPU kernels, checked
// one by one: complex32 computes `neg`, `abs`, `isnan`, `add`/`sub`/`mul`, `eq`/`ne`,
// `where`, `var`/`std` (lazyfuse: `Unsupported`); bcomplex32 only `isnan`, `eq`/`ne`,
// `where`, `var`/`std`.

/// PyTorch's refusal of a unary kernel for the half complex types, if it has one.
pub(super) fn half_complex_unary(op: UnaryOp, dtype: DType) -> Result<()> {
    use UnaryOp::*;
    if !is_half_complex(dtype) {
        return Ok(());
    }
    let kernel = match op {
        Exp => "exp_vml_cpu",
        Log => "log_vml_cpu",
        Sqrt => "sqrt_vml_cpu",
        Sin => "sin_vml_cpu",
        Cos => "cos_vml_cpu",
        Tanh => "tanh_vml_cpu",
        Rsqrt => "rsqrt_cpu",
        Sigmoid => "sigmoid_cpu",
        Reciprocal => "reciprocal_cpu",
        LogicalNot => "logical_not_cpu",
        Round => "round_vml_cpu",
        Neg if dtype == DType::BC32 => "neg_cpu",
        Abs if dtype == DType::BC32 => "abs_cpu",
        _ => return Ok(()),
    };
    Err(Error::not_implemented(kernel, dtype))
}

#[cfg(test)]
mod unary_math_tests {
    use super::*;

    #[test]
    fn float_functions_lift_integers_and_refuse_half_complex() {
        let sig = unary(UnaryOp::Log1p, DType::U64, DType::F64).unwrap();
        assert_eq!((sig.compute, sig.output), (DType::F64, DType::F64));
        let err = unary(UnaryOp::Expm1, DType::C32, DType::F32).unwrap_err();
        assert_eq!(
            err.to_string(),
            "\"expm1_vml_cpu\" not implemented for 'ComplexHalf'"
        );
        assert!(unary(UnaryOp::Sgn, DType::C32, DType::F32)
            .unwrap_err()
            .is_unsupported());
        let err = unary(UnaryOp::Sgn, DType::BC32, DType::F32).unwrap_err();
        assert_eq!(
            err.to_string(),
            "\"sgn_cpu\" not implemented for 'BComplex32'"
        );
        let err = unary(UnaryOp::Square, DType::BC32, DType::F32).unwrap_err();
        assert_eq!(err.to_string(), "\"pow\" not implemented for 'BComplex32'");
        let err = unary(UnaryOp::Erf, DType::C64, DType::F32).unwrap_err();
        assert_eq!(
            err.to_string(),
            "\"erf_vml_cpu\" not implemented for 'ComplexFloat'"
        );
    }

    #[test]
    fn square_of_bool_is_int64_and_predicates_are_bool() {
        let sig = unary(UnaryOp::Square, DType::Bool, DType::F32).unwrap();
        assert_eq!((sig.compute, sig.output), (DType::I64, DType::I64));
        let sig = unary(UnaryOp::IsFinite, DType::C128, DType::F32).unwrap();
        assert_eq!(sig.output, DType::Bool);
        let err = unary(UnaryOp::IsNegInf, DType::C64, DType::F32).unwrap_err();
        assert_eq!(err.to_string(), "isneginf does not support complex inputs.");
        let err = unary(UnaryOp::Frac, DType::I8, DType::F32).unwrap_err();
        assert_eq!(err.to_string(), "\"frac_cpu\" not implemented for 'Char'");
    }

    #[test]
    fn parameterised_ops() {
        let rd = |d| UnaryParamOp::RoundDecimals { decimals: d };
        let err = unary_param(rd(2), DType::I32, DType::F32).unwrap_err();
        assert_eq!(err.to_string(), "\"round_cpu\" not implemented for 'Int'");
        let err = unary_param(rd(0), DType::I32, DType::F32).unwrap_err();
        assert_eq!(
            err.to_string(),
            "\"round_vml_cpu\" not implemented for 'Int'"
        );
        let ht = UnaryParamOp::Hardtanh {
            min_val: 0.0,
            max_val: 6.0,
        };
        assert_eq!(
            unary_param(ht, DType::U8, DType::F32).unwrap().output,
            DType::U8
        );
        let err = unary_param(ht, DType::C64, DType::F32).unwrap_err();
        assert_eq!(err.to_string(), CLAMP_COMPLEX);
        let n = UnaryParamOp::NanToNum {
            nan: 0.0,
            posinf: 1.0,
            neginf: -1.0,
        };
        assert_eq!(
            unary_param(n, DType::I16, DType::F32).unwrap().output,
            DType::I16
        );
    }
}
