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
//!
//! One file per op family: `binary` (with `where`), `unary`, `reduce` (with scans
//! and softmax), `matmul`, `clamp`, `ternary` (`lerp`, `addcmul`/`addcdiv`,
//! `masked_fill`, `isclose`) and `creation`; this file holds [`Signature`] and the
//! checks they share (storage-only dtypes, in-place casts back, opmath).

use crate::dtype::{Category, DType};
use crate::error::{Error, Result};
use crate::promote::can_cast;

mod binary;
mod clamp;
mod creation;
mod matmul;
mod reduce;
mod ternary;
#[cfg(test)]
mod tests;
mod unary;

pub use binary::{binary, binary_inplace, where_};
pub use clamp::{clamp, clamp_bound, clamp_inplace, clamp_tensor, clamp_tensor_inplace};
pub use creation::{eye, linspace, rand, randint, randn};
pub use matmul::{matmul, matmul_nd};
pub use reduce::{
    aminmax, arg_reduce, cumsum, max_min, moments, reduce, scan, softmax, softmax_along,
};
pub use ternary::{addc, addc_inplace, isclose, lerp, masked_fill};
pub use unary::{positive, unary, unary_param};

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

/// Refuses computing in a storage-only dtype (lazyfuse has no kernels for them).
pub(super) fn computable(dtype: DType) -> Result<()> {
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
pub(super) fn is_integral(dtype: DType) -> bool {
    dtype.category() <= Category::Integer
}

/// The C++ type name PyTorch's `TypeMeta` prints (`float`, `c10::Half`, `long int`),
/// which some of its messages quote instead of the scalar-type name.
pub(super) fn type_meta_name(dtype: DType) -> String {
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
