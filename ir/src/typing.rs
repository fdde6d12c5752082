//! Per-op dtype rules, decided when a node is built.
//!
//! Each function takes the operands' dtypes (and, for binary ops, their promotion
//! priorities) and returns the op's [`Signature`]: the dtype the inputs are cast to
//! before the op (`compute`) and the dtype of the node (`output`), or the error
//! PyTorch raises for those dtypes, with PyTorch's text.
//!
//! The order of the checks follows PyTorch's, so that when several things are wrong
//! the same error wins: op-specific input checks (`sub` with bool, `maximum` of
//! complex), then promotion, then (in-place) the cast back to the destination, then
//! the kernel's dtype support.
//!
//! Two deliberate differences from PyTorch:
//! - `uint16`/`uint32`/`uint64`: where promotion succeeds but PyTorch has no CPU
//!   kernel (`"add_stub" not implemented for 'UInt64'`, `"abs_cpu" … 'UInt16'`), lazyfuse
//!   computes anyway, in the dtype PyTorch's promotion gives. Promotion errors stay.
//! - `complex32`, `bcomplex32` and the float8 dtypes are storage-only here: computing
//!   in them is [`Error::Unsupported`], except where PyTorch itself refuses the op for
//!   that dtype, in which case PyTorch's error is returned.

use crate::dtype::{Category, DType};
use crate::error::{Error, Result};
use crate::op::{ArgReduceOp, BinaryOp, ReduceOp, UnaryOp};
use crate::promote::{can_cast, result_type, OperandType, Priority};

/// The dtypes of one op application.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Signature {
    /// The dtype every input is cast to before the op runs.
    pub compute: DType,
    /// The dtype of the op's result (the node's dtype).
    pub output: DType,
}

impl Signature {
    /// Compute and output in one dtype.
    fn same(dtype: DType) -> Self {
        Signature {
            compute: dtype,
            output: dtype,
        }
    }
}

const SUB_ONE_BOOL: &str = "Subtraction, the `-` operator, with a bool tensor is not supported. If you are trying to invert a mask, use the `~` or `logical_not()` operator instead.";
const SUB_TWO_BOOLS: &str = "Subtraction, the `-` operator, with two bool tensors is not supported. Use the `^` or `logical_xor()` operator instead.";
const NEG_BOOL: &str = "Negation, the `-` operator, on a bool tensor is not supported. If you are trying to invert a mask, use the `~` or `logical_not()` operator instead.";
const SIGN_COMPLEX: &str = "Unlike NumPy, torch.sign is not intended to support complex numbers. Please use torch.sgn instead.";
const CLAMP_COMPLEX: &str = "clamp is not supported for complex types";
const STD_VAR_DTYPE: &str = "std and var only support floating point and complex dtypes";

/// Refuses computing in a storage-only dtype (lazyfuse has no kernels for them).
fn computable(dtype: DType) -> Result<()> {
    match dtype {
        DType::C32 => Err(Error::Unsupported("complex32 arithmetic".into())),
        DType::BC32 => Err(Error::Unsupported("bcomplex32 arithmetic".into())),
        d if d.is_float8() => Err(Error::Unsupported(format!("{d} arithmetic"))),
        _ => Ok(()),
    }
}

/// True for bool and the integers: the dtypes "integer to float" ops lift to the
/// default float dtype.
fn is_integral(dtype: DType) -> bool {
    dtype.category() <= Category::Integer
}

/// PyTorch's checks on a binary op's *input* dtypes, made before any promotion.
fn check_binary_inputs(op: BinaryOp, a: OperandType, b: OperandType) -> Result<()> {
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
        _ => {}
    }
    Ok(())
}

