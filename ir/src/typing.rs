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
use crate::op::{ArgReduceOp, BinaryOp, ReduceOp, ScanOp, UnaryOp, UnaryParamOp};
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
        // PyTorch 2.15 has no kernel computing float4 values: a refusal, not a gap
        DType::F4E2M1FNX2 => Err(Error::not_implemented("compute", DType::F4E2M1FNX2)),
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
fn binary_signature(op: BinaryOp, common: DType, default_float: DType) -> Signature {
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
        // complex32 add/sub/mul: c10's complex<Half> computes through complex<float>,
        // and so does the facade
        Add | Sub | Mul if compute == DType::C32 => return Ok(()),
        _ => {}
    }
    check_binary_math_kernel(op, compute)
}

/// [`check_binary_kernel`] for the binary math ops (`fmax` … `lcm`): the dtypes
/// each CPU kernel dispatches, with PyTorch's kernel names.
fn check_binary_math_kernel(op: BinaryOp, compute: DType) -> Result<()> {
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

/// The signature of a reduction of `dtype`.
///
/// `sum`/`prod` of bool or integers compute and output `int64`; `mean`, `var`, `std`
/// accept only floating and complex inputs; `var`/`std` of complex output the real
/// dtype; `amax`/`amin` refuse complex. `logsumexp` lifts bool and integers to
/// `default_float`; `nansum` refuses complex; `any`/`all` output bool (uint8 for a
/// uint8 input); `count_nonzero` outputs int64; `norm` takes floating and complex
/// inputs and outputs the real dtype.
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
    let cat = dtype.category();
    let float_or_complex = cat >= Category::Floating;
    let sig = match op {
        ReduceOp::Sum | ReduceOp::Prod if is_integral(dtype) => Signature::same(DType::I64),
        ReduceOp::Mean | ReduceOp::RunningMean if !float_or_complex => {
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
        ReduceOp::NanMean if !float_or_complex => {
            return Err(Error::invalid(
                "nanmean",
                format!(
                    "nanmean(): expected input to have floating point or complex dtype but got {}",
                    dtype.torch_name()
                ),
            ))
        }
        ReduceOp::NanSum | ReduceOp::NanMean if cat == Category::Complex => {
            return Err(Error::invalid(
                "nansum",
                "nansum on CPU does not support complex inputs",
            ))
        }
        ReduceOp::NanSum if is_integral(dtype) => Signature::same(DType::I64),
        ReduceOp::Any | ReduceOp::All => Signature {
            compute: dtype,
            output: if dtype == DType::U8 {
                DType::U8
            } else {
                DType::Bool
            },
        },
        ReduceOp::CountNonzero => Signature {
            compute: dtype,
            output: DType::I64,
        },
        ReduceOp::LogSumExp if is_integral(dtype) => Signature::same(default_float),
        ReduceOp::LogSumExp if dtype == DType::C32 => {
            return Err(Error::not_implemented("exp_vml_cpu", dtype))
        }
        ReduceOp::Norm { .. } if !float_or_complex => {
            return Err(Error::invalid(
                "linalg.vector_norm",
                format!(
                    "linalg.vector_norm: Expected a floating point or complex tensor as input. Got {}",
                    dtype.torch_name()
                ),
            ))
        }
        ReduceOp::Norm { .. } => Signature {
            compute: dtype,
            output: dtype.to_real(),
        },
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
    // a selection moves float8 codes and half-complex values without arithmetic
    if !common.is_float8() && !matches!(common, DType::C32 | DType::BC32) {
        computable(common)?;
    }
    Ok(common)
}

/// `clamp`'s checks before promotion: a bound is given, `x` is not complex.
fn check_clamp_inputs(
    x: OperandType,
    min: Option<OperandType>,
    max: Option<OperandType>,
) -> Result<()> {
    if min.is_none() && max.is_none() {
        return Err(Error::invalid(
            "clamp",
            "torch.clamp: At least one of 'min' or 'max' must not be None",
        ));
    }
    if x.dtype.is_complex() {
        return Err(Error::invalid("clamp", CLAMP_COMPLEX));
    }
    Ok(())
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
    check_clamp_inputs(x, min, max)?;
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
    if common == DType::Bool {
        // PyTorch's scalar-bound clamp kernels have no bool.
        let kernel = match (min.is_some(), max.is_some()) {
            (true, true) => "clamp_scalar_cpu",
            (true, false) => "clamp_min_scalar_cpu",
            _ => "clamp_max_scalar_cpu",
        };
        return Err(Error::not_implemented(kernel, common));
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

/// The signature of a scan (`cumprod`, `cummax`, `cummin` and their indices,
/// `logcumsumexp`) of `dtype`, with PyTorch's kernel refusals: `cumprod` lifts bool
/// and integers to `int64`; `cummax`/`cummin` refuse complex; `logcumsumexp` takes
/// floating and complex inputs only.
///
/// ```
/// use lazyfuse_ir::{typing::scan, DType, ScanOp};
/// assert_eq!(scan(ScanOp::Cumprod, DType::Bool).unwrap().output, DType::I64);
/// assert_eq!(scan(ScanOp::CummaxIndices, DType::F16).unwrap().output, DType::I64);
/// let err = scan(ScanOp::LogCumSumExp, DType::I32).unwrap_err();
/// assert_eq!(err.to_string(), "\"logcumsumexp_out_cpu\" not implemented for 'Int'");
/// ```
pub fn scan(op: ScanOp, dtype: DType) -> Result<Signature> {
    let complex = dtype.is_complex();
    let sig = match op {
        ScanOp::Cumprod if is_integral(dtype) => Signature::same(DType::I64),
        ScanOp::Cumprod if dtype == DType::C32 => {
            return Err(Error::not_implemented("cumprod_out_cpu", dtype))
        }
        ScanOp::Cumprod => Signature::same(dtype),
        ScanOp::Cummax | ScanOp::CummaxIndices if complex => {
            return Err(Error::not_implemented("cummax_cpu", dtype))
        }
        ScanOp::Cummin | ScanOp::CumminIndices if complex => {
            return Err(Error::not_implemented("cummin_cpu", dtype))
        }
        ScanOp::Cummax | ScanOp::Cummin => Signature::same(dtype),
        ScanOp::CummaxIndices | ScanOp::CumminIndices => Signature {
            compute: dtype,
            output: DType::I64,
        },
        ScanOp::LogCumSumExp if is_integral(dtype) || dtype == DType::C32 => {
            return Err(Error::not_implemented("logcumsumexp_out_cpu", dtype))
        }
        ScanOp::LogCumSumExp => Signature::same(dtype),
    };
    computable(sig.compute)?;
    Ok(sig)
}

// ---------------------------------------------------------------------------
// Unary math, predicates and activations.

/// The half-precision complex dtypes, which lazyfuse stores but does not compute in.
fn is_half_complex(dtype: DType) -> bool {
    matches!(dtype, DType::C32 | DType::BC32)
}

/// The kernel name PyTorch's CPU dispatch of each unary math op prints in its
/// "not implemented for" errors.
fn kernel_name(op: UnaryOp) -> &'static str {
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
fn unary_math(op: UnaryOp, dtype: DType, default_float: DType) -> Option<Result<Signature>> {
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

/// Checks that `max`/`min` (`name`) accept `dtype`: complex is refused, with the
/// message of the form with a dim (`with_dim`) or of the full reduction.
///
/// ```
/// use lazyfuse_ir::{typing::max_min, DType};
/// assert!(max_min("max", true, DType::Bool).is_ok());
/// let err = max_min("min", true, DType::C64).unwrap_err();
/// assert_eq!(err.to_string(), "min(): does not support complex input");
/// let err = max_min("max", false, DType::C64).unwrap_err();
/// assert_eq!(err.to_string(), "\"max_all\" not implemented for 'ComplexFloat'");
/// ```
pub fn max_min(name: &str, with_dim: bool, dtype: DType) -> Result<()> {
    if dtype.is_complex() {
        return Err(if with_dim {
            Error::invalid(name, format!("{name}(): does not support complex input"))
        } else {
            Error::not_implemented(format!("{name}_all"), dtype)
        });
    }
    computable(dtype)
}

/// Checks that `aminmax` accepts `dtype` (complex is refused).
///
/// ```
/// use lazyfuse_ir::{typing::aminmax, DType};
/// assert!(aminmax(DType::I8).is_ok());
/// let err = aminmax(DType::C128).unwrap_err();
/// assert_eq!(err.to_string(), "aminmax not implemented for ComplexDouble");
/// ```
pub fn aminmax(dtype: DType) -> Result<()> {
    if dtype.is_complex() {
        return Err(Error::invalid(
            "aminmax",
            format!("aminmax not implemented for {}", dtype.torch_name()),
        ));
    }
    computable(dtype)
}

/// Checks that `var_mean`/`std_mean` (`name`) accept `dtype` (floating and complex
/// only, with PyTorch's message).
///
/// ```
/// use lazyfuse_ir::{typing::moments, DType};
/// assert!(moments("var_mean", DType::C64).is_ok());
/// let err = moments("std_mean", DType::I64).unwrap_err();
/// assert_eq!(err.to_string(), "std_mean only support floating point and complex dtypes");
/// ```
pub fn moments(name: &str, dtype: DType) -> Result<()> {
    if dtype.category() < Category::Floating {
        return Err(Error::invalid(
            name,
            format!("{name} only support floating point and complex dtypes"),
        ));
    }
    computable(dtype)
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

// ---------------------------------------------------------------------------------------
// Tensor-bound clamp, lerp, addcmul/addcdiv, masked_fill, isclose.

/// The error PyTorch's `clamp_`/`clamp_min_`/`clamp_max_` with host-scalar bounds raise
/// when the promoted dtype cannot be cast back: unlike the other in-place ops, their
/// message quotes the destination's C++ type name (`int`, `long int`, `bool`).
fn clamp_scalar_cast(result: DType, dest: DType) -> Result<()> {
    if can_cast(result, dest) {
        return Ok(());
    }
    Err(Error::invalid(
        "clamp_",
        format!(
            "result type {} can't be cast to the desired output type {}",
            result.torch_name(),
            type_meta_name(dest)
        ),
    ))
}

/// The signature of the in-place `x.clamp_(min, max)` with host-scalar bounds
/// (also `clamp_min_`/`clamp_max_` with a scalar): [`clamp`], then the cast of its result
/// back to `x`, with PyTorch's wording for these ops.
///
/// ```
/// use lazyfuse_ir::{typing::clamp_inplace, promote::OperandType, DType};
/// let x = OperandType::dimensioned(DType::I64);
/// let lo = OperandType::wrapped(DType::F64);
/// let err = clamp_inplace(x, Some(lo), None, DType::F32).unwrap_err();
/// assert_eq!(err.to_string(), "result type Float can't be cast to the desired output type long int");
/// ```
pub fn clamp_inplace(
    x: OperandType,
    min: Option<OperandType>,
    max: Option<OperandType>,
    default_float: DType,
) -> Result<Signature> {
    let sig = clamp(x, min, max, default_float)?;
    clamp_scalar_cast(sig.output, x.dtype)?;
    Ok(sig)
}

/// [`clamp_tensor`] and [`clamp_tensor_inplace`]: input checks, promotion of all
/// three, the cast back (`in_place`), then the kernel.
fn clamp_tensor_signature(
    x: OperandType,
    min: Option<OperandType>,
    max: Option<OperandType>,
    default_float: DType,
    in_place: bool,
) -> Result<Signature> {
    check_clamp_inputs(x, min, max)?;
    let mut all = vec![x];
    all.extend(min);
    all.extend(max);
    let common = result_type(&all, default_float)?;
    if in_place {
        inplace(common, x.dtype)?;
    }
    clamp_tensor_kernel(common, min.is_some(), max.is_some())?;
    Ok(Signature::same(common))
}

/// The signature of `clamp_min(x, bound)` (`is_min`) or `clamp_max(x, bound)` with a
/// tensor bound (`dest`: in place, the cast back to `x` is checked after promotion).
/// Unlike `clamp(x, min=t)`, a complex `x` is not refused up front: the `maximum`/
/// `minimum` kernel refuses the complex promoted dtype.
///
/// ```
/// use lazyfuse_ir::{typing::clamp_bound, promote::OperandType, DType};
/// let t = OperandType::dimensioned;
/// let err = clamp_bound(t(DType::C64), t(DType::F32), true, false, DType::F32).unwrap_err();
/// assert_eq!(err.to_string(), "\"maximum_cpu\" not implemented for 'ComplexFloat'");
/// ```
pub fn clamp_bound(
    x: OperandType,
    bound: OperandType,
    is_min: bool,
    in_place: bool,
    default_float: DType,
) -> Result<Signature> {
    let common = result_type(&[x, bound], default_float)?;
    if in_place {
        inplace(common, x.dtype)?;
    }
    clamp_tensor_kernel(common, is_min, !is_min)?;
    Ok(Signature::same(common))
}

/// The kernel of a tensor-bound clamp: one bound runs PyTorch's `maximum`/`minimum`
/// kernel (`clamp_min`/`clamp_max`), two bounds its `clamp` kernel, which has no bool.
fn clamp_tensor_kernel(common: DType, has_min: bool, has_max: bool) -> Result<()> {
    let kernel = match (has_min, has_max) {
        (true, true) => "clamp_cpu",
        (true, false) => "maximum_cpu",
        _ => "minimum_cpu",
    };
    let both = has_min && has_max;
    if common.is_complex() || (both && common == DType::Bool) {
        return Err(Error::not_implemented(kernel, common));
    }
    computable(common)
}

/// The signature of `clamp(x, min, max)` with *tensor* bounds (either may be absent:
/// then it is `clamp_min`/`clamp_max`): all operands promote together; a complex `x` is
/// refused first, a complex promoted dtype by the kernel that would run, and two bool
/// bounds by PyTorch's `clamp` kernel.
///
/// ```
/// use lazyfuse_ir::{typing::clamp_tensor, promote::OperandType, DType};
/// let t = OperandType::dimensioned;
/// let sig = clamp_tensor(t(DType::I8), Some(t(DType::I64)), Some(t(DType::F32)), DType::F32);
/// assert_eq!(sig.unwrap().output, DType::F32);
/// let err = clamp_tensor(t(DType::F32), Some(t(DType::C64)), None, DType::F32).unwrap_err();
/// assert_eq!(err.to_string(), "\"maximum_cpu\" not implemented for 'ComplexFloat'");
/// ```
pub fn clamp_tensor(
    x: OperandType,
    min: Option<OperandType>,
    max: Option<OperandType>,
    default_float: DType,
) -> Result<Signature> {
    clamp_tensor_signature(x, min, max, default_float, false)
}

/// [`clamp_tensor`] in place: promotion, the cast back to `x` (the usual in-place
/// message), then the kernel.
///
/// ```
/// use lazyfuse_ir::{typing::clamp_tensor_inplace, promote::OperandType, DType};
/// let t = OperandType::dimensioned;
/// let err = clamp_tensor_inplace(t(DType::Bool), Some(t(DType::F32)), Some(t(DType::F32)), DType::F32);
/// assert_eq!(err.unwrap_err().to_string(), "result type Float can't be cast to the desired output type Bool");
/// ```
pub fn clamp_tensor_inplace(
    x: OperandType,
    min: Option<OperandType>,
    max: Option<OperandType>,
    default_float: DType,
) -> Result<Signature> {
    clamp_tensor_signature(x, min, max, default_float, true)
}

/// The dtype PyTorch's CPU kernels do their arithmetic in ("opmath"): float16 and
/// bfloat16 compute in float32, every other dtype in itself.
///
/// ```
/// use lazyfuse_ir::{typing::opmath, DType};
/// assert_eq!(opmath(DType::BF16), DType::F32);
/// assert_eq!(opmath(DType::I8), DType::I8);
/// ```
pub fn opmath(dtype: DType) -> DType {
    match dtype {
        DType::F16 | DType::BF16 => DType::F32,
        other => other,
    }
}

/// The signature of `lerp(start, end, weight)`: no promotion (`end`, and a tensor
/// `weight`, must have `start`'s dtype, PyTorch's message otherwise); floating and
/// complex only. `weight` is `None` for a host-scalar weight. `compute` is the dtype
/// the formula runs in ([`opmath`]), `output` is `start`'s dtype.
///
/// ```
/// use lazyfuse_ir::{typing::lerp, DType};
/// assert_eq!(lerp(DType::F16, DType::F16, None).unwrap().compute, DType::F32);
/// let err = lerp(DType::F32, DType::F64, None).unwrap_err();
/// assert_eq!(err.to_string(), "expected dtype float for `end` but got dtype double");
/// let err = lerp(DType::I64, DType::I64, Some(DType::I64)).unwrap_err();
/// assert_eq!(err.to_string(), "\"lerp_kernel_tensor\" not implemented for 'Long'");
/// ```
pub fn lerp(start: DType, end: DType, weight: Option<DType>) -> Result<Signature> {
    let mismatch = |what: &str, got: DType| {
        Error::invalid(
            "lerp",
            format!(
                "expected dtype {} for `{what}` but got dtype {}",
                type_meta_name(start),
                type_meta_name(got)
            ),
        )
    };
    if end != start {
        return Err(mismatch("end", end));
    }
    if let Some(w) = weight.filter(|&w| w != start) {
        return Err(mismatch("weight", w));
    }
    let ok = start.category() == Category::Floating || matches!(start, DType::C64 | DType::C128);
    if !ok && !start.is_float8() {
        let kernel = if weight.is_some() {
            "lerp_kernel_tensor"
        } else {
            "lerp_kernel_scalar"
        };
        return Err(Error::not_implemented(kernel, start));
    }
    computable(start)?;
    Ok(Signature {
        compute: opmath(start),
        output: start,
    })
}

const ADDCDIV_INTEGER: &str = "Integer division with addcdiv is no longer supported, and in a future  release addcdiv will perform a true division of tensor1 and tensor2. The historic addcdiv behavior can be implemented as (input + value * torch.trunc(tensor1 / tensor2)).to(input.dtype) for integer inputs and as (input + value * tensor1 / tensor2) for float inputs. The future addcdiv behavior is just the latter implementation: (input + value * tensor1 / tensor2), for all dtypes.";

/// [`addc`] and [`addc_inplace`]: checks, promotion, the cast back (`in_place`), the
/// kernel.
fn addc_signature(
    div: bool,
    x: OperandType,
    t1: OperandType,
    t2: OperandType,
    default_float: DType,
    in_place: bool,
) -> Result<Signature> {
    if div && is_integral(t1.dtype) && is_integral(t2.dtype) {
        return Err(Error::invalid("addcdiv", ADDCDIV_INTEGER));
    }
    let common = result_type(&[x, t1, t2], default_float)?;
    if in_place {
        inplace(common, x.dtype)?;
    }
    addc_kernel(div, common)?;
    Ok(Signature {
        compute: opmath(common),
        output: common,
    })
}

fn addc_kernel(div: bool, common: DType) -> Result<()> {
    if !div && common == DType::Bool {
        return Err(Error::not_implemented("addcmul_cpu_out", common));
    }
    if div && common == DType::C32 {
        return Err(Error::not_implemented("addcdiv_cpu_out", common));
    }
    computable(common)
}

/// The signature of `addcmul(x, t1, t2, value)` (`div`: `addcdiv`): all three tensors
/// promote together; `compute` is the [`opmath`] of the result dtype (PyTorch rounds a
/// float16 result once). `addcdiv` refuses two integral divisors' operands with
/// PyTorch's long message; `addcmul` has no bool kernel.
///
/// ```
/// use lazyfuse_ir::{typing::addc, promote::OperandType, DType};
/// let t = OperandType::dimensioned;
/// let sig = addc(false, t(DType::I8), t(DType::I64), t(DType::I64), DType::F32).unwrap();
/// assert_eq!(sig.output, DType::I64);
/// assert!(addc(true, t(DType::F32), t(DType::I32), t(DType::I32), DType::F32).is_err());
/// ```
pub fn addc(
    div: bool,
    x: OperandType,
    t1: OperandType,
    t2: OperandType,
    default_float: DType,
) -> Result<Signature> {
    addc_signature(div, x, t1, t2, default_float, false)
}

/// [`addc`] in place: checks, promotion, the cast back to `x`, then the kernel.
///
/// ```
/// use lazyfuse_ir::{typing::addc_inplace, promote::OperandType, DType};
/// let t = OperandType::dimensioned;
/// let err = addc_inplace(false, t(DType::I32), t(DType::F32), t(DType::F32), DType::F32);
/// assert_eq!(err.unwrap_err().to_string(), "result type Float can't be cast to the desired output type Int");
/// ```
pub fn addc_inplace(
    div: bool,
    x: OperandType,
    t1: OperandType,
    t2: OperandType,
    default_float: DType,
) -> Result<Signature> {
    addc_signature(div, x, t1, t2, default_float, true)
}

/// Checks of `masked_fill(x, mask, value)`: the mask must be bool and a tensor value
/// zero-dimensional (`value_ndim`, `None` for a host scalar), with PyTorch's messages.
/// The output keeps `x`'s dtype. float8 is refused as by PyTorch's kernel;
/// complex32/bcomplex32 are storage-only here.
///
/// ```
/// use lazyfuse_ir::{typing::masked_fill, DType};
/// assert!(masked_fill(DType::I8, DType::Bool, None).is_ok());
/// let err = masked_fill(DType::F32, DType::U8, None).unwrap_err();
/// assert_eq!(err.to_string(), "masked_fill_ only supports boolean masks, but got mask with dtype unsigned char");
/// ```
pub fn masked_fill(x: DType, mask: DType, value_ndim: Option<usize>) -> Result<()> {
    if mask != DType::Bool {
        return Err(Error::invalid(
            "masked_fill_",
            format!(
                "masked_fill_ only supports boolean masks, but got mask with dtype {}",
                type_meta_name(mask)
            ),
        ));
    }
    if let Some(n) = value_ndim.filter(|&n| n != 0) {
        return Err(Error::invalid(
            "masked_fill_",
            format!("masked_fill_ only supports a 0-dimensional value tensor, but got tensor with {n} dimension(s)."),
        ));
    }
    if x.is_float8() {
        return Err(Error::not_implemented("masked_fill", x));
    }
    computable(x)
}

/// C++'s `operator<<` for a double in PyTorch's messages (`-1`, `0.5`, `1e-10`).
fn cpp_double(v: f64) -> String {
    if v.is_nan() {
        "nan".into()
    } else if v.fract() == 0.0 && v.abs() < 1e16 {
        format!("{}", v as i64)
    } else if v.abs() >= 1e-5 && v.abs() < 1e16 {
        format!("{v}")
    } else {
        format!("{v:e}")
    }
}

/// Checks of `isclose(a, b, rtol, atol, equal_nan)`: one dtype for both (PyTorch
/// compares without promotion) and non-negative tolerances; computing in a
/// storage-only dtype is [`Error::Unsupported`].
///
/// ```
/// use lazyfuse_ir::{typing::isclose, DType};
/// assert!(isclose(DType::I8, DType::I8, 1e-5, 1e-8).is_ok());
/// let err = isclose(DType::F32, DType::F64, 1e-5, 1e-8).unwrap_err();
/// assert_eq!(err.to_string(), "Float did not match Double");
/// let err = isclose(DType::F32, DType::F32, -1.0, 1e-8).unwrap_err();
/// assert_eq!(err.to_string(), "rtol must be greater than or equal to zero, but got -1");
/// ```
pub fn isclose(a: DType, b: DType, rtol: f64, atol: f64) -> Result<()> {
    if a != b {
        return Err(Error::invalid(
            "isclose",
            format!("{} did not match {}", a.torch_name(), b.torch_name()),
        ));
    }
    for (name, v) in [("rtol", rtol), ("atol", atol)] {
        if v.is_nan() || v < 0.0 {
            return Err(Error::invalid(
                "isclose",
                format!(
                    "{name} must be greater than or equal to zero, but got {}",
                    cpp_double(v)
                ),
            ));
        }
    }
    computable(a)
}

// ---- Creation ops: eye, linspace, rand, randn, randint ----

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
    if dtype.is_float8() || dtype == DType::F4E2M1FNX2 {
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

// ---- complex32/bcomplex32: PyTorch's own refusals ----
//
// complex32 and bcomplex32 are storage-only in lazyfuse (`computable` says
// `Unsupported`), but where PyTorch itself has no kernel for them its error is the
// answer, not "unsupported". The tables below are PyTorch 2.15's CPU kernels, checked
// one by one: complex32 computes `neg`, `abs`, `isnan`, `add`/`sub`/`mul`, `eq`/`ne`,
// `where`, `var`/`std` (lazyfuse: `Unsupported`); bcomplex32 only `isnan`, `eq`/`ne`,
// `where`, `var`/`std`.

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
        // The nan-aware, logical and norm reductions carry their own refusals in `reduce` (checked
        // against PyTorch there); var/std are computed by PyTorch.
        _ => return Ok(()),
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
        // complex32 add is computed (through complex64, by the facade)
        let sig = binary(BinaryOp::Add, t(DType::F16), c, DType::F32).unwrap();
        assert_eq!(sig.compute, DType::C32);
        let err = binary(BinaryOp::Remainder, t(DType::F16), c, DType::F32).unwrap_err();
        assert!(!err.is_unsupported()); // PyTorch's own refusal
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
