//! Activation functions (PyTorch's `torch.nn.functional`): `gelu`, `silu`,
//! `softplus`, `mish`, `elu`, `leaky_relu`, `hardtanh`, `relu6`, `hardsigmoid`,
//! `hardswish`, and their in-place forms where PyTorch has one (`F.elu_`,
//! `F.hardtanh_`, `inplace=True`, …; `softplus` has none).
//!
//! Each activation is one graph node (`Unary` for the parameterless ones,
//! `UnaryParam` otherwise) computed with PyTorch's CPU formula, so that a compiler
//! can later lower it as a unit. Like PyTorch's kernels they accept floating inputs
//! only (`silu` also complex), except `hardtanh`/`relu6`, which are `clamp` and
//! accept integers.

use crate::error::Result;
use crate::ops::elementwise::unary_op;
use crate::ops::pointwise::param_op;
use crate::tensor::Tensor;
use lazyfuse_ir::{DType, Error as IrError, UnaryOp, UnaryParamOp};
use std::str::FromStr;

/// The `approximate` argument of [`Tensor::gelu`].
///
/// ```
/// use lazyfuse::{GeluApproximate, Tensor};
/// let t = Tensor::from_vec(vec![0.0f32], &[1]).unwrap();
/// assert_eq!(t.gelu(GeluApproximate::default()).unwrap().to_vec::<f32>().unwrap(), vec![0.0]);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum GeluApproximate {
    /// The exact `x * Φ(x)` (PyTorch's `"none"`).
    #[default]
    None,
    /// `0.5 x (1 + tanh(sqrt(2/π) (x + 0.044715 x³)))` (PyTorch's `"tanh"`).
    Tanh,
}

impl FromStr for GeluApproximate {
    type Err = crate::Error;

    /// Parses PyTorch's spelling, with its message for anything else.
    ///
    /// ```
    /// use lazyfuse::GeluApproximate;
    /// assert_eq!("tanh".parse::<GeluApproximate>().unwrap(), GeluApproximate::Tanh);
    /// let err = "erf".parse::<GeluApproximate>().unwrap_err();
    /// assert_eq!(err.to_string(), "approximate argument must be either none or tanh.");
    /// ```
    fn from_str(s: &str) -> Result<Self> {
        match s {
            "none" => Ok(GeluApproximate::None),
            "tanh" => Ok(GeluApproximate::Tanh),
            _ => Err(
                IrError::invalid("gelu", "approximate argument must be either none or tanh.")
                    .into(),
            ),
        }
    }
}

fn gelu_op(approximate: GeluApproximate) -> UnaryParamOp {
    UnaryParamOp::Gelu {
        tanh: approximate == GeluApproximate::Tanh,
    }
}

fn elu_op(alpha: f64) -> UnaryParamOp {
    UnaryParamOp::Elu {
        alpha,
        scale: 1.0,
        input_scale: 1.0,
    }
}

/// PyTorch's conversion of a `hardtanh` bound to an integer tensor's type: the
/// value truncated to `int64` (an error where it does not fit), and a bound that
/// would put results outside the dtype's range refused.
fn integer_bound(value: f64, dtype: DType, which: &str) -> Result<f64> {
    let overflow = || {
        IrError::invalid(
            "hardtanh",
            "value cannot be converted to type int64_t without overflow",
        )
    };
    let t = value.trunc();
    // i64::MIN is exact in f64; i64::MAX + 1 = 2^63 is the first value out of range.
    const TWO_63: f64 = 9_223_372_036_854_775_808.0; // 2^63, exact in f64
    if t.is_nan() || !(-TWO_63..TWO_63).contains(&t) {
        return Err(overflow().into());
    }
    if let Some((lo, hi)) = dtype.integer_range() {
        let v = t as i128;
        let outside = match which {
            "min" => v > hi,
            _ => v < lo,
        };
        if outside {
            return Err(IrError::invalid(
                "hardtanh",
                format!(
                    "Clamp {which} value {v} is outside the representable range of {}",
                    dtype.torch_name()
                ),
            )
            .into());
        }
    }
    Ok(t)
}

