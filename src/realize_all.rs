//! Realizing several tensors in one pass: the explicit form of "compute these
//! together", since a realize stores its own target only.

use crate::error::Result;
use crate::Tensor;

/// Computes every tensor of `tensors` in one pass (one schedule per device): work the
/// tensors share is computed once, and each of them is stored. Tensors realized
/// already, and repeated handles of one storage, cost nothing.
///
/// A realize of one tensor stores that tensor alone ([`Tensor::realize`]); where an
/// intermediate is wanted as well as the result, realizing both together computes the
/// intermediate once instead of twice:
///
/// ```
/// use lazyfuse::{DType, Tensor};
/// let x = Tensor::arange(0.0, 4.0, 1.0, DType::F32)?;
/// let e = x.exp()?;
/// let s = e.sum(&[0], false)?;
/// let p = e.div(&s)?;
/// lazyfuse::realize_all(&[&p, &s])?;
/// assert!(p.is_realized() && s.is_realized());
/// assert!((p.to_vec::<f32>()?.iter().sum::<f32>() - 1.0).abs() < 1e-6);
/// # Ok::<(), lazyfuse::Error>(())
/// ```
pub fn realize_all(tensors: &[&Tensor]) -> Result<()> {
    let storages: Vec<&crate::store::Storage> = tensors.iter().map(|t| &*t.0.storage).collect();
    crate::realize::realize_all(&storages)
}
