//! `torch.optim.Adam` and `torch.optim.AdamW`: one arithmetic, the weight decay
//! added to the gradient (Adam) or applied to the parameter (AdamW).

use super::{apply, check_params, invalid, py_repr, signed, step_scalar, Optimizer};
use crate::{MemoryFormat, Result, Tensor};

/// The hyperparameters of [`Adam`] and [`AdamW`]; [`Default`] is Adam's
/// (`lr = 1e-3`, `betas = (0.9, 0.999)`, `eps = 1e-8`, no weight decay), and
/// [`AdamConfig::adamw`] AdamW's (`weight_decay = 1e-2`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct AdamConfig {
    /// the learning rate
    pub lr: f64,
    /// the decay rates of the first and second moment averages
    pub betas: (f64, f64),
    /// added to the denominator
    pub eps: f64,
    /// the weight decay (L2 in Adam, decoupled in AdamW)
    pub weight_decay: f64,
    /// keeps the maximum of the second moments (AMSGrad)
    pub amsgrad: bool,
    /// ascends instead of descending
    pub maximize: bool,
}

impl Default for AdamConfig {
    fn default() -> AdamConfig {
        AdamConfig {
            lr: 1e-3,
            betas: (0.9, 0.999),
            eps: 1e-8,
            weight_decay: 0.0,
            amsgrad: false,
            maximize: false,
        }
    }
}

impl AdamConfig {
    /// AdamW's defaults: Adam's with `weight_decay = 1e-2`.
    pub fn adamw() -> AdamConfig {
        AdamConfig {
            weight_decay: 1e-2,
            ..AdamConfig::default()
        }
    }
}

/// The state and arithmetic Adam and AdamW share.
#[derive(Debug)]
struct AdamCore {
    params: Vec<Tensor>,
    config: AdamConfig,
    decoupled: bool,
    /// per parameter: its step count, first and second moments, and the maximum
    /// of the second (AMSGrad), made on its first step
    state: Vec<Option<AdamState>>,
}

#[derive(Debug)]
struct AdamState {
    step: u64,
    exp_avg: Tensor,
    exp_avg_sq: Tensor,
    max_exp_avg_sq: Option<Tensor>,
}

impl AdamCore {
    fn new(op: &str, params: Vec<Tensor>, config: AdamConfig, decoupled: bool) -> Result<Self> {
        let c = &config;
        let bad = |v: f64| v < 0.0 || v.is_nan();
        if bad(c.lr) {
            return Err(invalid(
                op,
                format!("Invalid learning rate: {}", py_repr(c.lr)),
            ));
        }
        if bad(c.eps) {
            return Err(invalid(
                op,
                format!("Invalid epsilon value: {}", py_repr(c.eps)),
            ));
        }
        for (i, beta) in [c.betas.0, c.betas.1].into_iter().enumerate() {
            if !(0.0..1.0).contains(&beta) {
                return Err(invalid(
                    op,
                    format!("Invalid beta parameter at index {i}: {}", py_repr(beta)),
                ));
            }
        }
        if bad(c.weight_decay) {
            return Err(invalid(
                op,
                format!("Invalid weight_decay value: {}", py_repr(c.weight_decay)),
            ));
        }
        check_params(op, &params)?;
        let state = params.iter().map(|_| None).collect();
        Ok(AdamCore {
            params,
            config,
            decoupled,
            state,
        })
    }

    /// PyTorch's `_single_tensor_adam`, per parameter with a gradient.
    fn step(&mut self, also: &[&Tensor]) -> Result<()> {
        let c = self.config;
        let (beta1, beta2) = c.betas;
        let decoupled = self.decoupled;
        let states = &mut self.state;
        apply(&self.params, also, |i, p, grad| {
            let mut g = signed(grad, c.maximize)?;
            // AdamW's `param.mul_(1 - lr·weight_decay)` is folded into the one
            // write of the parameter below (two writes of one storage are two
            // kernels); the moments are written once each too
            let mut param = p.clone();
            if c.weight_decay != 0.0 {
                if decoupled {
                    param = p.mul(&step_scalar(1.0 - c.lr * c.weight_decay, p)?)?;
                } else {
                    g = g.add(&p.mul(c.weight_decay)?)?;
                }
            }
            if states[i].is_none() {
                let zeros = || -> Result<Tensor> {
                    p.zeros_like_in(None, MemoryFormat::Preserve)?.realize()
                };
                states[i] = Some(AdamState {
                    step: 0,
                    exp_avg: zeros()?,
                    exp_avg_sq: zeros()?,
                    max_exp_avg_sq: if c.amsgrad { Some(zeros()?) } else { None },
                });
            }
            let s = states[i].as_mut().expect("made above");
            s.step += 1;
            s.exp_avg.lerp_(&g, 1.0 - beta1)?;
            s.exp_avg_sq
                .copy_(&s.exp_avg_sq.mul(beta2)?.addcmul(&g, &g, 1.0 - beta2)?)?;
            let step = s.step as f64;
            let bias_correction1 = 1.0 - beta1.powf(step);
            let bias_correction2 = 1.0 - beta2.powf(step);
            let step_size = c.lr / bias_correction1;
            let bias_correction2_sqrt = bias_correction2.sqrt();
            let second = match &s.max_exp_avg_sq {
                Some(max) => {
                    max.copy_(&max.maximum(&s.exp_avg_sq)?)?;
                    max.clone()
                }
                None => s.exp_avg_sq.clone(),
            };
            let denom = second
                .sqrt()?
                .div(&step_scalar(bias_correction2_sqrt, p)?)?
                .add(c.eps)?;
            // `addcdiv_(exp_avg, denom, value=-step_size)`: p + (value·m) / denom
            let neg_step = step_scalar(-step_size, p)?;
            p.copy_(&param.add(&s.exp_avg.mul(&neg_step)?.div(&denom)?)?)?;
            let mut state = vec![s.exp_avg.clone(), s.exp_avg_sq.clone()];
            state.extend(s.max_exp_avg_sq.clone());
            Ok(state)
        })
    }
}