impl Tensor {
    /// The `hardtanh` node with bounds converted for integer dtypes.
    fn hardtanh_op(&self, min_val: f64, max_val: f64) -> Result<UnaryParamOp> {
        let op = UnaryParamOp::Hardtanh { min_val, max_val };
        // Dtype refusals (bool, complex) come before the bound conversion.
        lazyfuse_ir::typing::unary_param(op, self.dtype(), crate::default_dtype())?;
        if self.dtype().is_integer() {
            return Ok(UnaryParamOp::Hardtanh {
                min_val: integer_bound(min_val, self.dtype(), "min")?,
                max_val: integer_bound(max_val, self.dtype(), "max")?,
            });
        }
        Ok(op)
    }

    /// GELU, exact (`x/2 (1 + erf(x/√2))`) or with the tanh approximation; floating
    /// inputs only (`"GeluKernelImpl"`).
    ///
    /// ```
    /// use lazyfuse::{GeluApproximate, Tensor};
    /// let t = Tensor::from_vec(vec![0.0f64, 1.0], &[2]).unwrap();
    /// let g = t.gelu(GeluApproximate::None).unwrap().to_vec::<f64>().unwrap();
    /// assert!(g[0] == 0.0 && (g[1] - 0.8413447460685429).abs() < 1e-12);
    /// let g = t.gelu(GeluApproximate::Tanh).unwrap().to_vec::<f64>().unwrap();
    /// assert!((g[1] - 0.8411919906082768).abs() < 1e-12);
    /// ```
    pub fn gelu(&self, approximate: GeluApproximate) -> Result<Tensor> {
        param_op(self, gelu_op(approximate))
    }

    /// In-place [`Tensor::gelu`] (PyTorch's `torch._C._nn.gelu_`).
    ///
    /// ```
    /// use lazyfuse::{GeluApproximate, Tensor};
    /// let t = Tensor::from_vec(vec![0.0f32], &[1]).unwrap();
    /// t.gelu_(GeluApproximate::Tanh).unwrap();
    /// assert_eq!(t.to_vec::<f32>().unwrap(), vec![0.0]);
    /// ```
    pub fn gelu_(&self, approximate: GeluApproximate) -> Result<()> {
        self.param_op_inplace(gelu_op(approximate))
    }

    /// SiLU (swish): `x / (1 + e^-x)`; floating and complex inputs.
    ///
    /// ```
    /// use lazyfuse::Tensor;
    /// let t = Tensor::from_vec(vec![0.0f32, f32::INFINITY], &[2]).unwrap();
    /// assert_eq!(t.silu().unwrap().to_vec::<f32>().unwrap(), vec![0.0, f32::INFINITY]);
    /// ```
    pub fn silu(&self) -> Result<Tensor> {
        unary_op(self, UnaryOp::Silu)
    }

    /// In-place [`Tensor::silu`] (`F.silu(x, inplace=True)`).
    ///
    /// ```
    /// use lazyfuse::Tensor;
    /// let t = Tensor::from_vec(vec![0.0f32], &[1]).unwrap();
    /// t.silu_().unwrap();
    /// assert_eq!(t.to_vec::<f32>().unwrap(), vec![0.0]);
    /// ```
    pub fn silu_(&self) -> Result<()> {
        self.unary_op_inplace(UnaryOp::Silu)
    }

    /// Mish: `x * tanh(softplus(x))`; floating inputs only.
    ///
    /// ```
    /// use lazyfuse::Tensor;
    /// let m = Tensor::from_vec(vec![1.0f64], &[1]).unwrap().mish().unwrap();
    /// assert!((m.to_vec::<f64>().unwrap()[0] - 0.8650983882673103).abs() < 1e-12);
    /// ```
    pub fn mish(&self) -> Result<Tensor> {
        unary_op(self, UnaryOp::Mish)
    }

    /// In-place [`Tensor::mish`].
    ///
    /// ```
    /// use lazyfuse::Tensor;
    /// let t = Tensor::from_vec(vec![0.0f32], &[1]).unwrap();
    /// t.mish_().unwrap();
    /// assert_eq!(t.to_vec::<f32>().unwrap(), vec![0.0]);
    /// ```
    pub fn mish_(&self) -> Result<()> {
        self.unary_op_inplace(UnaryOp::Mish)
    }