/// The signature of a binary op whose operands promote to `common`.
fn binary_signature(op: BinaryOp, common: DType, default_float: DType) -> Signature {
    match op {
        // True division and atan2 lift bool/integer inputs to the default float.
        BinaryOp::Div | BinaryOp::Atan2 if is_integral(common) => Signature::same(default_float),
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
fn check_binary_kernel(
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
        _ => {}
    }
    computable(compute)
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
    computable(sig.compute)?;
    Ok(sig)
}

/// The signature of a reduction of `dtype`.
///
/// `sum`/`prod` of bool or integers compute and output `int64`; `mean`, `var`, `std`
/// accept only floating and complex inputs; `var`/`std` of complex output the real
/// dtype; `amax`/`amin` refuse complex. (`default_float` is unused by today's rules;
/// it is taken so that callers need not know which reductions lift integers.)
///
/// ```
/// use lazyfuse_ir::typing::reduce;
/// use lazyfuse_ir::{DType, ReduceOp};
/// assert_eq!(reduce(ReduceOp::Sum, DType::Bool, DType::F32).unwrap().output, DType::I64);
/// let var = ReduceOp::Var { correction: 1 };
/// assert_eq!(reduce(var, DType::C64, DType::F32).unwrap().output, DType::F32);
/// assert!(reduce(ReduceOp::Mean, DType::I32, DType::F32).is_err());
/// ```
pub fn reduce(op: ReduceOp, dtype: DType, default_float: DType) -> Result<Signature> {
    let _ = default_float;
    let cat = dtype.category();
    let float_or_complex = cat >= Category::Floating;
    let sig = match op {
        ReduceOp::Sum | ReduceOp::Prod if is_integral(dtype) => Signature::same(DType::I64),
        ReduceOp::Mean if !float_or_complex => {
            return Err(Error::invalid(
                "mean",
                format!(
                    "mean(): could not infer output dtype. Input dtype must be either a floating point or complex dtype. Got: {}",
                    dtype.torch_name()
                ),
            ))
        }
        ReduceOp::Var { .. } | ReduceOp::Std { .. } => {
            if !float_or_complex {
                let name = if matches!(op, ReduceOp::Var { .. }) {
                    "var"
                } else {
                    "std"
                };
                return Err(Error::invalid(name, STD_VAR_DTYPE));
            }
            Signature {
                compute: dtype,
                output: dtype.to_real(),
            }
        }
        ReduceOp::Amax if cat == Category::Complex => {
            return Err(Error::not_implemented("max_values_cpu", dtype))
        }
        ReduceOp::Amin if cat == Category::Complex => {
            return Err(Error::not_implemented("min_values_cpu", dtype))
        }
        _ => Signature::same(dtype),
    };
    half_complex_reduce(op, sig.compute)?;
    computable(sig.compute)?;
    Ok(sig)
}

/// Checks that `argmax`/`argmin` accept `dtype` (bool and complex are refused, with
/// PyTorch's text). The output is always `int64`.
///
/// ```
/// use lazyfuse_ir::typing::arg_reduce;
/// use lazyfuse_ir::{ArgReduceOp, DType};
/// assert!(arg_reduce(ArgReduceOp::ArgMax, DType::F16).is_ok());
/// let err = arg_reduce(ArgReduceOp::ArgMin, DType::Bool).unwrap_err();
/// assert_eq!(err.to_string(), "argmin(): does not support bool input");
/// ```
pub fn arg_reduce(op: ArgReduceOp, dtype: DType) -> Result<()> {
    let name = match op {
        ArgReduceOp::ArgMax => "argmax",
        ArgReduceOp::ArgMin => "argmin",
    };
    match dtype.category() {
        Category::Bool => Err(Error::invalid(
            name,
            format!("{name}(): does not support bool input"),
        )),
        Category::Complex => Err(Error::invalid(
            name,
            format!("{name}(): does not support complex input"),
        )),
        _ => computable(dtype),
    }
}

/// The signature of `cumsum`: bool and integers accumulate in `int64`.
///
/// ```
/// use lazyfuse_ir::{typing::cumsum, DType};
/// assert_eq!(cumsum(DType::U8).unwrap().output, DType::I64);
/// assert_eq!(cumsum(DType::BF16).unwrap().output, DType::BF16);
/// ```
pub fn cumsum(dtype: DType) -> Result<Signature> {
    let sig = if is_integral(dtype) {
        Signature::same(DType::I64)
    } else {
        Signature::same(dtype)
    };
    if is_half_complex(sig.compute) {
        return Err(Error::not_implemented("cumsum_out_cpu", sig.compute));
    }
    computable(sig.compute)?;
    Ok(sig)
}

/// The signature of `softmax` (`log`: `log_softmax`) along the last dim: real floating
/// inputs only, no lifting of integers (PyTorch's text names the kernel).
///
/// ```
/// use lazyfuse_ir::{typing::softmax, DType};
/// assert_eq!(softmax(DType::F16, false).unwrap().output, DType::F16);
/// let err = softmax(DType::I64, false).unwrap_err();
/// assert_eq!(err.to_string(), "\"softmax_lastdim_kernel_impl\" not implemented for 'Long'");
/// ```
pub fn softmax(dtype: DType, log: bool) -> Result<Signature> {
    softmax_along(dtype, log, true)
}

/// [`softmax`] along any dim: PyTorch names a different kernel in its error when the
/// dim is not the last one (`last_dim`; a zero-dim input counts as last).
///
/// ```
/// use lazyfuse_ir::{typing::softmax_along, DType};
/// let err = softmax_along(DType::Bool, true, false).unwrap_err();
/// assert_eq!(err.to_string(), "\"log_softmax_kernel_impl\" not implemented for 'Bool'");
/// ```
pub fn softmax_along(dtype: DType, log: bool, last_dim: bool) -> Result<Signature> {
    if !matches!(dtype, DType::F16 | DType::BF16 | DType::F32 | DType::F64) {
        let kernel = format!(
            "{}softmax_{}kernel_impl",
            if log { "log_" } else { "" },
            if last_dim { "lastdim_" } else { "" }
        );
        return Err(Error::not_implemented(kernel, dtype));
    }
    Ok(Signature::same(dtype))
}

/// The C++ type name PyTorch's `TypeMeta` prints (`float`, `c10::Half`, `long int`),
/// which some of its messages quote instead of the scalar-type name.
fn type_meta_name(dtype: DType) -> String {
    match dtype {
        DType::Bool => "bool".into(),
        DType::U8 => "unsigned char".into(),
        DType::I8 => "signed char".into(),
        DType::I16 => "short int".into(),
        DType::I32 => "int".into(),
        DType::I64 => "long int".into(),
        DType::U16 => "unsigned short".into(),
        DType::U32 => "unsigned int".into(),
        DType::U64 => "unsigned long".into(),
        DType::F32 => "float".into(),
        DType::F64 => "double".into(),
        DType::C64 => "c10::complex<float>".into(),
        DType::C128 => "c10::complex<double>".into(),
        DType::C32 => "c10::complex<c10::Half>".into(),
        other => format!("c10::{}", other.torch_name()),
    }
}

/// The dtype of a matrix product (2-D or batched): no promotion, both operands must
/// have one dtype (PyTorch's `mm` message otherwise); bool is refused as by PyTorch's
/// CPU `addmm`. Shape errors are the caller's.
///
/// ```
/// use lazyfuse_ir::{typing::matmul, DType};
/// assert_eq!(matmul(DType::BF16, DType::BF16).unwrap(), DType::BF16);
/// let err = matmul(DType::F32, DType::F64).unwrap_err();
/// assert_eq!(err.to_string(), "expected m1 and m2 to have the same dtype, but got: float != double");
/// ```
pub fn matmul(a: DType, b: DType) -> Result<DType> {
    if a != b {
        return Err(Error::invalid(
            "matmul",
            format!(
                "expected m1 and m2 to have the same dtype, but got: {} != {}",
                type_meta_name(a),
                type_meta_name(b)
            ),
        ));
    }
    if a == DType::Bool {
        // PyTorch's CPU addmm dispatches all types but bool (not in the corpus).
        return Err(Error::not_implemented("addmm_impl_cpu_", a));
    }
    computable(a)?;
    Ok(a)
}

/// [`matmul`] for operands of `a_ndim` and `b_ndim` dims (both at least 1): a product
/// of two vectors is PyTorch's `dot`, whose errors read differently.
///
/// ```
/// use lazyfuse_ir::{typing::matmul_nd, DType};
/// let err = matmul_nd(DType::I32, 1, DType::F32, 1).unwrap_err();
/// assert_eq!(err.to_string(), "dot : expected both vectors to have same dtype, but found Int and Float");
/// assert_eq!(matmul_nd(DType::F32, 1, DType::F32, 2).unwrap(), DType::F32);
/// ```
pub fn matmul_nd(a: DType, a_ndim: usize, b: DType, b_ndim: usize) -> Result<DType> {
    if a_ndim == 1 && b_ndim == 1 {
        if a != b {
            return Err(Error::invalid(
                "dot",
                format!(
                    "dot : expected both vectors to have same dtype, but found {} and {}",
                    a.torch_name(),
                    b.torch_name()
                ),
            ));
        }
        if a == DType::Bool || is_half_complex(a) {
            return Err(Error::not_implemented("dot", a));
        }
        computable(a)?;
        return Ok(a);
    }
    matmul(a, b)
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
    if !common.is_float8() {
        computable(common)?;
    }
    Ok(common)
}

/// The signature of `clamp(x, min, max)`. With host-scalar bounds (PyTorch's
/// `clamp.Scalar`) a floating `x` keeps its dtype and only an integral `x` promotes
/// with the bounds; with tensor bounds all three promote. Complex is refused.
///
/// ```
/// use lazyfuse_ir::{typing::clamp, promote::OperandType, DType};
/// let x = OperandType::dimensioned(DType::U8);
/// let lo = OperandType::wrapped(DType::F64);
/// assert_eq!(clamp(x, Some(lo), None, DType::F32).unwrap().output, DType::F32);
/// ```
pub fn clamp(
    x: OperandType,
    min: Option<OperandType>,
    max: Option<OperandType>,
    default_float: DType,
) -> Result<Signature> {
    if min.is_none() && max.is_none() {
        return Err(Error::invalid(
            "clamp",
            "torch.clamp: At least one of 'min' or 'max' must not be None",
        ));
    }
    if x.dtype.is_complex() {
        return Err(Error::invalid("clamp", CLAMP_COMPLEX));
    }
    let bounds: Vec<OperandType> = min.into_iter().chain(max).collect();
    let scalar_bounds = bounds.iter().all(|b| b.priority == Priority::Wrapped);
    let common = if scalar_bounds && x.dtype.is_floating_point() {
        x.dtype
    } else {
        let mut all = vec![x];
        all.extend(bounds);
        result_type(&all, default_float)?
    };
    if common.is_complex() {
        return Err(Error::invalid("clamp", CLAMP_COMPLEX));
    }
    computable(common)?;
    Ok(Signature::same(common))
}

/// Checks that an in-place op's result (`result`) may be written into a tensor of
/// `dest` dtype: [`can_cast`], else [`Error::InplaceCast`] with PyTorch's text.
///
/// ```
/// use lazyfuse_ir::{typing::inplace, DType};
/// assert!(inplace(DType::I64, DType::U8).is_ok());
/// let err = inplace(DType::F32, DType::I32).unwrap_err();
/// assert_eq!(err.to_string(), "result type Float can't be cast to the desired output type Int");
/// ```
pub fn inplace(result: DType, dest: DType) -> Result<()> {
    if can_cast(result, dest) {
        Ok(())
    } else {
        Err(Error::InplaceCast {
            result,
            output: dest,
        })
    }
}

// ---- Creation ops: eye, linspace, rand, randn, randint (issue 5, creation) ----

/// `torch.eye`'s dtypes: everything but `uint16`/`uint32`/`uint64` and the half
/// complex types (PyTorch's `"eye" not implemented for 'UInt16'`). The float8 dtypes
/// work (a bool cast), as in PyTorch.
///
/// ```
/// use lazyfuse_ir::{typing, DType};
/// assert!(typing::eye(DType::F8E4M3FN).is_ok());
/// assert_eq!(typing::eye(DType::U64).unwrap_err().to_string(), "\"eye\" not implemented for 'UInt64'");
/// ```
pub fn eye(dtype: DType) -> Result<()> {
    match dtype {
        DType::U16 | DType::U32 | DType::U64 | DType::C32 | DType::BC32 => {
            Err(Error::not_implemented("eye", dtype))
        }
        _ => Ok(()),
    }
}

/// `torch.linspace`'s dtypes when its kernel runs (`steps > 1`; PyTorch fills
/// shorter results without the kernel, for every dtype): no bool, wide unsigned,
/// half complex or float8 (`"linspace_cpu" not implemented for 'Bool'`).
///
/// ```
/// use lazyfuse_ir::{typing, DType};
/// assert!(typing::linspace(DType::I8).is_ok());
/// assert!(typing::linspace(DType::Bool).is_err());
/// ```
pub fn linspace(dtype: DType) -> Result<()> {
    match dtype {
        DType::Bool | DType::U16 | DType::U32 | DType::U64 | DType::C32 | DType::BC32 => {
            Err(Error::not_implemented("linspace_cpu", dtype))
        }
        d if d.is_float8() => Err(Error::not_implemented("linspace_cpu", d)),
        _ => Ok(()),
    }
}

/// Whether `rand`/`randn` can fill a dtype: real floating (not float8) or complex.
fn random_float(dtype: DType) -> bool {
    (dtype.is_floating_point() && !dtype.is_float8()) || dtype.is_complex()
}

/// `torch.rand`'s dtypes: floating and complex; others are refused by
/// `check_uniform_bounds` even for empty results. complex32/bcomplex32 are computed by
/// PyTorch but storage-only here (`Unsupported`).
///
/// ```
/// use lazyfuse_ir::{typing, DType};
/// assert!(typing::rand(DType::C64, 3).is_ok());
/// assert_eq!(
///     typing::rand(DType::I64, 3).unwrap_err().to_string(),
///     "\"check_uniform_bounds\" not implemented for 'Long'"
/// );
/// ```
pub fn rand(dtype: DType, numel: usize) -> Result<()> {
    if !random_float(dtype) {
        return Err(Error::not_implemented("check_uniform_bounds", dtype));
    }
    if numel > 0 {
        computable(dtype)?;
    }
    Ok(())
}

/// `torch.randn`'s dtypes: floating and complex (`"normal_kernel_cpu" not implemented
/// for 'Long'`); an empty result skips the kernel and takes any dtype.
///
/// ```
/// use lazyfuse_ir::{typing, DType};
/// assert!(typing::randn(DType::I64, 0).is_ok());
/// assert!(typing::randn(DType::I64, 1).is_err());
/// ```
pub fn randn(dtype: DType, numel: usize) -> Result<()> {
    if numel == 0 {
        return Ok(());
    }
    if !random_float(dtype) {
        return Err(Error::not_implemented("normal_kernel_cpu", dtype));
    }
    computable(dtype)
}

/// `torch.randint(low, high)`'s checks in PyTorch's order: `low < high`, the dtype
/// (not complex, not float8), then `low` and `high - 1` within the dtype's range
/// (messages name the C++ type: "from is out of bounds for unsigned char").
///
/// ```
/// use lazyfuse_ir::{typing, DType};
/// assert!(typing::randint(0, 256, DType::U8).is_ok());
/// assert_eq!(
///     typing::randint(0, 300, DType::U8).unwrap_err().to_string(),
///     "to - 1 is out of bounds for unsigned char"
/// );
/// assert_eq!(
///     typing::randint(5, 5, DType::I64).unwrap_err().to_string(),
///     "random_ expects 'from' to be less than 'to', but got from=5 >= to=5"
/// );
/// ```
pub fn randint(low: i64, high: i64, dtype: DType) -> Result<()> {
    if low >= high {
        return Err(Error::invalid(
            "randint",
            format!("random_ expects 'from' to be less than 'to', but got from={low} >= to={high}"),
        ));
    }
    if dtype.is_float8() {
        return Err(Error::not_implemented("random_update_from_to", dtype));
    }
    let (lo, hi, c_name): (i128, i128, &str) = match dtype {
        DType::Bool => (0, 1, "bool"),
        DType::U8 => (0, 255, "unsigned char"),
        DType::I8 => (-128, 127, "signed char"),
        DType::I16 => (i16::MIN.into(), i16::MAX.into(), "short int"),
        DType::I32 => (i32::MIN.into(), i32::MAX.into(), "int"),
        DType::I64 => (i64::MIN.into(), i64::MAX.into(), "long int"),
        DType::U16 => (0, u16::MAX.into(), "short unsigned int"),
        DType::U32 => (0, u32::MAX.into(), "unsigned int"),
        DType::U64 => (0, u64::MAX.into(), "long unsigned int"),
        DType::F16 => (-65504, 65504, "c10::Half"),
        DType::BF16 | DType::F32 | DType::F64 => (i64::MIN.into(), i64::MAX.into(), "float"),
        _ => {
            return Err(Error::invalid(
                "randint",
                "check_random_bounds handles only integral, floating-point and boolean types",
            ))
        }
    };
    let out = |what: &str| {
        Err(Error::invalid(
            "randint",
            format!("{what} is out of bounds for {c_name}"),
        ))
    };
    if !(lo..=hi).contains(&i128::from(low)) {
        return out("from");
    }
    if !(lo..=hi).contains(&(i128::from(high) - 1)) {
        return out("to - 1");
    }
    Ok(())
}

// ---- complex32/bcomplex32: PyTorch's own refusals (issue 5, defects) ----
//
// complex32 and bcomplex32 are storage-only in lazyfuse (`computable` says
// `Unsupported`), but where PyTorch itself has no kernel for them its error is the
// answer, not "unsupported". The tables below are PyTorch 2.15's CPU kernels, checked
// one by one: complex32 computes `neg`, `abs`, `isnan`, `add`/`sub`/`mul`, `eq`/`ne`,
// `where`, `var`/`std` (lazyfuse: `Unsupported`); bcomplex32 only `isnan`, `eq`/`ne`,
// `where`, `var`/`std`.

/// complex32 or bcomplex32.
fn is_half_complex(dtype: DType) -> bool {
    matches!(dtype, DType::C32 | DType::BC32)
}

/// PyTorch's refusal of a unary kernel for the half complex types, if it has one.
fn half_complex_unary(op: UnaryOp, dtype: DType) -> Result<()> {
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

/// PyTorch's refusal of a reduction kernel for the half complex types, if it has one.
fn half_complex_reduce(op: ReduceOp, dtype: DType) -> Result<()> {
    if !is_half_complex(dtype) {
        return Ok(());
    }
    let kernel = match op {
        ReduceOp::Sum | ReduceOp::Mean => "sum_cpu",
        ReduceOp::Prod => "prod_out_cpu",
        ReduceOp::Amax => "max_values_cpu",
        ReduceOp::Amin => "min_values_cpu",
        ReduceOp::Var { .. } | ReduceOp::Std { .. } => return Ok(()),
    };
    Err(Error::not_implemented(kernel, dtype))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(d: DType) -> OperandType {
        OperandType::dimensioned(d)
    }

    #[test]
    fn sub_refuses_bool_operands() {
        let err = binary(BinaryOp::Sub, t(DType::Bool), t(DType::Bool), DType::F32);
        assert_eq!(err.unwrap_err().to_string(), SUB_TWO_BOOLS);
        let err = binary(
            BinaryOp::Sub,
            t(DType::F32),
            OperandType::wrapped(DType::Bool),
            DType::F32,
        );
        assert_eq!(err.unwrap_err().to_string(), SUB_ONE_BOOL);
        assert_eq!(
            binary(BinaryOp::Add, t(DType::Bool), t(DType::Bool), DType::F32)
                .unwrap()
                .output,
            DType::Bool
        );
    }

    #[test]
    fn scalar_on_the_left_names_the_mirrored_kernel() {
        let s = OperandType::wrapped(DType::I64);
        let err = binary(BinaryOp::Ge, s, t(DType::C64), DType::F32).unwrap_err();
        assert_eq!(
            err.to_string(),
            "\"le_cpu\" not implemented for 'ComplexFloat'"
        );
        let err = binary(BinaryOp::Ge, t(DType::C64), s, DType::F32).unwrap_err();
        assert_eq!(
            err.to_string(),
            "\"ge_cpu\" not implemented for 'ComplexFloat'"
        );
    }

    #[test]
    fn storage_only_dtypes_are_unsupported_not_refused() {
        let c = OperandType::wrapped(DType::C128);
        let err = binary(BinaryOp::Add, t(DType::F16), c, DType::F32).unwrap_err();
        assert!(err.is_unsupported());
        // ...unless PyTorch refuses the op for that dtype itself.
        let err = binary(BinaryOp::Atan2, t(DType::F16), c, DType::F32).unwrap_err();
        assert_eq!(
            err.to_string(),
            "\"atan2_cpu\" not implemented for 'ComplexHalf'"
        );
        assert!(unary(UnaryOp::Exp, DType::F8E4M3FN, DType::F32)
            .unwrap_err()
            .is_unsupported());
    }

    #[test]
    fn wide_unsigned_computes_where_promotion_allows() {
        let u = t(DType::U64);
        assert_eq!(
            binary(BinaryOp::Add, u, u, DType::F32).unwrap().output,
            DType::U64
        );
        assert_eq!(
            unary(UnaryOp::Neg, DType::U16, DType::F32).unwrap().output,
            DType::U16
        );
        assert!(binary(BinaryOp::Add, u, t(DType::I64), DType::F32).is_err());
    }

    #[test]
    fn mm_message_uses_type_meta_names() {
        let err = matmul(DType::I64, DType::F16).unwrap_err();
        assert_eq!(
            err.to_string(),
            "expected m1 and m2 to have the same dtype, but got: long int != c10::Half"
        );
    }
}
