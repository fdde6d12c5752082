//! Dtype rules of the reductions, arg-reductions, scans and softmax, and PyTorch's
//! own refusals of reductions for the half complex types.

use super::unary::is_half_complex;
use super::{computable, is_integral, Signature};
use crate::dtype::{Category, DType};
use crate::error::{Error, Result};
use crate::op::{ArgReduceOp, ReduceOp, ScanOp};

pub(super) const STD_VAR_DTYPE: &str = "std and var only support floating point and complex dtypes";

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

/// PyTorch's refusal of a reduction kernel for the half complex types, if it has one.
pub(super) fn half_complex_reduce(op: ReduceOp, dtype: DType) -> Result<()> {
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