    /// `min(max(x + 3, 0), 6) / 6`; floating inputs only.
    ///
    /// ```
    /// use lazyfuse::Tensor;
    /// let t = Tensor::from_vec(vec![-4.0f32, 0.0, 4.0], &[3]).unwrap();
    /// assert_eq!(t.hardsigmoid().unwrap().to_vec::<f32>().unwrap(), vec![0.0, 0.5, 1.0]);
    /// ```
    pub fn hardsigmoid(&self) -> Result<Tensor> {
        unary_op(self, UnaryOp::Hardsigmoid)
    }

    /// In-place [`Tensor::hardsigmoid`].
    ///
    /// ```
    /// use lazyfuse::Tensor;
    /// let t = Tensor::from_vec(vec![0.0f32], &[1]).unwrap();
    /// t.hardsigmoid_().unwrap();
    /// assert_eq!(t.to_vec::<f32>().unwrap(), vec![0.5]);
    /// ```
    pub fn hardsigmoid_(&self) -> Result<()> {
        self.unary_op_inplace(UnaryOp::Hardsigmoid)
    }

    /// `x * hardsigmoid(x)`; floating inputs only.
    ///
    /// ```
    /// use lazyfuse::Tensor;
    /// let t = Tensor::from_vec(vec![-4.0f32, 1.0, 4.0], &[3]).unwrap();
    /// assert_eq!(t.hardswish().unwrap().to_vec::<f32>().unwrap(), vec![-0.0, 1.0 * 4.0 / 6.0, 4.0]);
    /// ```
    pub fn hardswish(&self) -> Result<Tensor> {
        unary_op(self, UnaryOp::Hardswish)
    }

    /// In-place [`Tensor::hardswish`].
    ///
    /// ```
    /// use lazyfuse::Tensor;
    /// let t = Tensor::from_vec(vec![4.0f32], &[1]).unwrap();
    /// t.hardswish_().unwrap();
    /// assert_eq!(t.to_vec::<f32>().unwrap(), vec![4.0]);
    /// ```
    pub fn hardswish_(&self) -> Result<()> {
        self.unary_op_inplace(UnaryOp::Hardswish)
    }

    /// `ln(1 + e^(beta x)) / beta`, and `x` itself where `beta x > threshold`
    /// (PyTorch's defaults: `beta = 1`, `threshold = 20`); floating inputs only.
    ///
    /// ```
    /// use lazyfuse::Tensor;
    /// let t = Tensor::from_vec(vec![0.0f64, 30.0], &[2]).unwrap();
    /// let s = t.softplus(1.0, 20.0).unwrap().to_vec::<f64>().unwrap();
    /// assert_eq!(s, vec![std::f64::consts::LN_2, 30.0]);
    /// ```
    pub fn softplus(&self, beta: f64, threshold: f64) -> Result<Tensor> {
        param_op(self, UnaryParamOp::Softplus { beta, threshold })
    }

    /// ELU: `x` for `x > 0`, else `alpha (e^x - 1)` (PyTorch's default `alpha = 1`);
    /// floating inputs only.
    ///
    /// ```
    /// use lazyfuse::Tensor;
    /// let t = Tensor::from_vec(vec![2.0f32, f32::NEG_INFINITY], &[2]).unwrap();
    /// assert_eq!(t.elu(0.5).unwrap().to_vec::<f32>().unwrap(), vec![2.0, -0.5]);
    /// ```
    pub fn elu(&self, alpha: f64) -> Result<Tensor> {
        param_op(self, elu_op(alpha))
    }

    /// In-place [`Tensor::elu`] (`F.elu_`).
    ///
    /// ```
    /// use lazyfuse::Tensor;
    /// let t = Tensor::from_vec(vec![-f32::INFINITY], &[1]).unwrap();
    /// t.elu_(1.0).unwrap();
    /// assert_eq!(t.to_vec::<f32>().unwrap(), vec![-1.0]);
    /// ```
    pub fn elu_(&self, alpha: f64) -> Result<()> {
        self.param_op_inplace(elu_op(alpha))
    }