/// PyTorch's `torch.optim.Adam(params, lr, betas, eps, weight_decay, amsgrad,
/// maximize)`: per parameter `g ← ±grad (+ weight_decay·p)`,
/// `m ← lerp(m, g, 1 − β₁)`, `v ← β₂·v + (1 − β₂)·g²`, and
/// `p ← p − (lr / (1 − β₁ᵗ))·m / (√v / √(1 − β₂ᵗ) + eps)`.
///
/// ```
/// use lazyfuse::optim::{Adam, AdamConfig, Optimizer};
/// use lazyfuse::Tensor;
/// let w = Tensor::from_vec(vec![1.0f32, -1.0], &[2])?.requires_grad_(true)?;
/// let mut opt = Adam::new(vec![w.clone()], AdamConfig { lr: 0.1, ..Default::default() })?;
/// opt.zero_grad()?;
/// w.square()?.sum(&[], false)?.backward()?;
/// opt.step()?;
/// // the first step moves each weight by lr against its gradient's sign
/// let v = w.to_vec::<f32>()?;
/// assert!((v[0] - 0.9).abs() < 1e-6 && (v[1] + 0.9).abs() < 1e-6);
/// # Ok::<(), lazyfuse::Error>(())
/// ```
#[derive(Debug)]
pub struct Adam(AdamCore);

impl Adam {
    /// An optimizer over `params`, its arguments checked as PyTorch checks them.
    pub fn new(params: Vec<Tensor>, config: AdamConfig) -> Result<Adam> {
        AdamCore::new("Adam", params, config, false).map(Adam)
    }

    /// The hyperparameters.
    pub fn config(&self) -> &AdamConfig {
        &self.0.config
    }
}

/// PyTorch's `torch.optim.AdamW`: [`Adam`] with the weight decay applied to the
/// parameter before the update (`p ← p·(1 − lr·weight_decay)`) instead of
/// added to the gradient.
///
/// ```
/// use lazyfuse::optim::{AdamConfig, AdamW, Optimizer};
/// use lazyfuse::Tensor;
/// let w = Tensor::from_vec(vec![2.0f32], &[1])?.requires_grad_(true)?;
/// let mut opt = AdamW::new(vec![w.clone()], AdamConfig { lr: 0.1, weight_decay: 0.5, ..AdamConfig::adamw() })?;
/// w.mul(0.0)?.sum(&[], false)?.backward()?; // a zero gradient: decay alone
/// opt.step()?;
/// assert_eq!(w.to_vec::<f32>()?, vec![1.9]);
/// # Ok::<(), lazyfuse::Error>(())
/// ```
#[derive(Debug)]
pub struct AdamW(AdamCore);

impl AdamW {
    /// An optimizer over `params`, its arguments checked as PyTorch checks them.
    pub fn new(params: Vec<Tensor>, config: AdamConfig) -> Result<AdamW> {
        AdamCore::new("AdamW", params, config, true).map(AdamW)
    }

    /// The hyperparameters.
    pub fn config(&self) -> &AdamConfig {
        &self.0.config
    }
}

macro_rules! adam_optimizer {
    ($t:ty) => {
        impl Optimizer for $t {
            fn params(&self) -> &[Tensor] {
                &self.0.params
            }

            fn lr(&self) -> f64 {
                self.0.config.lr
            }

            fn set_lr(&mut self, lr: f64) {
                self.0.config.lr = lr;
            }

            fn step_and_realize(&mut self, also: &[&Tensor]) -> Result<()> {
                self.0.step(also)
            }
        }
    };
}

adam_optimizer!(Adam);
adam_optimizer!(AdamW);
