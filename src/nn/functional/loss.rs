//! The regression losses of `torch.nn.functional` (`mse_loss`, `l1_loss`,
//! `smooth_l1_loss`, `huber_loss`) and their [`Reduction`].
//!
//! Each is elementwise over the broadcast of `input` and `target` (PyTorch
//! broadcasts them too, with a warning), then reduced. The elementwise forms are
//! PyTorch's kernels' (`z < beta ? 0.5 * z * z / beta : z - 0.5 * beta` for
//! smooth L1), so autograd's rules give PyTorch's derivatives, including at the
//! branch points.

use crate::{Error, Result, Tensor};
use lazyfuse_ir::Error as IrError;

/// How a loss reduces its elementwise values: PyTorch's `reduction=` string.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Reduction {
    /// the elementwise values (`"none"`)
    None,
    /// their mean (`"mean"`, the default)
    #[default]
    Mean,
    /// their sum (`"sum"`)
    Sum,
}

impl Reduction {
    /// Applies the reduction to elementwise losses.
    pub(super) fn apply(self, losses: Tensor) -> Result<Tensor> {
        match self {
            Reduction::None => Ok(losses),
            Reduction::Mean => losses.mean(&[], false),
            Reduction::Sum => losses.sum(&[], false),
        }
    }
}

impl std::str::FromStr for Reduction {
    type Err = Error;

    /// PyTorch's strings: `"none"`, `"mean"`, `"sum"`.
    ///
    /// ```
    /// use lazyfuse::nn::functional::Reduction;
    /// assert_eq!("sum".parse::<Reduction>()?, Reduction::Sum);
    /// assert!("avg".parse::<Reduction>().is_err());
    /// # Ok::<(), lazyfuse::Error>(())
    /// ```
    fn from_str(s: &str) -> Result<Reduction> {
        match s {
            "none" => Ok(Reduction::None),
            "mean" => Ok(Reduction::Mean),
            "sum" => Ok(Reduction::Sum),
            other => Err(IrError::invalid(
                "reduction",
                format!("{other} is not a valid value for reduction"),
            )
            .into()),
        }
    }
}

/// `input - target` in their promoted dtype, refused (as PyTorch's kernel
/// `kernel` refuses it) unless that dtype is a real floating one.
fn float_difference(kernel: &str, input: &Tensor, target: &Tensor) -> Result<Tensor> {
    let d = input.sub(target)?;
    super::require_float(kernel, d.dtype())?;
    Ok(d)
}

/// Mean squared error, PyTorch's `F.mse_loss(input, target, reduction=...)`.
///
/// ```
/// use lazyfuse::nn::functional::{self as F, Reduction};
/// use lazyfuse::Tensor;
/// let x = Tensor::from_vec(vec![1.0f32, 2.0, 4.0], &[3])?;
/// let y = Tensor::from_vec(vec![1.0f32, 0.0, 1.0], &[3])?;
/// assert_eq!(F::mse_loss(&x, &y, Reduction::Sum)?.to_vec::<f32>()?, vec![13.0]);
/// assert_eq!(F::mse_loss(&x, &y, Reduction::None)?.to_vec::<f32>()?, vec![0.0, 4.0, 9.0]);
/// let i = Tensor::from_vec(vec![1i64], &[1])?;
/// assert_eq!(
///     F::mse_loss(&i, &i, Reduction::Mean).unwrap_err().to_string(),
///     "\"mse_cpu\" not implemented for 'Long'"
/// );
/// # Ok::<(), lazyfuse::Error>(())
/// ```
pub fn mse_loss(input: &Tensor, target: &Tensor, reduction: Reduction) -> Result<Tensor> {
    let d = float_difference("mse_cpu", input, target)?;
    reduction.apply(d.mul(&d)?)
}