    /// `x` for `x > 0`, else `negative_slope * x` (PyTorch's default 0.01); floating
    /// inputs only.
    ///
    /// ```
    /// use lazyfuse::Tensor;
    /// let t = Tensor::from_vec(vec![-2.0f64, 3.0], &[2]).unwrap();
    /// assert_eq!(t.leaky_relu(0.5).unwrap().to_vec::<f64>().unwrap(), vec![-1.0, 3.0]);
    /// ```
    pub fn leaky_relu(&self, negative_slope: f64) -> Result<Tensor> {
        param_op(self, UnaryParamOp::LeakyRelu { negative_slope })
    }

    /// In-place [`Tensor::leaky_relu`] (`F.leaky_relu_`).
    ///
    /// ```
    /// use lazyfuse::Tensor;
    /// let t = Tensor::from_vec(vec![-2.0f32], &[1]).unwrap();
    /// t.leaky_relu_(0.25).unwrap();
    /// assert_eq!(t.to_vec::<f32>().unwrap(), vec![-0.5]);
    /// ```
    pub fn leaky_relu_(&self, negative_slope: f64) -> Result<()> {
        self.param_op_inplace(UnaryParamOp::LeakyRelu { negative_slope })
    }

    /// `clamp(x, min_val, max_val)` (PyTorch's defaults -1 and 1); NaN propagates.
    /// Integer tensors keep their dtype, the bounds truncated toward zero. As
    /// `F.hardtanh`, `min_val > max_val` is an error.
    ///
    /// ```
    /// use lazyfuse::Tensor;
    /// let t = Tensor::from_vec(vec![-3i64, 0, 5], &[3]).unwrap();
    /// assert_eq!(t.hardtanh(-1.5, 2.5).unwrap().to_vec::<i64>().unwrap(), vec![-1, 0, 2]);
    /// assert!(t.hardtanh(2.0, 1.0).is_err());
    /// ```
    pub fn hardtanh(&self, min_val: f64, max_val: f64) -> Result<Tensor> {
        if min_val > max_val {
            return Err(
                IrError::invalid("hardtanh", "min_val cannot be greater than max_val").into(),
            );
        }
        param_op(self, self.hardtanh_op(min_val, max_val)?)
    }

    /// In-place [`Tensor::hardtanh`] (`F.hardtanh_`, which does not check the order
    /// of the bounds: with `min_val > max_val` every element becomes `max_val`).
    ///
    /// ```
    /// use lazyfuse::Tensor;
    /// let t = Tensor::from_vec(vec![-3.0f32, 0.5], &[2]).unwrap();
    /// t.hardtanh_(-1.0, 1.0).unwrap();
    /// assert_eq!(t.to_vec::<f32>().unwrap(), vec![-1.0, 0.5]);
    /// ```
    pub fn hardtanh_(&self, min_val: f64, max_val: f64) -> Result<()> {
        self.param_op_inplace(self.hardtanh_op(min_val, max_val)?)
    }

    /// `min(max(x, 0), 6)`, PyTorch's `hardtanh(x, 0, 6)` (so integers are accepted
    /// and bool is refused with hardtanh's message).
    ///
    /// ```
    /// use lazyfuse::Tensor;
    /// let t = Tensor::from_vec(vec![-3i32, 7, 5], &[3]).unwrap();
    /// assert_eq!(t.relu6().unwrap().to_vec::<i32>().unwrap(), vec![0, 6, 5]);
    /// ```
    pub fn relu6(&self) -> Result<Tensor> {
        self.hardtanh(0.0, 6.0)
    }

    /// In-place [`Tensor::relu6`] (`F.relu6(x, inplace=True)`).
    ///
    /// ```
    /// use lazyfuse::Tensor;
    /// let t = Tensor::from_vec(vec![9.0f32], &[1]).unwrap();
    /// t.relu6_().unwrap();
    /// assert_eq!(t.to_vec::<f32>().unwrap(), vec![6.0]);
    /// ```
    pub fn relu6_(&self) -> Result<()> {
        self.hardtanh_(0.0, 6.0)
    }
}
