//! `nn.Conv2d`, with PyTorch's default initialization and options.

use super::named;
use crate::nn::functional as F;
use crate::nn::init;
use crate::nn::{Module, TrainingFlag};
use crate::{Result, Tensor};
use lazyfuse_ir::Error as IrError;

/// How a [`Conv2d`] pads its input: PyTorch's `padding` argument.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Conv2dPadding {
    /// zeros on both sides of H and W (`padding=(ph, pw)`; `[0, 0]` is `"valid"`)
    Explicit([usize; 2]),
    /// `padding="same"`: the output as large as the input (stride 1 only)
    Same,
}

/// The keyword arguments of PyTorch's `nn.Conv2d` past the kernel size, with its
/// defaults (stride 1, no padding, dilation 1, one group, a bias); the setters
/// take one value for both spatial dims.
///
/// ```
/// use lazyfuse::nn::{Conv2dOptions, Conv2dPadding};
/// let o = Conv2dOptions::default().padding(1).bias(false);
/// assert_eq!(o.padding, Conv2dPadding::Explicit([1, 1]));
/// assert!(!o.bias);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Conv2dOptions {
    /// the stride over (H, W)
    pub stride: [usize; 2],
    /// the padding
    pub padding: Conv2dPadding,
    /// the dilation over (H, W)
    pub dilation: [usize; 2],
    /// the number of groups (`in_channels` and `out_channels` divide by it)
    pub groups: usize,
    /// whether the layer has a bias
    pub bias: bool,
}

impl Default for Conv2dOptions {
    fn default() -> Conv2dOptions {
        Conv2dOptions {
            stride: [1, 1],
            padding: Conv2dPadding::Explicit([0, 0]),
            dilation: [1, 1],
            groups: 1,
            bias: true,
        }
    }
}

impl Conv2dOptions {
    /// `stride=s`.
    pub fn stride(self, s: usize) -> Conv2dOptions {
        Conv2dOptions {
            stride: [s, s],
            ..self
        }
    }

    /// `padding=p`.
    pub fn padding(self, p: usize) -> Conv2dOptions {
        Conv2dOptions {
            padding: Conv2dPadding::Explicit([p, p]),
            ..self
        }
    }

    /// `padding="same"`.
    pub fn same_padding(self) -> Conv2dOptions {
        Conv2dOptions {
            padding: Conv2dPadding::Same,
            ..self
        }
    }

    /// `dilation=d`.
    pub fn dilation(self, d: usize) -> Conv2dOptions {
        Conv2dOptions {
            dilation: [d, d],
            ..self
        }
    }

    /// `groups=g`.
    pub fn groups(self, g: usize) -> Conv2dOptions {
        Conv2dOptions { groups: g, ..self }
    }

    /// `bias=b`.
    pub fn bias(self, b: bool) -> Conv2dOptions {
        Conv2dOptions { bias: b, ..self }
    }
}

/// PyTorch's `nn.Conv2d(in_channels, out_channels, kernel_size, …)`: `weight` is
/// `[out_channels, in_channels / groups, kh, kw]`, `bias` `[out_channels]`, both
/// uniform in `±1/√fan_in` (`fan_in = in_channels / groups · kh · kw`; PyTorch's
/// Kaiming-uniform with `a = √5`). `kernel_size` is one value or two.
///
/// ```
/// use lazyfuse::nn::{Conv2d, Conv2dOptions, Module};
/// use lazyfuse::{DType, Tensor};
/// let conv = Conv2d::new(3, 8, &[3], Conv2dOptions::default().padding(1))?;
/// assert_eq!(conv.weight.shape(), vec![8, 3, 3, 3]);
/// let y = conv.forward(&Tensor::ones(&[2, 3, 10, 10], DType::F32))?;
/// assert_eq!(y.shape(), vec![2, 8, 10, 10]);
/// assert!(Conv2d::new(3, 8, &[3], Conv2dOptions::default().groups(2)).is_err());
/// # Ok::<(), lazyfuse::Error>(())
/// ```
#[derive(Debug)]
pub struct Conv2d {
    /// `[out_channels, in_channels / groups, kh, kw]`
    pub weight: Tensor,
    /// `[out_channels]`, where the layer has one
    pub bias: Option<Tensor>,
    /// the options it was made with
    pub options: Conv2dOptions,
    training: TrainingFlag,
}

impl Conv2d {
    /// A layer with freshly initialized parameters.
    pub fn new(
        in_channels: usize,
        out_channels: usize,
        kernel_size: &[usize],
        options: Conv2dOptions,
    ) -> Result<Conv2d> {
        let invalid = |m: &str| -> crate::Error { IrError::invalid("Conv2d", m).into() };
        let (kh, kw) = match *kernel_size {
            [k] => (k, k),
            [kh, kw] => (kh, kw),
            _ => {
                return Err(invalid(&format!(
                    "kernel_size must be one value or two, got {kernel_size:?}"
                )))
            }
        };
        let groups = options.groups;
        if groups == 0 {
            return Err(invalid("groups must be a positive integer"));
        }
        if !in_channels.is_multiple_of(groups) {
            return Err(invalid("in_channels must be divisible by groups"));
        }
        if !out_channels.is_multiple_of(groups) {
            return Err(invalid("out_channels must be divisible by groups"));
        }
        if options.padding == Conv2dPadding::Same && options.stride != [1, 1] {
            return Err(invalid(
                "padding='same' is not supported for strided convolutions",
            ));
        }
        let shape = [out_channels, in_channels / groups, kh, kw];
        let (weight, bias) = init::weight_and_bias(&shape, options.bias)?;
        Ok(Conv2d {
            weight,
            bias,
            options,
            training: TrainingFlag::new(),
        })
    }
}

impl Module for Conv2d {
    fn forward(&self, input: &Tensor) -> Result<Tensor> {
        let o = &self.options;
        match o.padding {
            Conv2dPadding::Explicit(p) => F::conv2d(
                input,
                &self.weight,
                self.bias.as_ref(),
                &o.stride,
                &p,
                &o.dilation,
                o.groups,
            ),
            Conv2dPadding::Same => F::conv2d_same(
                input,
                &self.weight,
                self.bias.as_ref(),
                &o.stride,
                &o.dilation,
                o.groups,
            ),
        }
    }

    fn own_parameters(&self) -> Vec<(String, Tensor)> {
        named(&[("weight", Some(&self.weight)), ("bias", self.bias.as_ref())])
    }

    fn training_flag(&self) -> Option<&TrainingFlag> {
        Some(&self.training)
    }
}
