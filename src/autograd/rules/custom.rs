//! Derivatives of the API ops whose nodes would differentiate otherwise: `clamp`
//! with number bounds (its `maximum`/`minimum` nodes would split the gradient at a
//! bound, where PyTorch stops it) and the values of `max(dim)`/`min(dim)` (their `amax` node
//! would share it among ties, where PyTorch sends it to the returned index), and
//! `matmul` over a transposed operand (its gradient is computed transposed), the
//! normalization of `layer_norm` and `group_norm` (PyTorch's closed-form gradient),
//! and 2-D convolutions (their gradients are convolutions, written beside the op).

use super::Ctx;
use crate::autograd::record::Custom;
use crate::error::Result;
use crate::tensor::Tensor;
use lazyfuse_ir::{ArgReduceOp, DType};

/// The gradients of a custom rule's inputs.
pub(super) fn input_grads(custom: Custom, c: &Ctx) -> Result<Vec<Option<Tensor>>> {
    match custom {
        Custom::Clamp { min, max } => clamp(min, max, c),
        Custom::Matmul { transposed } => super::shape::matmul(transposed, c),
        Custom::Normalize { dims, eps } => Ok(vec![c.when(0, || normalize(dims, eps, c))?]),
        Custom::Conv2d { geometry, grads } => {
            let needs = [0, 1].map(|i| c.needs.get(i).copied().unwrap_or(false));
            Ok(grads(geometry, c.x(0), c.x(1), c.grad, needs)?.into())
        }
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
                // the gradient where the position along `d` is the index, zero
                // elsewhere: `zeros.scatter(d, index, g)` as one elementwise
                // select, which fuses with its neighbours (a scatter is an extern
                // step of its own)
                let mut along = vec![1isize; x.ndim()];
                along[axis] = x.shape()[axis] as isize;
                let positions =
                    Tensor::arange_on(0.0, x.shape()[axis] as f64, 1.0, DType::I64, x.device())?
                        .reshape(&along)?;
                Tensor::where_cond(&positions.eq(&index)?, &g, 0.0)
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

/// The gradient of `(x - mean) / sqrt(var + eps)` over the last `dims` dims:
/// `rstd·(g − mean(g) − x̂·mean(g·x̂))` for the output's gradient `g` and `x̂` the
/// normalized input, computed in float64 and rounded once. On short rows the
/// terms cancel to a few significant digits, so float32 arithmetic (PyTorch's,
/// or the chain rule through the mean and variance) loses what the tolerance of
/// PyTorch's own results keeps; the float64 value is within it.
fn normalize(dims: usize, eps: f64, c: &Ctx) -> Result<Tensor> {
    let dtype = c.x(0).dtype();
    let x = c.x(0).to_dtype(DType::F64)?;
    let g = c.grad.to_dtype(DType::F64)?;
    let axes: Vec<isize> = (1..=dims as isize).rev().map(|d| -d).collect();
    let centered = x.sub(&x.mean(&axes, true)?)?;
    let var = centered.mul(&centered)?.mean(&axes, true)?;
    let rstd = var.add(eps)?.rsqrt()?;
    let xhat = centered.mul(&rstd)?;
    let mean_g = g.mean(&axes, true)?;
    let mean_gx = g.mul(&xhat)?.mean(&axes, true)?;
    g.sub(&mean_g)?
        .sub(&xhat.mul(&mean_gx)?)?
        .mul(&rstd)?
        .to_dtype(dtype)
}
