//! Dtype rules of the pointwise ops over several tensors: `lerp`, `addcmul`,
//! `addcdiv` (in PyTorch's opmath dtype), `masked_fill` and `isclose`.

use super::{computable, inplace, is_integral, opmath, type_meta_name, Signature};
use crate::dtype::{Category, DType};
use crate::error::{Error, Result};
use crate::promote::{result_type, OperandType};

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

pub(super) const ADDCDIV_INTEGER: &str = "Integer division with addcdiv is no longer supported, and in a future  release addcdiv will perform a true division of tensor1 and tensor2. The historic addcdiv behavior can be implemented as (input + value * torch.trunc(tensor1 / tensor2)).to(input.dtype) for integer inputs and as (input + value * tensor1 / tensor2) for float inputs. The future addcdiv behavior is just the latter implementation: (input + value * tensor1 / tensor2), for all dtypes.";

/// [`addc`] and [`addc_inplace`]: checks, promotion, the cast back (`in_place`), the
/// kernel.
pub(super) fn addc_signature(
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

pub(super) fn addc_kernel(div: bool, common: DType) -> Result<()> {
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
pub(super) fn cpp_double(v: f64) -> String {
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
