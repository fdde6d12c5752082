//! Dtype rules of the binary ops (promotion, then PyTorch's input and kernel
//! checks, the binary math ops' kernel tables included), their in-place forms, and
//! `where`.

use super::{computable, inplace, is_integral, Signature};
use crate::dtype::{Category, DType};
use crate::error::{Error, Result};
use crate::op::BinaryOp;
use crate::promote::{result_type, OperandType, Priority};

pub(super) const SUB_ONE_BOOL: &str = "Subtraction, the `-` operator, with a bool tensor is not supported. If you are trying to invert a mask, use the `~` or `logical_not()` operator instead.";

pub(super) const SUB_TWO_BOOLS: &str = "Subtraction, the `-` operator, with two bool tensors is not supported. Use the `^` or `logical_xor()` operator instead.";

/// PyTorch's checks on a binary op's *input* dtypes, made before any promotion.
pub(super) fn check_binary_inputs(op: BinaryOp, a: OperandType, b: OperandType) -> Result<()> {
    match op {
        BinaryOp::Sub => {
            let (x, y) = (a.dtype == DType::Bool, b.dtype == DType::Bool);
            if x && y {
                return Err(Error::invalid("sub", SUB_TWO_BOOLS));
            }
            if x || y {
                return Err(Error::invalid("sub", SUB_ONE_BOOL));
            }
        }
        BinaryOp::Maximum | BinaryOp::Minimum if a.dtype.is_complex() || b.dtype.is_complex() => {
            let name = if op == BinaryOp::Maximum {
                "maximum"
            } else {
                "minimum"
            };
            return Err(Error::invalid(
                name,
                format!("{name} not implemented for complex tensors."),
            ));
        }
        BinaryOp::Fmax | BinaryOp::Fmin if a.dtype.is_complex() || b.dtype.is_complex() => {
            let name = if op == BinaryOp::Fmax { "fmax" } else { "fmin" };
            return Err(Error::invalid(
                name,
                format!("{name} not implemented for complex tensors."),
            ));
        }
        _ => {}
    }
    Ok(())
}

/// The signature of a binary op whose operands promote to `common`.
pub(super) fn binary_signature(op: BinaryOp, common: DType, default_float: DType) -> Signature {
    match op {
        // True division and atan2 lift bool/integer inputs to the default float.
        BinaryOp::Div | BinaryOp::Atan2 if is_integral(common) => Signature::same(default_float),
        // PyTorch builds these as "float ops" too (`build_borrowing_binary_float_op`).
        BinaryOp::Copysign | BinaryOp::Xlogy if is_integral(common) => {
            Signature::same(default_float)
        }
        _ if op.is_predicate() => Signature {
            compute: common,
            output: DType::Bool,
        },
        _ => Signature::same(common),
    }
}

/// The dtype support of a binary op's kernel. `flipped` is true when only the left
/// operand is a host scalar: PyTorch then evaluates `s < t` as `t > s`, and its error
/// names the mirrored kernel. `scalar_exponent` is true when the right operand is a
/// host scalar: a bool-typed `pow` then only meets a `False`/`True` exponent, which
/// PyTorch answers with `fill_(1)`/`copy_` without reaching the kernel.
pub(super) fn check_binary_kernel(
    op: BinaryOp,
    compute: DType,
    flipped: bool,
    scalar_exponent: bool,
) -> Result<()> {
    use BinaryOp::*;
    let cat = compute.category();
    let complex = cat == Category::Complex;
    let bool_ = cat == Category::Bool;
    let refuse = |kernel: &str| Err(Error::not_implemented(kernel, compute));
    match op {
        Add | Sub if compute == DType::BC32 => return refuse("add_stub"),
        Mul if compute == DType::BC32 => return refuse("mul_cpu"),
        // The data shows ComplexHalf; bcomplex32 is outside the same dispatch list.
        Div if matches!(compute, DType::C32 | DType::BC32) => return refuse("div_cpu"),
        DivFloor if bool_ || complex => return refuse("div_floor_cpu"),
        DivTrunc if bool_ || complex => return refuse("div_trunc_cpu"),
        Remainder if bool_ || complex => return refuse("remainder_cpu"),
        Fmod if bool_ || complex => return refuse("fmod_cpu"),
        Pow if (bool_ && !scalar_exponent) || matches!(compute, DType::C32 | DType::BC32) => {
            return refuse("pow")
        }
        Atan2 if complex => return refuse("atan2_cpu"),
        Lt | Le | Gt | Ge if complex => {
            let mirrored = match (op, flipped) {
                (Lt, false) | (Gt, true) => "lt_cpu",
                (Le, false) | (Ge, true) => "le_cpu",
                (Gt, false) | (Lt, true) => "gt_cpu",
                _ => "ge_cpu",
            };
            return refuse(mirrored);
        }
        BitwiseAnd | BitwiseOr | BitwiseXor if cat >= Category::Floating => {
            return refuse(match op {
                BitwiseAnd => "bitwise_and_cpu",
                BitwiseOr => "bitwise_or_cpu",
                _ => "bitwise_xor_cpu",
            })
        }
        // PyTorch compares in complex32/bcomplex32; the facade does it exactly in
        // complex64 after rounding host scalars to the half type's parts.
        Eq | Ne if matches!(compute, DType::C32 | DType::BC32) => return Ok(()),
        // complex32 add/sub/mul: c10's complex<Half> computes through complex<float>,
        // and so does the facade
        Add | Sub | Mul if compute == DType::C32 => return Ok(()),
        _ => {}
    }
    check_binary_math_kernel(op, compute)
}

