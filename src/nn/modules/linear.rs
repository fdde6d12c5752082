//! `nn.Linear`: `y = x·Wᵀ + b`, with PyTorch's default initialization.

use super::named;
use crate::nn::functional as F;
use crate::nn::init;
use crate::nn::{Module, TrainingFlag};
use crate::{Result, Tensor};

/// PyTorch's `nn.Linear(in_features, out_features, bias)`: `weight` is
/// `[out_features, in_features]` and `bias` `[out_features]`, both uniform in
/// `±1/√in_features` (Kaiming-uniform with `a = √5`, as PyTorch's
/// `reset_parameters`), of the default dtype on the default device.
///
/// ```
/// use lazyfuse::nn::{Linear, Module};
/// use lazyfuse::{DType, Tensor};
/// let fc = Linear::new(3, 2, true)?;
/// assert_eq!(fc.weight.shape(), vec![2, 3]);
/// assert_eq!(fc.forward(&Tensor::ones(&[5, 3], DType::F32))?.shape(), vec![5, 2]);
/// assert!(fc.weight.to_vec::<f32>()?.iter().all(|w| w.abs() <= 1.0 / 3f32.sqrt()));
/// # Ok::<(), lazyfuse::Error>(())
/// ```
#[derive(Debug)]
pub struct Linear {
    /// `[out_features, in_features]`
    pub weight: Tensor,
    /// `[out_features]`, where the layer has one
    pub bias: Option<Tensor>,
    training: TrainingFlag,
}

impl Linear {
    /// A layer with freshly initialized parameters.
    pub fn new(in_features: usize, out_features: usize, bias: bool) -> Result<Linear> {
        let (weight, bias) = init::weight_and_bias(&[out_features, in_features], bias)?;
        Ok(Linear {
            weight,
            bias,
            training: TrainingFlag::new(),
        })
    }
}

impl Module for Linear {
    fn forward(&self, input: &Tensor) -> Result<Tensor> {
        F::linear(input, &self.weight, self.bias.as_ref())
    }

    fn own_parameters(&self) -> Vec<(String, Tensor)> {
        named(&[("weight", Some(&self.weight)), ("bias", self.bias.as_ref())])
    }

    fn training_flag(&self) -> Option<&TrainingFlag> {
        Some(&self.training)
    }
}
