//! The normalizations of `torch.nn.functional`: `layer_norm`, `rms_norm`,
//! `group_norm`, and the parts `batch_norm` (its own file: it updates running
//! statistics) shares with them.
//!
//! Each computes in the input's opmath dtype (float32 for float16/bfloat16, as
//! PyTorch's kernels do) and returns the input's dtype; the statistics are biased
//! (divided by the count), as PyTorch's are.

use super::require_float;
use crate::autograd::record::Custom;
use crate::autograd::with_custom_rule;
use crate::{Result, Tensor};
use lazyfuse_ir::typing::opmath;
use lazyfuse_ir::{DType, Error as IrError};

/// The trailing dims `normalized_shape` names, checked against `input` as PyTorch's
/// `layer_norm` and `rms_norm` check them; returns them as negative dims.
fn trailing_dims(input: &Tensor, normalized_shape: &[usize]) -> Result<Vec<isize>> {
    let op = "layer_norm";
    if normalized_shape.is_empty() {
        return Err(IrError::invalid(
            op,
            "Expected normalized_shape to be at least 1-dimensional, i.e., containing at least one element, but got normalized_shape = []",
        )
        .into());
    }
    let shape = input.shape();
    let n = normalized_shape.len();
    if shape.len() < n || shape[shape.len() - n..] != *normalized_shape {
        return Err(IrError::invalid(
            op,
            format!(
                "Given normalized_shape={normalized_shape:?}, expected input with shape [*, {}], but got input of size{shape:?}",
                normalized_shape
                    .iter()
                    .map(usize::to_string)
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        )
        .into());
    }
    Ok((1..=n as isize).rev().map(|d| -d).collect())
}

/// Checks that an affine parameter has the normalized shape.
fn check_param(what: &str, t: Option<&Tensor>, normalized_shape: &[usize]) -> Result<()> {
    match t {
        Some(t) if t.shape() != normalized_shape => Err(IrError::invalid(
            "layer_norm",
            format!(
                "Expected {what} to be of same shape as normalized_shape, but got {what} of shape {:?} and normalized_shape = {normalized_shape:?}",
                t.shape()
            ),
        )
        .into()),
        _ => Ok(()),
    }
}

/// `y * weight + bias`, each where given.
pub(super) fn affine(y: Tensor, weight: Option<&Tensor>, bias: Option<&Tensor>) -> Result<Tensor> {
    let y = match weight {
        Some(w) => y.mul(w)?,
        None => y,
    };
    match bias {
        Some(b) => y.add(b),
        None => Ok(y),
    }
}

/// PyTorch's `F.layer_norm`: normalizes over the trailing dims `normalized_shape`
/// (mean 0, biased variance 1, `eps` added to the variance), then scales by
/// `weight` and shifts by `bias` (both of that shape) where given.
///
/// ```
/// use lazyfuse::nn::functional as F;
/// use lazyfuse::Tensor;
/// let x = Tensor::from_vec(vec![1.0f32, 3.0, 2.0, 6.0], &[2, 2])?;
/// let y = F::layer_norm(&x, &[2], None, None, 0.0)?;
/// assert_eq!(y.to_vec::<f32>()?, vec![-1.0, 1.0, -1.0, 1.0]);
/// assert!(F::layer_norm(&x, &[3], None, None, 1e-5).is_err());
/// # Ok::<(), lazyfuse::Error>(())
/// ```
pub fn layer_norm(
    input: &Tensor,
    normalized_shape: &[usize],
    weight: Option<&Tensor>,
    bias: Option<&Tensor>,
    eps: f64,
) -> Result<Tensor> {
    let dims = trailing_dims(input, normalized_shape)?;
    check_param("weight", weight, normalized_shape)?;
    check_param("bias", bias, normalized_shape)?;
    require_float("LayerNormKernelImpl", input.dtype())?;
    let x = input.to_dtype(opmath(input.dtype()))?;
    affine(normalize(&x, &dims, eps)?, weight, bias)?.to_dtype(input.dtype())
}

/// `(x - mean) / sqrt(var + eps)` over `dims` (the trailing ones; biased
/// variance), differentiated by PyTorch's closed form ([`Custom::Normalize`]).
pub(super) fn normalize(x: &Tensor, dims: &[isize], eps: f64) -> Result<Tensor> {
    let centered = x.sub(&x.mean(dims, true)?)?;
    let var = centered.mul(&centered)?.mean(dims, true)?;
    let y = centered.mul(&var.add(eps)?.rsqrt()?)?;
    let custom = Custom::Normalize {
        dims: dims.len(),
        eps,
    };
    with_custom_rule(&y, custom, &[x])
}

/// The machine epsilon of a floating dtype (PyTorch's `torch.finfo(dtype).eps`).
fn machine_eps(dtype: DType) -> f64 {
    match dtype {
        DType::F16 => 0.0009765625,
        DType::BF16 => 0.0078125,
        DType::F64 => f64::EPSILON,
        _ => f64::from(f32::EPSILON),
    }
}

/// PyTorch's `F.rms_norm`: `x / sqrt(mean(x²) + eps)` over the trailing dims
/// `normalized_shape`, times `weight` where given; `eps` `None` is the machine
/// epsilon of the input's dtype, as in PyTorch.
///
/// ```
/// use lazyfuse::nn::functional as F;
/// use lazyfuse::Tensor;
/// let x = Tensor::from_vec(vec![3.0f32, 4.0], &[1, 2])?;
/// let y = F::rms_norm(&x, &[2], None, Some(0.0))?;
/// let r = (12.5f32).sqrt();
/// assert_eq!(y.to_vec::<f32>()?, vec![3.0 * (1.0 / r), 4.0 * (1.0 / r)]);
/// # Ok::<(), lazyfuse::Error>(())
/// ```
pub fn rms_norm(
    input: &Tensor,
    normalized_shape: &[usize],
    weight: Option<&Tensor>,
    eps: Option<f64>,
) -> Result<Tensor> {
    let dims = trailing_dims(input, normalized_shape)?;
    check_param("weight", weight, normalized_shape)?;
    require_float("rms_norm", input.dtype())?;
    let eps = eps.unwrap_or_else(|| machine_eps(input.dtype()));
    let x = input.to_dtype(opmath(input.dtype()))?;
    let rms = x.mul(&x)?.mean(&dims, true)?.add(eps)?.rsqrt()?;
    let y = x.mul(&rms)?.to_dtype(input.dtype())?;
    affine(y, weight, None)
}

/// PyTorch's `F.group_norm`: the channels (dim 1) of each sample split into
/// `num_groups` groups, each normalized over its channels and the spatial dims,
/// then per-channel `weight` and `bias` (of shape `[C]`) where given.
///
/// ```
/// use lazyfuse::nn::functional as F;
/// use lazyfuse::Tensor;
/// let x = Tensor::from_vec(vec![1.0f32, 3.0, 5.0, 9.0], &[1, 2, 2])?;
/// let y = F::group_norm(&x, 2, None, None, 0.0)?;
/// assert_eq!(y.to_vec::<f32>()?, vec![-1.0, 1.0, -1.0, 1.0]);
/// assert!(F::group_norm(&x, 3, None, None, 1e-5).is_err());
/// # Ok::<(), lazyfuse::Error>(())
/// ```
pub fn group_norm(
    input: &Tensor,
    num_groups: usize,
    weight: Option<&Tensor>,
    bias: Option<&Tensor>,
    eps: f64,
) -> Result<Tensor> {
    let op = "group_norm";
    let shape = input.shape();
    if shape.len() < 2 {
        return Err(IrError::invalid(
            op,
            format!(
                "Expected at least 2 dimensions for input tensor but received {}",
                shape.len()
            ),
        )
        .into());
    }
    let channels = shape[1];
    if num_groups == 0 || !channels.is_multiple_of(num_groups) {
        return Err(IrError::invalid(
            op,
            format!(
                "Expected number of channels in input to be divisible by num_groups, but got input of shape {shape:?} and num_groups={num_groups}"
            ),
        )
        .into());
    }
    for (what, t) in [("weight", weight), ("bias", bias)] {
        if let Some(t) = t {
            if t.shape() != [channels] {
                return Err(IrError::invalid(
                    op,
                    format!(
                        "Expected {what} to be a vector of size equal to the number of channels in input, but got {what} of shape {:?} and input of shape {shape:?}",
                        t.shape()
                    ),
                )
                .into());
            }
        }
    }
    require_float("GroupNormKernelImpl", input.dtype())?;
    let x = input.to_dtype(opmath(input.dtype()))?;
    let grouped = x.reshape(&[shape[0] as isize, num_groups as isize, -1])?;
    let y = normalize(&grouped, &[-1], eps)?
        .reshape(&shape.iter().map(|&d| d as isize).collect::<Vec<_>>())?;
    // per channel: [C] as [C, 1, …] against [N, C, *]
    let per_channel = |t: &Tensor| -> Result<Tensor> {
        let mut s = vec![channels as isize];
        s.resize(shape.len() - 1, 1);
        t.reshape(&s)
    };
    let w = weight.map(per_channel).transpose()?;
    let b = bias.map(per_channel).transpose()?;
    affine(y, w.as_ref(), b.as_ref())?.to_dtype(input.dtype())
}
