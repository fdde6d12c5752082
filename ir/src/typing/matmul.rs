//! Dtype rules of `matmul` (one dtype for both operands, PyTorch's messages per
//! operand rank).

use super::unary::is_half_complex;
use super::{computable, type_meta_name};
use crate::dtype::DType;
use crate::error::{Error, Result};

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
