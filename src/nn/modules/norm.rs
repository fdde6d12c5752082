//! `nn.BatchNorm2d` and `nn.LayerNorm`, with PyTorch's parameters, buffers and
//! defaults.

use super::named;
use crate::nn::functional as F;
use crate::nn::init::{buffer, parameter};
use crate::nn::{Module, TrainingFlag};
use crate::{DType, Result, Tensor};
use lazyfuse_ir::Error as IrError;

/// PyTorch's `nn.BatchNorm2d(num_features, eps, momentum, affine,
/// track_running_stats)` over `[N, C, H, W]`: `weight` (ones) and `bias` (zeros)
/// where affine; the buffers `running_mean` (zeros), `running_var` (ones) and
/// `num_batches_tracked` (an int64 count) where it tracks running statistics.
/// Training normalizes by the batch's statistics and updates the running ones in
/// place (by `momentum`, or by the cumulative average `1 / num_batches_tracked`
/// where `momentum` is `None`); evaluation uses the running ones.
///
/// ```
/// use lazyfuse::nn::{BatchNorm2d, Module};
/// use lazyfuse::Tensor;
/// let bn = BatchNorm2d::new(1)?;
/// let x = Tensor::from_vec(vec![1.0f32, 3.0], &[2, 1, 1, 1])?;
/// let y = bn.forward(&x)?; // (x - 2) / sqrt(1 + eps)
/// assert!((y.to_vec::<f32>()?[1] - 1.0).abs() < 1e-4);
/// assert_eq!(bn.running_mean.as_ref().unwrap().to_vec::<f32>()?, vec![0.2]);
/// assert_eq!(bn.num_batches_tracked.as_ref().unwrap().to_vec::<i64>()?, vec![1]);
/// let names: Vec<String> = bn.state_dict().into_iter().map(|(n, _)| n).collect();
/// assert_eq!(names, ["weight", "bias", "running_mean", "running_var", "num_batches_tracked"]);
/// # Ok::<(), lazyfuse::Error>(())
/// ```
#[derive(Debug)]
pub struct BatchNorm2d {
    /// `[C]` scale, where affine
    pub weight: Option<Tensor>,
    /// `[C]` shift, where affine
    pub bias: Option<Tensor>,
    /// `[C]`, where tracked
    pub running_mean: Option<Tensor>,
    /// `[C]`, where tracked
    pub running_var: Option<Tensor>,
    /// 0-dim int64, where tracked
    pub num_batches_tracked: Option<Tensor>,
    /// added to the variance
    pub eps: f64,
    /// the running statistics' update factor (`None`: cumulative average)
    pub momentum: Option<f64>,
    training: TrainingFlag,
}

impl BatchNorm2d {
    /// PyTorch's defaults: `eps = 1e-5`, `momentum = 0.1`, affine, tracked.
    pub fn new(num_features: usize) -> Result<BatchNorm2d> {
        BatchNorm2d::with_options(num_features, 1e-5, Some(0.1), true, true)
    }

    /// Every option.
    pub fn with_options(
        num_features: usize,
        eps: f64,
        momentum: Option<f64>,
        affine: bool,
        track_running_stats: bool,
    ) -> Result<BatchNorm2d> {
        let dtype = crate::default_dtype();
        let c = [num_features];
        let (weight, bias) = if affine {
            (
                Some(parameter(&Tensor::ones(&c, dtype))?),
                Some(parameter(&Tensor::zeros(&c, dtype))?),
            )
        } else {
            (None, None)
        };
        let (running_mean, running_var, num_batches_tracked) = if track_running_stats {
            (
                Some(buffer(&Tensor::zeros(&c, dtype))?),
                Some(buffer(&Tensor::ones(&c, dtype))?),
                Some(buffer(&Tensor::zeros(&[], DType::I64))?),
            )
        } else {
            (None, None, None)
        };
        Ok(BatchNorm2d {
            weight,
            bias,
            running_mean,
            running_var,
            num_batches_tracked,
            eps,
            momentum,
            training: TrainingFlag::new(),
        })
    }
}

