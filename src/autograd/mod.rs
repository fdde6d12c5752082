//! Reverse-mode automatic differentiation on the lazy graph.
//!
//! Gradients are more graph: [`Tensor::backward`] and [`grad`] walk the recorded
//! history of an output, node by node identity, and build each input's gradient
//! with the same builder ops as the forward pass (so promotion, broadcasting, views
//! and the verifier apply to them). Nothing is computed until a gradient is read or
//! realized, and then the forward, the backward and an optimizer's update realize
//! together and fuse.
//!
//! - `record`: what is remembered of each node that requires grad, and how a tensor
//!   handle joins that history (leaves, views of leaves, detached tensors);
//! - `engine`: the walk from outputs to leaves, accumulating gradients;
//! - `rules`: one derivative per op, as PyTorch's `derivatives.yaml` defines it;
//! - `tensor_api`: `requires_grad_`, `backward`, `grad`, `detach`, …;
//! - `mode`: the thread-local grad mode ([`no_grad`], [`set_grad_enabled`]).
//!
//! A training step, as the README shows it:
//!
//! ```
//! use lazyfuse::{DType, Tensor};
//!
//! let x = Tensor::from_vec(vec![1.0f32, 2.0, 3.0, 4.0], &[2, 2])?;
//! let w = Tensor::from_vec(vec![0.5f32, -0.5], &[2, 1])?.requires_grad_(true)?;
//! for _ in 0..3 {
//!     let loss = x.matmul(&w)?.tanh()?.square()?.mean(&[], false)?;
//!     loss.backward()?;                                  // recorded, not run
//!     lazyfuse::no_grad(|| w.sub_(&w.grad().unwrap().mul(0.1)?))?;
//!     w.set_grad(None)?;                                 // zero_grad
//!     lazyfuse::realize_all(&[&w, &loss])?;              // forward + backward + update
//! }
//! assert!(w.requires_grad() && w.is_leaf());
//! # Ok::<(), lazyfuse::Error>(())
//! ```
//!
//! ```
//! use lazyfuse::{DType, Tensor};
//! let x = Tensor::from_vec(vec![1.0f32, 2.0, 3.0], &[3]).unwrap().requires_grad_(true).unwrap();
//! let y = x.mul(&x).unwrap().sum(&[], false).unwrap(); // sum of squares
//! y.backward().unwrap();
//! assert_eq!(x.grad().unwrap().to_vec::<f32>().unwrap(), vec![2.0, 4.0, 6.0]);
//! ```

mod engine;
mod mode;
pub(crate) mod record;
mod rules;
mod saved;
mod tensor_api;

pub(crate) use mode::with_grad_mode;
pub use mode::{is_grad_enabled, no_grad, set_grad_enabled};

use crate::error::Result;
use crate::store::Store;
use crate::tensor::Tensor;
use lazyfuse_ir::NodeId;
use record::GradLink;

/// The gradients of `outputs` with respect to `inputs` (PyTorch's
/// `torch.autograd.grad` with `allow_unused=True`): one entry per input, `None`
/// where the outputs do not depend on it. `grad_outputs` gives each output's
/// gradient (omitted: each output must be a single value, seeded with 1). Nothing is
/// accumulated into `.grad`. With `create_graph` the gradients have history of
/// their own, so they can be differentiated again (Hessian-vector products).
///
/// ```
/// use lazyfuse::{autograd, Tensor};
/// let x = Tensor::from_vec(vec![3.0f64], &[]).unwrap().requires_grad_(true).unwrap();
/// let y = x.mul(&x).unwrap().mul(&x).unwrap(); // x³
/// let dy = autograd::grad(&[&y], &[&x], None, true).unwrap()[0].clone().unwrap();
/// assert_eq!(dy.to_vec::<f64>().unwrap(), vec![27.0]); // 3x²
/// let d2y = autograd::grad(&[&dy], &[&x], None, false).unwrap()[0].clone().unwrap();
/// assert_eq!(d2y.to_vec::<f64>().unwrap(), vec![18.0]); // 6x
/// assert!(x.grad().is_none());
/// ```
pub fn grad(
    outputs: &[&Tensor],
    inputs: &[&Tensor],
    grad_outputs: Option<&[&Tensor]>,
    create_graph: bool,
) -> Result<Vec<Option<Tensor>>> {
    let seeds = engine::seeds(outputs, grad_outputs)?;
    engine::run(&seeds, engine::Want::Inputs(inputs), create_graph)
}

/// The node a read of `t` starts from: its storage's current node, or (grad mode
/// on) a leaf's anchor, or that node cut from its history for a detached tensor.
/// `out` (a tensor an API op just built) with the derivative `custom` with respect
/// to `inputs` where it has history (see `rules::custom`). The rule sits on a node
/// that holds `out` in its logical shape (its own, or a view of it), since the rule
/// computes in that shape.
pub(crate) fn with_custom_rule(
    out: &Tensor,
    custom: record::Custom,
    inputs: &[&Tensor],
) -> Result<Tensor> {
    crate::store::with_store(|s| {
        let node = out.node_as(s, out.dtype(), &out.shape())?;
        if !s.records.contains(node) {
            return Ok(out.clone());
        }
        let inputs = inputs
            .iter()
            .map(|t| t.node_as(s, t.dtype(), &t.shape()))
            .collect::<Result<Vec<_>>>()?;
        s.custom_rule(node, custom, inputs);
        Ok(Tensor::from_node(s, node))
    })
}

pub(crate) fn history_base(t: &Tensor, store: &mut Store) -> NodeId {
    let base = t.0.storage.node();
    match t.link() {
        GradLink::Follow => base,
        _ if !is_grad_enabled() => base,
        GradLink::Leaf { cell, .. } if cell.requires_grad() => store.leaf_anchor(base, &cell),
        GradLink::Leaf { .. } | GradLink::Detached => store.cut_history(base),
    }
}

/// PyTorch's refusal of an in-place op on a leaf that requires grad, or on a view of
/// one, while grad mode is on (under [`no_grad`] an optimizer updates leaves so).
pub(crate) fn check_inplace(t: &Tensor) -> Result<()> {
    record::begin_write(t.0.storage.id);
    if !is_grad_enabled() {
        return Ok(());
    }
    match t.link() {
        GradLink::Leaf { cell, owner } if cell.requires_grad() => {
            let what = if owner { "a leaf" } else { "a view of a leaf" };
            Err(lazyfuse_ir::Error::invalid(
                "in-place",
                format!(
                    "{what} Variable that requires grad is being used in an in-place operation."
                ),
            )
            .into())
        }
        _ => Ok(()),
    }
}
