//! `torch.nn.utils`: `clip_grad_norm_`.

use crate::{Result, Tensor};
use lazyfuse_ir::Error as IrError;

/// PyTorch's `torch.nn.utils.clip_grad_norm_(parameters, max_norm, norm_type,
/// error_if_nonfinite)`: the `norm_type` norm of all the parameters' gradients
/// together (the norm of their norms; `f64::INFINITY` is the largest magnitude),
/// and, where it exceeds `max_norm`, every gradient scaled in place by
/// `max_norm / (norm + 1e-6)`. Parameters without a gradient are skipped; with
/// none, the norm is 0. Returns the total norm (before clipping). With
/// `error_if_nonfinite`, a NaN or infinite norm is PyTorch's error (the norm is
/// read to check it); without, the gradients are scaled by it anyway.
///
/// ```
/// use lazyfuse::nn::utils::clip_grad_norm_;
/// use lazyfuse::Tensor;
/// let w = Tensor::from_vec(vec![1.0f32, 1.0], &[2])?.requires_grad_(true)?;
/// w.mul(&Tensor::from_vec(vec![3.0f32, 4.0], &[2])?)?.sum(&[], false)?.backward()?;
/// let norm = clip_grad_norm_(&[&w], 1.0, 2.0, false)?;
/// assert_eq!(norm.to_vec::<f32>()?, vec![5.0]);
/// let g = w.grad().unwrap().to_vec::<f32>()?;
/// assert!((g[0] - 0.6).abs() < 1e-6 && (g[1] - 0.8).abs() < 1e-6);
/// # Ok::<(), lazyfuse::Error>(())
/// ```
pub fn clip_grad_norm_(
    parameters: &[&Tensor],
    max_norm: f64,
    norm_type: f64,
    error_if_nonfinite: bool,
) -> Result<Tensor> {
    let grads: Vec<Tensor> = parameters.iter().filter_map(|p| p.grad()).collect();
    if grads.is_empty() {
        return Ok(Tensor::scalar(0.0f32));
    }
    crate::no_grad(|| {
        let norms = grads
            .iter()
            .map(|g| g.norm(norm_type, &[], false))
            .collect::<Result<Vec<_>>>()?;
        let total =
            Tensor::stack(&norms.iter().collect::<Vec<_>>(), 0)?.norm(norm_type, &[], false)?;
        if error_if_nonfinite && !total.to_vec::<f64>()?[0].is_finite() {
            return Err(IrError::invalid(
                "clip_grad_norm_",
                format!(
                    "The total norm of order {norm_type} for gradients from `parameters` is non-finite, so it cannot be clipped. To disable this error and scale the gradients by the non-finite norm anyway, set `error_if_nonfinite=False`"
                ),
            )
            .into());
        }
        let coef = total
            .add(1e-6)?
            .reciprocal()?
            .mul(max_norm)?
            .clamp_max(1.0)?;
        for g in &grads {
            g.mul_(&coef)?;
        }
        Ok(total)
    })
}
