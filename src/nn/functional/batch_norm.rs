//! `batch_norm`: per-channel normalization by the batch's statistics (training) or
//! by running ones (evaluation), and the in-place update of the running statistics.

use super::norm::{affine, normalize};
use super::{invalid, is_channels_last, keep_format, require_float};
use crate::{Result, Tensor};
use lazyfuse_ir::typing::opmath;

/// `t` (`[C]`) shaped to broadcast against `[N, C, *]` of `rank` dims.
fn per_channel(t: &Tensor, rank: usize) -> Result<Tensor> {
    let mut s = vec![-1isize];
    s.resize(rank - 1, 1);
    t.reshape(&s)
}

/// PyTorch's `F.batch_norm(input, running_mean, running_var, weight, bias,
/// training, momentum, eps)` over `[N, C, *]`, per channel (dim 1).
///
/// Training: normalizes by the batch's mean and biased variance over every dim
/// but the channels, and, where running statistics are given, updates them in
/// place (outside autograd): `running = (1 − momentum)·running + momentum·batch`,
/// the variance's batch value unbiased (`n/(n − 1)`), as PyTorch does.
/// Evaluation: normalizes by the running statistics, which must be given. Then
/// `weight` and `bias` (`[C]`) where given.
///
/// ```
/// use lazyfuse::nn::functional as F;
/// use lazyfuse::{DType, Tensor};
/// let x = Tensor::from_vec(vec![1.0f32, 3.0], &[2, 1])?;
/// let (m, v) = (Tensor::zeros(&[1], DType::F32), Tensor::ones(&[1], DType::F32));
/// let y = F::batch_norm(&x, Some(&m), Some(&v), None, None, true, 0.5, 0.0)?;
/// assert_eq!(y.to_vec::<f32>()?, vec![-1.0, 1.0]);
/// // mean 2, unbiased variance 2: halfway from (0, 1)
/// assert_eq!((m.to_vec::<f32>()?, v.to_vec::<f32>()?), (vec![1.0], vec![1.5]));
/// # Ok::<(), lazyfuse::Error>(())
/// ```
#[allow(clippy::too_many_arguments)]
pub fn batch_norm(
    input: &Tensor,
    running_mean: Option<&Tensor>,
    running_var: Option<&Tensor>,
    weight: Option<&Tensor>,
    bias: Option<&Tensor>,
    training: bool,
    momentum: f64,
    eps: f64,
) -> Result<Tensor> {
    let shape = input.shape();
    if shape.len() < 2 {
        return Err(invalid(
            "batch_norm",
            format!(
                "batch_norm: expected an input of at least 2 dims ([N, C, *]), got {}",
                shape.len()
            ),
        ));
    }
    let channels = shape[1];
    for (what, t) in [
        ("running_mean", running_mean),
        ("running_var", running_var),
        ("weight", weight),
        ("bias", bias),
    ] {
        if let Some(t) = t {
            if t.numel() != channels {
                return Err(invalid(
                    "batch_norm",
                    format!(
                        "{what} should contain {channels} elements not {}",
                        t.numel()
                    ),
                ));
            }
        }
    }
    require_float("batch_norm", input.dtype())?;
    let rank = shape.len();
    let x = input.to_dtype(opmath(input.dtype()))?;
    let normalized = if training {
        let per_channel_count = input.numel() / channels.max(1);
        if per_channel_count <= 1 {
            return Err(invalid("batch_norm", format!(
                "Expected more than 1 value per channel when training, got input size torch.Size({shape:?})"
            )));
        }
        // channels first, then each channel's values in one row
        let rows = x.transpose(0, 1)?.reshape(&[channels as isize, -1])?;
        let y = normalize(&rows, &[-1], eps)?;
        if let (Some(rm), Some(rv)) = (running_mean, running_var) {
            update_running(&rows, rm, rv, momentum, per_channel_count)?;
        } else if running_mean.is_some() || running_var.is_some() {
            return Err(invalid(
                "batch_norm",
                "running_mean and running_var must both be given or both be None",
            ));
        }
        let mut moved = shape.clone();
        moved.swap(0, 1);
        y.reshape(&moved.iter().map(|&d| d as isize).collect::<Vec<_>>())?
            .transpose(0, 1)?
    } else {
        let (Some(rm), Some(rv)) = (running_mean, running_var) else {
            return Err(invalid(
                "batch_norm",
                "running_mean and running_var must be defined in evaluation mode",
            ));
        };
        let mean = per_channel(&rm.to_dtype(x.dtype())?, rank)?;
        let rstd = per_channel(&rv.to_dtype(x.dtype())?.add(eps)?.rsqrt()?, rank)?;
        x.sub(&mean)?.mul(&rstd)?
    };
    let w = weight.map(|t| per_channel(t, rank)).transpose()?;
    let b = bias.map(|t| per_channel(t, rank)).transpose()?;
    let y = affine(normalized, w.as_ref(), b.as_ref())?.to_dtype(input.dtype())?;
    keep_format(y, is_channels_last(input))
}

/// `running = (1 − momentum)·running + momentum·batch` for the mean and the
/// unbiased variance of each row of `rows` (`[C, n]`), in place and outside
/// autograd.
fn update_running(
    rows: &Tensor,
    running_mean: &Tensor,
    running_var: &Tensor,
    momentum: f64,
    n: usize,
) -> Result<()> {
    crate::no_grad(|| -> Result<()> {
        let rows = rows.detach();
        let mean = rows.mean(&[-1], false)?;
        let centered = rows.sub(&mean.unsqueeze(-1)?)?;
        let unbiased = centered
            .mul(&centered)?
            .sum(&[-1], false)?
            .div((n - 1) as f64)?;
        for (running, batch) in [(running_mean, mean), (running_var, unbiased)] {
            let shape: Vec<isize> = running.shape().iter().map(|&d| d as isize).collect();
            let next = batch
                .mul(momentum)?
                .add(&running.mul(1.0 - momentum)?)?
                .reshape(&shape)?;
            running.copy_(&next)?;
        }
        Ok(())
    })
}