/// [`check_binary_kernel`] for the binary math ops (`fmax` … `lcm`): the dtypes
/// each CPU kernel dispatches, with PyTorch's kernel names.
pub(super) fn check_binary_math_kernel(op: BinaryOp, compute: DType) -> Result<()> {
    use BinaryOp::*;
    let cat = compute.category();
    let real_float = cat == Category::Floating;
    let integer = cat == Category::Integer;
    let refuse = |kernel: &str| Err(Error::not_implemented(kernel, compute));
    match op {
        Hypot if !real_float => refuse("hypot_cpu"),
        Copysign if cat == Category::Complex => refuse("copysign_cpu"),
        Logaddexp if !(real_float || matches!(compute, DType::C64 | DType::C128)) => {
            refuse("logaddexp_cpu")
        }
        Logaddexp2 if !real_float => refuse("logaddexp2_cpu"),
        Xlogy if cat == Category::Complex => refuse("xlogy_cpu"),
        Nextafter if !real_float => refuse("nextafter_cpu"),
        BitwiseLeftShift if !integer => refuse("lshift_cpu"),
        BitwiseRightShift if !integer => refuse("rshift_cpu"),
        Gcd if !integer => refuse("gcd_cpu"),
        Lcm if !integer => refuse("lcm_cpu"),
        _ => computable(compute),
    }
}

/// The signature of `op(a, b)`: promotion by [`result_type`], then the op's own rules.
///
/// True division and `atan2` of bool/integer operands compute in `default_float`;
/// comparisons and logical ops output `bool`. Errors are PyTorch's: `sub` with a bool
/// operand, `maximum`/`minimum` of complex, promotion errors, and dtypes an op refuses
/// (`"bitwise_and_cpu" not implemented for 'Float'`, …). Value-dependent errors
/// (integer division by a zero scalar, integers to negative scalar powers) are not
/// decided here; nor is PyTorch's `1 ** t` short cut (a host-scalar base equal to 1
/// fills ones without the kernel, so e.g. `1 ** bool_tensor` succeeds there while
/// this returns `"pow" not implemented for 'Bool'`).
///
/// ```
/// use lazyfuse_ir::typing::{binary, Signature};
/// use lazyfuse_ir::promote::OperandType;
/// use lazyfuse_ir::{BinaryOp, DType};
/// let t = OperandType::dimensioned;
/// let sig = binary(BinaryOp::Div, t(DType::I32), t(DType::I64), DType::F32).unwrap();
/// assert_eq!(sig, Signature { compute: DType::F32, output: DType::F32 });
/// let sig = binary(BinaryOp::Lt, t(DType::U8), OperandType::wrapped(DType::F64), DType::F32).unwrap();
/// assert_eq!((sig.compute, sig.output), (DType::F32, DType::Bool));
/// let err = binary(BinaryOp::BitwiseAnd, t(DType::F32), t(DType::I8), DType::F32).unwrap_err();
/// assert_eq!(err.to_string(), "\"bitwise_and_cpu\" not implemented for 'Float'");
/// ```
pub fn binary(
    op: BinaryOp,
    a: OperandType,
    b: OperandType,
    default_float: DType,
) -> Result<Signature> {
    check_binary_inputs(op, a, b)?;
    let common = result_type(&[a, b], default_float)?;
    let sig = binary_signature(op, common, default_float);
    let flipped = a.priority == Priority::Wrapped && b.priority != Priority::Wrapped;
    check_binary_kernel(op, sig.compute, flipped, b.priority == Priority::Wrapped)?;
    Ok(sig)
}

/// The signature of the in-place `dest.op_(other)`, checked in PyTorch's order: input
/// checks, promotion, the cast of the result back to `dest` ([`inplace`]), then the
/// kernel. The node computes `op` in `compute`, and the facade casts `output` to
/// `dest.dtype` when they differ. Shapes are checked by
/// [`broadcast::inplace_shape`](crate::broadcast::inplace_shape), before this.
///
/// ```
/// use lazyfuse_ir::typing::binary_inplace;
/// use lazyfuse_ir::promote::OperandType;
/// use lazyfuse_ir::{BinaryOp, DType};
/// let t = OperandType::dimensioned;
/// let err = binary_inplace(BinaryOp::Div, t(DType::I32), t(DType::I32), DType::F32).unwrap_err();
/// assert_eq!(err.to_string(), "result type Float can't be cast to the desired output type Int");
/// ```
pub fn binary_inplace(
    op: BinaryOp,
    dest: OperandType,
    other: OperandType,
    default_float: DType,
) -> Result<Signature> {
    check_binary_inputs(op, dest, other)?;
    let common = result_type(&[dest, other], default_float)?;
    let sig = binary_signature(op, common, default_float);
    inplace(sig.output, dest.dtype)?;
    check_binary_kernel(op, sig.compute, false, other.priority == Priority::Wrapped)?;
    Ok(sig)
}

/// The dtype of `where(cond, a, b)`: the promotion of `a` and `b` (`cond` is bool and
/// takes no part). `where` only selects elements, so float8 (storage only) is allowed,
/// as PyTorch's `where` kernel allows it.
///
/// ```
/// use lazyfuse_ir::{typing::where_, promote::OperandType, DType};
/// let r = where_(OperandType::wrapped(DType::I64), OperandType::wrapped(DType::F64), DType::F32);
/// assert_eq!(r.unwrap(), DType::F32);
/// let f8 = OperandType::dimensioned(DType::F8E5M2);
/// assert_eq!(where_(f8, OperandType::wrapped(DType::F64), DType::F32).unwrap(), DType::F8E5M2);
/// ```
pub fn where_(a: OperandType, b: OperandType, default_float: DType) -> Result<DType> {
    let common = result_type(&[a, b], default_float)?;
    // a selection moves float8 codes and half-complex values without arithmetic
    if !common.is_float8() && !matches!(common, DType::C32 | DType::BC32) {
        computable(common)?;
    }
    Ok(common)
}