impl Module for BatchNorm2d {
    fn forward(&self, input: &Tensor) -> Result<Tensor> {
        if input.ndim() != 4 {
            return Err(IrError::invalid(
                "BatchNorm2d",
                format!("expected 4D input (got {}D input)", input.ndim()),
            )
            .into());
        }
        let training = self.training.get();
        let mut factor = self.momentum.unwrap_or(0.0);
        if training {
            if let Some(count) = &self.num_batches_tracked {
                crate::no_grad(|| count.add_(1))?;
                if self.momentum.is_none() {
                    factor = 1.0 / count.to_vec::<i64>()?[0] as f64;
                }
            }
        }
        let batch_stats = training || self.running_mean.is_none();
        F::batch_norm(
            input,
            self.running_mean.as_ref(),
            self.running_var.as_ref(),
            self.weight.as_ref(),
            self.bias.as_ref(),
            batch_stats,
            factor,
            self.eps,
        )
    }

    fn own_parameters(&self) -> Vec<(String, Tensor)> {
        named(&[
            ("weight", self.weight.as_ref()),
            ("bias", self.bias.as_ref()),
        ])
    }

    fn own_buffers(&self) -> Vec<(String, Tensor)> {
        named(&[
            ("running_mean", self.running_mean.as_ref()),
            ("running_var", self.running_var.as_ref()),
            ("num_batches_tracked", self.num_batches_tracked.as_ref()),
        ])
    }

    fn training_flag(&self) -> Option<&TrainingFlag> {
        Some(&self.training)
    }
}

/// PyTorch's `nn.LayerNorm(normalized_shape, eps, elementwise_affine, bias)`:
/// normalizes over the trailing `normalized_shape` dims; `weight` (ones) and
/// `bias` (zeros) of that shape where affine.
///
/// ```
/// use lazyfuse::nn::{LayerNorm, Module};
/// use lazyfuse::Tensor;
/// let ln = LayerNorm::new(&[2])?;
/// let y = ln.forward(&Tensor::from_vec(vec![1.0f32, 3.0], &[1, 2])?)?;
/// let y = y.to_vec::<f32>()?;
/// assert!((y[0] + 1.0).abs() < 1e-4 && (y[1] - 1.0).abs() < 1e-4);
/// # Ok::<(), lazyfuse::Error>(())
/// ```
#[derive(Debug)]
pub struct LayerNorm {
    /// the trailing dims normalized over
    pub normalized_shape: Vec<usize>,
    /// scale of `normalized_shape`, where affine
    pub weight: Option<Tensor>,
    /// shift of `normalized_shape`, where affine with a bias
    pub bias: Option<Tensor>,
    /// added to the variance
    pub eps: f64,
    training: TrainingFlag,
}

impl LayerNorm {
    /// PyTorch's defaults: `eps = 1e-5`, affine with a bias.
    pub fn new(normalized_shape: &[usize]) -> Result<LayerNorm> {
        LayerNorm::with_options(normalized_shape, 1e-5, true, true)
    }

    /// Every option (`bias` counts only where `elementwise_affine`).
    pub fn with_options(
        normalized_shape: &[usize],
        eps: f64,
        elementwise_affine: bool,
        bias: bool,
    ) -> Result<LayerNorm> {
        let dtype = crate::default_dtype();
        let weight = elementwise_affine
            .then(|| parameter(&Tensor::ones(normalized_shape, dtype)))
            .transpose()?;
        let bias = (elementwise_affine && bias)
            .then(|| parameter(&Tensor::zeros(normalized_shape, dtype)))
            .transpose()?;
        Ok(LayerNorm {
            normalized_shape: normalized_shape.to_vec(),
            weight,
            bias,
            eps,
            training: TrainingFlag::new(),
        })
    }
}

impl Module for LayerNorm {
    fn forward(&self, input: &Tensor) -> Result<Tensor> {
        F::layer_norm(
            input,
            &self.normalized_shape,
            self.weight.as_ref(),
            self.bias.as_ref(),
            self.eps,
        )
    }

    fn own_parameters(&self) -> Vec<(String, Tensor)> {
        named(&[
            ("weight", self.weight.as_ref()),
            ("bias", self.bias.as_ref()),
        ])
    }

    fn training_flag(&self) -> Option<&TrainingFlag> {
        Some(&self.training)
    }
}
