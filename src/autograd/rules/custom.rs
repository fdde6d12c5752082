//! Derivatives of the API ops whose nodes would differentiate otherwise: `clamp`
//! with number bounds (its `maximum`/`minimum` nodes would split the gradient at a
//! bound, where PyTorch stops it) and the values of `max(dim)`/`min(dim)` (their `amax` node
//! would share it among ties, where PyTorch sends it to the returned index), and
//! `matmul` over a transposed operand (its gradient is computed transposed).

use super::{zeros_like, Ctx};
use crate::autograd::record::Custom;
use crate::error::Result;
use crate::tensor::Tensor;
use lazyfuse_ir::ArgReduceOp;

/// The gradients of a custom rule's inputs.
pub(super) fn input_grads(custom: Custom, c: &Ctx) -> Result<Vec<Option<Tensor>>> {
    match custom {
        Custom::Clamp { min, max } => clamp(min, max, c),
        Custom::Matmul { transposed } => super::shape::matmul(transposed, c),
        Custom::ArgExtreme { op, axis, keepdim } => {
            let (x, g) = (c.x(0), c.grad);
            Ok(vec![c.when(0, || {
                if x.ndim() == 0 {
                    return g.reshape(&[]);
                }
                let d = axis as isize;
                let index = match op {
                    ArgReduceOp::ArgMax => x.argmax(Some(d), true)?,
                    ArgReduceOp::ArgMin => x.argmin(Some(d), true)?,
                };
                let g = if keepdim { g.clone() } else { g.unsqueeze(d)? };
                zeros_like(x)?.scatter(d, &index, &g)
            })?])
        }
    }
}

/// `clamp`'s derivative with number bounds: the gradient passes strictly inside
/// them (zero at a bound, as PyTorch 2.15 gives).
fn clamp(min: Option<f64>, max: Option<f64>, c: &Ctx) -> Result<Vec<Option<Tensor>>> {
    let (x, g) = (c.x(0), c.grad);
    Ok(vec![c.when(0, || {
        let inside = match (min, max) {
            (Some(lo), Some(hi)) => x.gt(lo)?.logical_and(&x.lt(hi)?)?,
            (Some(lo), None) => x.gt(lo)?,
            (None, Some(hi)) => x.lt(hi)?,
            (None, None) => return Ok(g.clone()),
        };
        Tensor::where_cond(&inside, g, 0.0)
    })?])
}
