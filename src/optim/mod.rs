//! `lazyfuse::optim`: PyTorch's optimizers ([`Sgd`], [`Adam`], [`AdamW`]) and
//! learning-rate schedulers ([`StepLR`], [`CosineAnnealingLR`]).
//!
//! A step computes PyTorch's single-tensor (`foreach=False`) arithmetic, in the
//! same order, as in-place writes under `no_grad`, then realizes every parameter
//! and its state in one pass. Each storage is written once per step, in place,
//! and a parameter's writes (the parameter, its moments or momentum buffer) are
//! one kernel: the scheduler joins whole in-place writes of one iteration space
//! like any elementwise roots. The values that change from step to step
//! (the learning rate, Adam's bias corrections) enter the kernels as zero-dim
//! tensors rather than constants, so a step has the same structure every time and
//! reuses the kernels compiled for the first.
//!
//! ```
//! use lazyfuse::nn::{Linear, Module};
//! use lazyfuse::optim::{Optimizer, Sgd, SgdConfig};
//! use lazyfuse::{DType, Tensor};
//! let model = Linear::new(3, 1, true)?;
//! let mut opt = Sgd::new(model.parameters(), SgdConfig { lr: 0.1, ..Default::default() })?;
//! let x = Tensor::ones(&[4, 3], DType::F32);
//! let before = model.forward(&x)?.square()?.mean(&[], false)?.to_vec::<f32>()?[0];
//! for _ in 0..5 {
//!     opt.zero_grad()?;
//!     model.forward(&x)?.square()?.mean(&[], false)?.backward()?;
//!     opt.step()?;
//! }
//! let after = model.forward(&x)?.square()?.mean(&[], false)?.to_vec::<f32>()?[0];
//! assert!(after < before);
//! # Ok::<(), lazyfuse::Error>(())
//! ```
//!
//! # Files
//! `sgd` (`Sgd`), `adam` (`Adam`, `AdamW`), `lr_scheduler` (`StepLR`,
//! `CosineAnnealingLR`).

mod adam;
mod lr_scheduler;
mod sgd;

pub use adam::{Adam, AdamConfig, AdamW};
pub use lr_scheduler::{CosineAnnealingLR, LrScheduler, StepLR};
pub use sgd::{Sgd, SgdConfig};

use crate::{Result, Tensor};
use lazyfuse_ir::Error as IrError;

/// PyTorch's `torch.optim.Optimizer`, over one parameter group.
pub trait Optimizer {
    /// The parameters it updates.
    fn params(&self) -> &[Tensor];

    /// The learning rate (what a scheduler reads and sets).
    fn lr(&self) -> f64;

    /// Sets the learning rate for the following steps.
    fn set_lr(&mut self, lr: f64);

    /// One update of every parameter that has a gradient (the others are
    /// skipped, as PyTorch skips them), realized together with `also` (a loss
    /// read afterwards, say) so that work they share is computed once.
    fn step_and_realize(&mut self, also: &[&Tensor]) -> Result<()>;

    /// One update of every parameter that has a gradient: PyTorch's `step()`.
    fn step(&mut self) -> Result<()> {
        self.step_and_realize(&[])
    }

    /// Sets every parameter's gradient to `None` (PyTorch's default
    /// `zero_grad(set_to_none=True)`).
    fn zero_grad(&mut self) -> Result<()> {
        for p in self.params() {
            p.set_grad(None)?;
        }
        Ok(())
    }
}

/// An optimizer's argument error, PyTorch's `ValueError`.
fn invalid(op: &str, message: impl Into<String>) -> crate::Error {
    IrError::invalid(op, message).into()
}

/// A float as Python's `repr` writes it in PyTorch's messages: the shortest
/// round-trip digits, `1.0` for an integral value, and scientific notation with
/// an exponent of at least two digits outside `1e-4 <= |x| < 1e16`.
fn py_repr(x: f64) -> String {
    if x.is_nan() {
        return "nan".into();
    }
    if x.is_infinite() {
        return if x > 0.0 { "inf".into() } else { "-inf".into() };
    }
    let sci = format!("{x:e}");
    let (mantissa, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    if x != 0.0 && !(-4..16).contains(&exp) {
        let sign = if exp < 0 { '-' } else { '+' };
        return format!("{mantissa}e{sign}{:02}", exp.abs());
    }
    let plain = format!("{x}");
    if plain.contains('.') {
        plain
    } else {
        format!("{plain}.0")
    }
}

/// PyTorch's checks on the parameter list: not empty, leaves only; and
/// lazyfuse's: floating dtypes only.
fn check_params(op: &str, params: &[Tensor]) -> Result<()> {
    if params.is_empty() {
        return Err(invalid(op, "optimizer got an empty parameter list"));
    }
    for p in params {
        if !p.is_leaf() {
            return Err(invalid(op, "can't optimize a non-leaf Tensor"));
        }
        if !p.dtype().is_floating_point() {
            return Err(invalid(
                op,
                format!(
                    "{op} supports floating-point parameters only, got {}",
                    p.dtype()
                ),
            ));
        }
    }
    Ok(())
}

/// `value` as a zero-dim tensor of `like`'s dtype on its device: a per-step
/// scalar entering the update as an input, not as a constant of its structure.
/// Converted to the parameter's dtype as PyTorch converts a Python scalar.
fn step_scalar(value: f64, like: &Tensor) -> Result<Tensor> {
    Tensor::from_vec(vec![value], &[])?
        .to_dtype(like.dtype())?
        .to_device(like.device())
}

/// The gradient a step descends along: `grad`, negated to ascend (`maximize`).
fn signed(grad: &Tensor, maximize: bool) -> Result<Tensor> {
    if maximize {
        grad.neg()
    } else {
        Ok(grad.clone())
    }
}

/// Runs `update` (which writes in place) for every parameter with a gradient,
/// under `no_grad`, then realizes the parameters, the state tensors `update`
/// returned and `also` in one pass.
fn apply(
    params: &[Tensor],
    also: &[&Tensor],
    mut update: impl FnMut(usize, &Tensor, &Tensor) -> Result<Vec<Tensor>>,
) -> Result<()> {
    let mut touched: Vec<Tensor> = Vec::new();
    crate::no_grad(|| {
        for (i, p) in params.iter().enumerate() {
            if let Some(g) = p.grad() {
                touched.push(p.clone());
                touched.extend(update(i, p, &g)?);
            }
        }
        Ok::<(), crate::Error>(())
    })?;
    let mut targets: Vec<&Tensor> = touched.iter().collect();
    targets.extend_from_slice(also);
    crate::realize_all(&targets)
}
