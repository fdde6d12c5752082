//! `torch.optim.SGD`: stochastic gradient descent with momentum, dampening,
//! Nesterov momentum and weight decay.

use super::{apply, check_params, invalid, py_repr, signed, step_scalar, Optimizer};
use crate::{MemoryFormat, Result, Tensor};

/// The hyperparameters of [`Sgd`], PyTorch's defaults in [`Default`]
/// (`lr = 1e-3`, the rest off).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SgdConfig {
    /// the learning rate
    pub lr: f64,
    /// the momentum factor (0: none)
    pub momentum: f64,
    /// the dampening of the momentum's gradient term
    pub dampening: f64,
    /// the L2 penalty added to the gradient
    pub weight_decay: f64,
    /// Nesterov momentum (needs a momentum and no dampening)
    pub nesterov: bool,
    /// ascends instead of descending
    pub maximize: bool,
}

impl Default for SgdConfig {
    fn default() -> SgdConfig {
        SgdConfig {
            lr: 1e-3,
            momentum: 0.0,
            dampening: 0.0,
            weight_decay: 0.0,
            nesterov: false,
            maximize: false,
        }
    }
}

/// PyTorch's `torch.optim.SGD(params, lr, momentum, dampening, weight_decay,
/// nesterov, maximize)`, its single-tensor arithmetic per parameter:
/// `g ← ±grad (+ weight_decay·p)`; with momentum `b ← g` on the first step, then
/// `b ← momentum·b + (1 − dampening)·g`, and `g ← g + momentum·b` (Nesterov) or
/// `g ← b`; `p ← p − lr·g`.
///
/// ```
/// use lazyfuse::optim::{Optimizer, Sgd, SgdConfig};
/// use lazyfuse::Tensor;
/// let w = Tensor::from_vec(vec![1.0f32], &[1])?.requires_grad_(true)?;
/// let mut opt = Sgd::new(vec![w.clone()], SgdConfig { lr: 0.5, momentum: 0.9, ..Default::default() })?;
/// for _ in 0..2 {
///     opt.zero_grad()?;
///     w.mul(2.0)?.sum(&[], false)?.backward()?; // grad 2
///     opt.step()?;
/// }
/// // b = 2, then 0.9·2 + 2 = 3.8: w = 1 − 0.5·2 − 0.5·3.8
/// assert_eq!(w.to_vec::<f32>()?, vec![-1.9]);
/// let bad = SgdConfig { nesterov: true, ..Default::default() };
/// assert!(Sgd::new(vec![w.clone()], bad).is_err());
/// # Ok::<(), lazyfuse::Error>(())
/// ```
#[derive(Debug)]
pub struct Sgd {
    params: Vec<Tensor>,
    /// the hyperparameters (the scheduler's `lr` included)
    pub config: SgdConfig,
    momentum_buffers: Vec<Option<Tensor>>,
}

impl Sgd {
    /// An optimizer over `params` (leaves of floating dtypes), its arguments
    /// checked as PyTorch checks them.
    pub fn new(params: Vec<Tensor>, config: SgdConfig) -> Result<Sgd> {
        let op = "SGD";
        if config.lr < 0.0 || config.lr.is_nan() {
            return Err(invalid(
                op,
                format!("Invalid learning rate: {}", py_repr(config.lr)),
            ));
        }
        if config.momentum < 0.0 || config.momentum.is_nan() {
            return Err(invalid(
                op,
                format!("Invalid momentum value: {}", py_repr(config.momentum)),
            ));
        }
        if config.weight_decay < 0.0 || config.weight_decay.is_nan() {
            return Err(invalid(
                op,
                format!(
                    "Invalid weight_decay value: {}",
                    py_repr(config.weight_decay)
                ),
            ));
        }
        if config.nesterov && (config.momentum <= 0.0 || config.dampening != 0.0) {
            return Err(invalid(
                op,
                "Nesterov momentum requires a momentum and zero dampening",
            ));
        }
        check_params(op, &params)?;
        let momentum_buffers = vec![None; params.len()];
        Ok(Sgd {
            params,
            config,
            momentum_buffers,
        })
    }

    /// The momentum buffer of parameter `index` (none before its first step, or
    /// without momentum).
    pub fn momentum_buffer(&self, index: usize) -> Option<&Tensor> {
        self.momentum_buffers.get(index).and_then(Option::as_ref)
    }
}

impl Optimizer for Sgd {
    fn params(&self) -> &[Tensor] {
        &self.params
    }

    fn lr(&self) -> f64 {
        self.config.lr
    }

    fn set_lr(&mut self, lr: f64) {
        self.config.lr = lr;
    }

    fn step_and_realize(&mut self, also: &[&Tensor]) -> Result<()> {
        let c = self.config;
        let buffers = &mut self.momentum_buffers;
        apply(&self.params, also, |i, p, grad| {
            let mut g = signed(grad, c.maximize)?;
            if c.weight_decay != 0.0 {
                g = g.add(&p.mul(c.weight_decay)?)?;
            }
            let mut state = Vec::new();
            if c.momentum != 0.0 {
                let buf = match &buffers[i] {
                    None => {
                        let buf = g.clone_in(MemoryFormat::Preserve)?;
                        buffers[i] = Some(buf.clone());
                        buf
                    }
                    Some(buf) => {
                        // `buf.mul_(momentum).add_(g, alpha=1 - dampening)` as one
                        // write: two writes of one storage are two kernels
                        buf.copy_(&buf.mul(c.momentum)?.add(&g.mul(1.0 - c.dampening)?)?)?;
                        buf.clone()
                    }
                };
                g = if c.nesterov {
                    g.add(&buf.mul(c.momentum)?)?
                } else {
                    buf.clone()
                };
                state.push(buf);
            }
            let neg_lr = step_scalar(-c.lr, p)?;
            p.add_(&g.mul(&neg_lr)?)?;
            Ok(state)
        })
    }
}