/// Mean absolute error, PyTorch's `F.l1_loss(input, target, reduction=...)`: `|input -
/// target|`, reduced (integer inputs sum; their mean is the mean's error, as in
/// PyTorch).
///
/// ```
/// use lazyfuse::nn::functional::{self as F, Reduction};
/// use lazyfuse::Tensor;
/// let x = Tensor::from_vec(vec![1.0f32, 2.0, 4.0], &[3])?;
/// let y = Tensor::from_vec(vec![1.0f32, 0.0, 1.0], &[3])?;
/// assert_eq!(F::l1_loss(&x, &y, Reduction::Mean)?.to_vec::<f32>()?, vec![5.0 / 3.0]);
/// # Ok::<(), lazyfuse::Error>(())
/// ```
pub fn l1_loss(input: &Tensor, target: &Tensor, reduction: Reduction) -> Result<Tensor> {
    reduction.apply(input.sub(target)?.abs()?)
}

/// PyTorch's `F.smooth_l1_loss(input, target, reduction=..., beta=...)`: with
/// `z = |input - target|`, `0.5 z² / beta` below `beta`, else `z - 0.5 beta`;
/// `beta = 0` is the L1 loss. A negative `beta` is PyTorch's error.
///
/// ```
/// use lazyfuse::nn::functional::{self as F, Reduction};
/// use lazyfuse::Tensor;
/// let x = Tensor::from_vec(vec![0.0f32, 0.5, 3.0], &[3])?;
/// let y = Tensor::zeros(&[3], lazyfuse::DType::F32);
/// let l = F::smooth_l1_loss(&x, &y, Reduction::None, 1.0)?;
/// assert_eq!(l.to_vec::<f32>()?, vec![0.0, 0.125, 2.5]);
/// assert!(F::smooth_l1_loss(&x, &y, Reduction::Mean, -1.0).is_err());
/// # Ok::<(), lazyfuse::Error>(())
/// ```
pub fn smooth_l1_loss(
    input: &Tensor,
    target: &Tensor,
    reduction: Reduction,
    beta: f64,
) -> Result<Tensor> {
    if beta < 0.0 {
        return Err(IrError::invalid(
            "smooth_l1_loss",
            "smooth_l1_loss does not support negative values for beta.",
        )
        .into());
    }
    let d = float_difference("smooth_l1_cpu", input, target)?;
    let z = d.abs()?;
    if beta == 0.0 {
        return reduction.apply(z);
    }
    let quadratic = z.mul(&z)?.mul(0.5)?.div(beta)?;
    let linear = z.sub(0.5 * beta)?;
    reduction.apply(Tensor::where_cond(&z.lt(beta)?, &quadratic, &linear)?)
}

/// PyTorch's `F.huber_loss(input, target, reduction=..., delta=...)`: with
/// `z = |input - target|`, `0.5 z²` below `delta`, else `delta (z - 0.5 delta)`.
/// `delta` must be positive, as in PyTorch.
///
/// ```
/// use lazyfuse::nn::functional::{self as F, Reduction};
/// use lazyfuse::Tensor;
/// let x = Tensor::from_vec(vec![0.5f32, 3.0], &[2])?;
/// let y = Tensor::zeros(&[2], lazyfuse::DType::F32);
/// assert_eq!(F::huber_loss(&x, &y, Reduction::None, 1.0)?.to_vec::<f32>()?, vec![0.125, 2.5]);
/// assert!(F::huber_loss(&x, &y, Reduction::Sum, 0.0).is_err());
/// # Ok::<(), lazyfuse::Error>(())
/// ```
pub fn huber_loss(
    input: &Tensor,
    target: &Tensor,
    reduction: Reduction,
    delta: f64,
) -> Result<Tensor> {
    if delta <= 0.0 {
        return Err(IrError::invalid(
            "huber_loss",
            "huber_loss does not support non-positive values for delta.",
        )
        .into());
    }
    let d = float_difference("huber_cpu", input, target)?;
    let z = d.abs()?;
    let quadratic = z.mul(&z)?.mul(0.5)?;
    let linear = z.sub(0.5 * delta)?.mul(delta)?;
    reduction.apply(Tensor::where_cond(&z.lt(delta)?, &quadratic, &linear)?)
}
