//! Dtype rules of `clamp` with number bounds and with tensor bounds, and their
//! in-place forms (PyTorch's cast-back message quotes the C++ type name).

use super::{computable, inplace, type_meta_name, Signature};
use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::promote::{can_cast, result_type, OperandType, Priority};

pub(super) const CLAMP_COMPLEX: &str = "clamp is not supported for complex types";

/// `clamp`'s checks before promotion: a bound is given, `x` is not complex.
pub(super) fn check_clamp_inputs(
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

/// The error PyTorch's `clamp_`/`clamp_min_`/`clamp_max_` with host-scalar bounds raise
/// when the promoted dtype cannot be cast back: unlike the other in-place ops, their
/// message quotes the destination's C++ type name (`int`, `long int`, `bool`).
pub(super) fn clamp_scalar_cast(result: DType, dest: DType) -> Result<()> {
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
pub(super) fn clamp_tensor_signature(
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
pub(super) fn clamp_tensor_kernel(common: DType, has_min: bool, has_max: bool) -> Result<()> {
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
