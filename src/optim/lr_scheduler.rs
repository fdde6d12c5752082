//! `torch.optim.lr_scheduler`: `StepLR` and `CosineAnnealingLR`, each computing
//! PyTorch's recursive (chainable) form, so the rates match its floats.

use super::{invalid, Optimizer};
use crate::Result;

/// A learning-rate schedule stepped once per epoch (PyTorch's `LRScheduler`).
/// Made from an optimizer (whose rate is the base rate, epoch 0), it sets the
/// optimizer's rate at each [`LrScheduler::step`].
pub trait LrScheduler {
    /// Advances one epoch and sets `optimizer`'s learning rate.
    fn step(&mut self, optimizer: &mut dyn Optimizer);

    /// The rate the last step set (PyTorch's `get_last_lr()[0]`).
    fn get_last_lr(&self) -> f64;

    /// The epochs stepped since construction (PyTorch's `last_epoch`).
    fn last_epoch(&self) -> usize;
}

/// PyTorch's `StepLR(optimizer, step_size, gamma)`: the rate times `gamma` every
/// `step_size` epochs.
///
/// ```
/// use lazyfuse::optim::{LrScheduler, Optimizer, Sgd, SgdConfig, StepLR};
/// use lazyfuse::{DType, Tensor};
/// let w = Tensor::zeros(&[1], DType::F32).requires_grad_(true)?;
/// let mut opt = Sgd::new(vec![w], SgdConfig { lr: 1.0, ..Default::default() })?;
/// let mut sched = StepLR::new(&opt, 2, 0.5)?;
/// let lrs: Vec<f64> = (0..5).map(|_| { sched.step(&mut opt); opt.lr() }).collect();
/// assert_eq!(lrs, [1.0, 0.5, 0.5, 0.25, 0.25]);
/// # Ok::<(), lazyfuse::Error>(())
/// ```
#[derive(Clone, Debug)]
pub struct StepLR {
    step_size: usize,
    gamma: f64,
    last_epoch: usize,
    last_lr: f64,
}

impl StepLR {
    /// A schedule starting from `optimizer`'s rate (`step_size >= 1`).
    pub fn new(optimizer: &dyn Optimizer, step_size: usize, gamma: f64) -> Result<StepLR> {
        if step_size == 0 {
            return Err(invalid("StepLR", "step_size must be a positive integer"));
        }
        Ok(StepLR {
            step_size,
            gamma,
            last_epoch: 0,
            last_lr: optimizer.lr(),
        })
    }
}

impl LrScheduler for StepLR {
    fn step(&mut self, optimizer: &mut dyn Optimizer) {
        self.last_epoch += 1;
        let lr = optimizer.lr();
        let lr = if self.last_epoch.is_multiple_of(self.step_size) {
            lr * self.gamma
        } else {
            lr
        };
        optimizer.set_lr(lr);
        self.last_lr = lr;
    }

    fn get_last_lr(&self) -> f64 {
        self.last_lr
    }

    fn last_epoch(&self) -> usize {
        self.last_epoch
    }
}

/// PyTorch's `CosineAnnealingLR(optimizer, T_max, eta_min)`: the rate follows a
/// cosine from the base rate down to `eta_min` over `t_max` epochs (and back up
/// over the next `t_max`), by PyTorch's recursive formula.
///
/// ```
/// use lazyfuse::optim::{CosineAnnealingLR, LrScheduler, Optimizer, Sgd, SgdConfig};
/// use lazyfuse::{DType, Tensor};
/// let w = Tensor::zeros(&[1], DType::F32).requires_grad_(true)?;
/// let mut opt = Sgd::new(vec![w], SgdConfig { lr: 1.0, ..Default::default() })?;
/// let mut sched = CosineAnnealingLR::new(&opt, 4, 0.0)?;
/// for _ in 0..2 { sched.step(&mut opt); }
/// assert!((opt.lr() - 0.5).abs() < 1e-12);
/// for _ in 0..2 { sched.step(&mut opt); }
/// assert!(opt.lr().abs() < 1e-12);
/// # Ok::<(), lazyfuse::Error>(())
/// ```
#[derive(Clone, Debug)]
pub struct CosineAnnealingLR {
    t_max: usize,
    eta_min: f64,
    base_lr: f64,
    last_epoch: usize,
    last_lr: f64,
}

impl CosineAnnealingLR {
    /// A schedule starting from `optimizer`'s rate (`t_max >= 1`).
    pub fn new(optimizer: &dyn Optimizer, t_max: usize, eta_min: f64) -> Result<Self> {
        if t_max == 0 {
            return Err(invalid(
                "CosineAnnealingLR",
                "T_max must be a positive integer",
            ));
        }
        Ok(CosineAnnealingLR {
            t_max,
            eta_min,
            base_lr: optimizer.lr(),
            last_epoch: 0,
            last_lr: optimizer.lr(),
        })
    }
}

impl LrScheduler for CosineAnnealingLR {
    fn step(&mut self, optimizer: &mut dyn Optimizer) {
        use std::f64::consts::PI;
        self.last_epoch += 1;
        let (e, t, eta_min) = (self.last_epoch as i64, self.t_max as i64, self.eta_min);
        let lr = optimizer.lr();
        let lr = if (e - 1 - t).rem_euclid(2 * t) == 0 {
            lr + (self.base_lr - eta_min) * (1.0 - (PI / t as f64).cos()) / 2.0
        } else {
            (1.0 + (PI * e as f64 / t as f64).cos())
                / (1.0 + (PI * (e - 1) as f64 / t as f64).cos())
                * (lr - eta_min)
                + eta_min
        };
        optimizer.set_lr(lr);
        self.last_lr = lr;
    }

    fn get_last_lr(&self) -> f64 {
        self.last_lr
    }

    fn last_epoch(&self) -> usize {
        self.last_epoch
    }
}
