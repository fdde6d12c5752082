//! Layers without parameters, for [`Sequential`](crate::nn::Sequential) models:
//! `nn.ReLU`, `nn.Dropout`, `nn.Flatten`, `nn.MaxPool2d`.

use crate::nn::functional as F;
use crate::nn::{Module, TrainingFlag};
use crate::{Result, Tensor};
use lazyfuse_ir::Error as IrError;

/// PyTorch's `nn.ReLU()`.
///
/// ```
/// use lazyfuse::nn::{Module, ReLU};
/// use lazyfuse::Tensor;
/// let y = ReLU::new().forward(&Tensor::from_vec(vec![-1.0f32, 2.0], &[2])?)?;
/// assert_eq!(y.to_vec::<f32>()?, vec![0.0, 2.0]);
/// # Ok::<(), lazyfuse::Error>(())
/// ```
#[derive(Debug, Default)]
pub struct ReLU {
    training: TrainingFlag,
}

impl ReLU {
    /// The layer.
    pub fn new() -> ReLU {
        ReLU::default()
    }
}

impl Module for ReLU {
    fn forward(&self, input: &Tensor) -> Result<Tensor> {
        input.relu()
    }

    fn training_flag(&self) -> Option<&TrainingFlag> {
        Some(&self.training)
    }
}

/// PyTorch's `nn.Dropout(p)`: zeroes elements with probability `p` and scales
/// the rest by `1 / (1 - p)` in training mode (Philox-seeded, `manual_seed`), the
/// identity in evaluation mode.
///
/// ```
/// use lazyfuse::nn::{Dropout, Module};
/// use lazyfuse::{DType, Tensor};
/// let drop = Dropout::new(0.5)?;
/// let x = Tensor::ones(&[1000], DType::F32);
/// let kept = drop.forward(&x)?.to_vec::<f32>()?;
/// assert!(kept.iter().all(|&v| v == 0.0 || v == 2.0));
/// drop.eval();
/// assert_eq!(drop.forward(&x)?.to_vec::<f32>()?, vec![1.0; 1000]);
/// assert!(Dropout::new(1.5).is_err());
/// # Ok::<(), lazyfuse::Error>(())
/// ```
#[derive(Debug)]
pub struct Dropout {
    /// the probability of zeroing an element
    pub p: f64,
    training: TrainingFlag,
}

impl Dropout {
    /// A dropout layer (`0 <= p <= 1`).
    pub fn new(p: f64) -> Result<Dropout> {
        if !(0.0..=1.0).contains(&p) {
            return Err(IrError::invalid(
                "Dropout",
                format!("dropout probability has to be between 0 and 1, but got {p}"),
            )
            .into());
        }
        Ok(Dropout {
            p,
            training: TrainingFlag::new(),
        })
    }
}

impl Module for Dropout {
    fn forward(&self, input: &Tensor) -> Result<Tensor> {
        F::dropout(input, self.p, self.training.get())
    }

    fn training_flag(&self) -> Option<&TrainingFlag> {
        Some(&self.training)
    }
}

/// PyTorch's `nn.Flatten(start_dim, end_dim)` (default `(1, -1)`: all but the
/// batch dim).
///
/// ```
/// use lazyfuse::nn::{Flatten, Module};
/// use lazyfuse::{DType, Tensor};
/// let y = Flatten::new().forward(&Tensor::zeros(&[2, 3, 4, 5], DType::F32))?;
/// assert_eq!(y.shape(), vec![2, 60]);
/// # Ok::<(), lazyfuse::Error>(())
/// ```
#[derive(Debug)]
pub struct Flatten {
    /// the first dim flattened
    pub start_dim: isize,
    /// the last dim flattened
    pub end_dim: isize,
    training: TrainingFlag,
}

impl Flatten {
    /// `Flatten(1, -1)`.
    pub fn new() -> Flatten {
        Flatten::with_dims(1, -1)
    }

    /// `Flatten(start_dim, end_dim)`.
    pub fn with_dims(start_dim: isize, end_dim: isize) -> Flatten {
        Flatten {
            start_dim,
            end_dim,
            training: TrainingFlag::new(),
        }
    }
}

impl Default for Flatten {
    fn default() -> Flatten {
        Flatten::new()
    }
}

impl Module for Flatten {
    fn forward(&self, input: &Tensor) -> Result<Tensor> {
        input.flatten(self.start_dim, self.end_dim)
    }

    fn training_flag(&self) -> Option<&TrainingFlag> {
        Some(&self.training)
    }
}

/// PyTorch's `nn.MaxPool2d(kernel_size, stride, padding, dilation, ceil_mode)`,
/// its arguments as [`F::max_pool2d`]'s (an empty `stride` is the kernel size).
///
/// ```
/// use lazyfuse::nn::{MaxPool2d, Module};
/// use lazyfuse::{DType, Tensor};
/// let pool = MaxPool2d::new(&[2]);
/// assert_eq!(pool.forward(&Tensor::zeros(&[1, 3, 8, 8], DType::F32))?.shape(), vec![1, 3, 4, 4]);
/// # Ok::<(), lazyfuse::Error>(())
/// ```
#[derive(Debug)]
pub struct MaxPool2d {
    /// the window
    pub kernel_size: Vec<usize>,
    /// the step between windows (empty: the window)
    pub stride: Vec<usize>,
    /// implicit `-inf` padding on both sides
    pub padding: Vec<usize>,
    /// the spacing of a window's elements
    pub dilation: Vec<usize>,
    /// whether a partial last window counts
    pub ceil_mode: bool,
    training: TrainingFlag,
}

impl MaxPool2d {
    /// `MaxPool2d(kernel_size)`: stride of the window, no padding.
    pub fn new(kernel_size: &[usize]) -> MaxPool2d {
        MaxPool2d {
            kernel_size: kernel_size.to_vec(),
            stride: Vec::new(),
            padding: vec![0],
            dilation: vec![1],
            ceil_mode: false,
            training: TrainingFlag::new(),
        }
    }
}

impl Module for MaxPool2d {
    fn forward(&self, input: &Tensor) -> Result<Tensor> {
        F::max_pool2d(
            input,
            &self.kernel_size,
            &self.stride,
            &self.padding,
            &self.dilation,
            self.ceil_mode,
        )
    }

    fn training_flag(&self) -> Option<&TrainingFlag> {
        Some(&self.training)
    }
}
