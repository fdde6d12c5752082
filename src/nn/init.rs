//! `torch.nn.init`: the initializations the modules use by default, drawn from
//! the global Philox generator (`manual_seed`) in place, outside autograd.

use crate::{Result, Tensor};
use lazyfuse_ir::Error as IrError;

/// PyTorch's `_calculate_fan_in_and_fan_out`: the fans of a weight of at least two
/// dims (`[out, in, *kernel]`: `in · kernel` and `out · kernel`).
///
/// ```
/// use lazyfuse::nn::init::fans;
/// use lazyfuse::{DType, Tensor};
/// assert_eq!(fans(&Tensor::zeros(&[8, 3, 5, 5], DType::F32))?, (75, 200));
/// assert!(fans(&Tensor::zeros(&[8], DType::F32)).is_err());
/// # Ok::<(), lazyfuse::Error>(())
/// ```
pub fn fans(tensor: &Tensor) -> Result<(usize, usize)> {
    let shape = tensor.shape();
    if shape.len() < 2 {
        return Err(IrError::invalid(
            "kaiming_uniform_",
            "Fan in and fan out can not be computed for tensor with fewer than 2 dimensions",
        )
        .into());
    }
    let receptive: usize = shape[2..].iter().product();
    Ok((shape[1] * receptive, shape[0] * receptive))
}

/// PyTorch's `kaiming_uniform_(tensor, a, mode="fan_in",
/// nonlinearity="leaky_relu")`: uniform in `[-b, b]` with `b = gain · √(3 /
/// fan_in)` and `gain = √(2 / (1 + a²))`. With `a = √5` (what `Linear` and `Conv2d`
/// use) `b = 1 / √fan_in`.
///
/// ```
/// use lazyfuse::nn::init::kaiming_uniform_;
/// use lazyfuse::{DType, Tensor};
/// let w = Tensor::zeros(&[16, 4], DType::F32);
/// kaiming_uniform_(&w, 5f64.sqrt())?;
/// assert!(w.to_vec::<f32>()?.iter().all(|v| v.abs() <= 0.5));
/// # Ok::<(), lazyfuse::Error>(())
/// ```
pub fn kaiming_uniform_(tensor: &Tensor, a: f64) -> Result<()> {
    let (fan_in, _) = fans(tensor)?;
    if fan_in == 0 {
        // PyTorch warns ("Initializing zero-element tensors is a no-op") and leaves it
        return Ok(());
    }
    let gain = (2.0 / (1.0 + a * a)).sqrt();
    let bound = gain * (3.0 / fan_in as f64).sqrt();
    crate::no_grad(|| tensor.uniform_(-bound, bound))
}

/// A new parameter: `value` realized (its random draws done once, not part of
/// every later graph) and requiring grad.
pub(crate) fn parameter(value: &Tensor) -> Result<Tensor> {
    value.realize()?;
    value.requires_grad_(true)
}

/// A new buffer: `value` realized, not requiring grad.
pub(crate) fn buffer(value: &Tensor) -> Result<Tensor> {
    value.realize()
}

/// The parameters of `Linear` and `Conv2d` as PyTorch's `reset_parameters` makes
/// them, of the default dtype: a weight of `shape` by [`kaiming_uniform_`] with
/// `a = √5`, and (where `bias`) a bias of `shape[0]` uniform in `±1/√fan_in` (0
/// for an empty fan).
pub(crate) fn weight_and_bias(shape: &[usize], bias: bool) -> Result<(Tensor, Option<Tensor>)> {
    let weight = Tensor::zeros(shape, crate::default_dtype());
    kaiming_uniform_(&weight, 5f64.sqrt())?;
    let bias = if bias {
        let (fan_in, _) = fans(&weight)?;
        let bound = if fan_in > 0 {
            1.0 / (fan_in as f64).sqrt()
        } else {
            0.0
        };
        let b = Tensor::zeros(&shape[..1], crate::default_dtype());
        b.uniform_(-bound, bound)?;
        Some(parameter(&b)?)
    } else {
        None
    };
    Ok((parameter(&weight)?, bias))
}
