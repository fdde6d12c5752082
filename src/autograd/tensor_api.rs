//! The autograd methods of [`Tensor`]: leaves (`requires_grad_`, `grad`,
//! `set_grad`), `backward`, `detach`, with PyTorch's names, checks and messages.

use super::engine::{self, Want};
use super::record::{GradLink, LeafCell};
use crate::error::Result;
use crate::reading::Reading;
use crate::store::with_store;
use crate::tensor::Tensor;
use lazyfuse_ir::{DType, Error as IrError};
use std::sync::Arc;

/// PyTorch's refusal of a non-float leaf.
const NOT_FLOAT: &str = "only Tensors of floating point dtype can require gradients";

/// The C++ type PyTorch's `.grad` checks name (its `caffe2::TypeMeta`, as GCC
/// spells it).
fn type_meta_name(dtype: DType) -> &'static str {
    match dtype {
        DType::I64 => "long int",
        DType::I16 => "short int",
        DType::I8 => "signed char",
        DType::U8 => "unsigned char",
        other => crate::tensor::c_type_name(other),
    }
}

impl Tensor {
    /// Marks this tensor as a leaf that requires grad (or, with `false`, as one
    /// that no longer does) and returns a handle to the same tensor, as PyTorch's
    /// `requires_grad_`. Only floating-point tensors can require grad; a tensor
    /// computed from others that require grad is not a leaf, and only `true` is
    /// accepted for it.
    ///
    /// ```
    /// use lazyfuse::{DType, Tensor};
    /// let w = Tensor::zeros(&[2], DType::F32).requires_grad_(true).unwrap();
    /// assert!(w.requires_grad() && w.is_leaf());
    /// let e = Tensor::zeros(&[2], DType::I64).requires_grad_(true).unwrap_err();
    /// assert_eq!(e.to_string(), "only Tensors of floating point dtype can require gradients");
    /// ```
    pub fn requires_grad_(&self, requires_grad: bool) -> Result<Tensor> {
        let link = self.link();
        match (&link, requires_grad) {
            (GradLink::Leaf { owner: false, .. }, false) => return Err(non_leaf_flag()),
            (GradLink::Leaf { cell, owner: true }, on) => {
                cell.requires_grad
                    .store(on, std::sync::atomic::Ordering::Relaxed);
                return Ok(self.clone());
            }
            (GradLink::Leaf { .. }, true) => return Ok(self.clone()),
            (GradLink::Follow, _) if self.has_history() => {
                return if requires_grad {
                    Ok(self.clone())
                } else {
                    Err(non_leaf_flag())
                };
            }
            _ => {}
        }
        if !requires_grad {
            return Ok(self.clone());
        }
        let dtype = self.dtype();
        if dtype.is_complex() {
            return Err(IrError::Unsupported(
                "gradients of complex tensors (PyTorch's Wirtinger convention)".into(),
            )
            .into());
        }
        if !dtype.is_floating_point() || dtype.is_float8() {
            return Err(IrError::invalid("requires_grad_", NOT_FLOAT).into());
        }
        if self.0.reading != Reading::DIRECT {
            return Err(IrError::Unsupported(
                "gradients of a tensor that reads its storage as another dtype".into(),
            )
            .into());
        }
        let cell = LeafCell::new(self.0.layout.clone(), true);
        self.0.link.set(GradLink::Leaf { cell, owner: true });
        Ok(self.clone())
    }

    /// Whether gradients flow to or through this tensor: a leaf that requires grad,
    /// a view of one, or a result of ops on such tensors made with grad mode on.
    ///
    /// ```
    /// use lazyfuse::{DType, Tensor};
    /// let w = Tensor::ones(&[2], DType::F32).requires_grad_(true).unwrap();
    /// assert!(w.exp().unwrap().requires_grad());
    /// assert!(!w.detach().requires_grad());
    /// assert!(!w.gt(0.0).unwrap().requires_grad()); // a bool result carries no gradient
    /// ```
    pub fn requires_grad(&self) -> bool {
        match self.link() {
            GradLink::Leaf { cell, .. } => cell.requires_grad(),
            GradLink::Detached => false,
            GradLink::Follow => self.has_history(),
        }
    }

    /// Whether this tensor is a leaf: it has no history (tensors that do not
    /// require grad are leaves too, as in PyTorch).
    ///
    /// ```
    /// use lazyfuse::{DType, Tensor};
    /// let w = Tensor::ones(&[2], DType::F32).requires_grad_(true).unwrap();
    /// assert!(w.is_leaf());
    /// assert!(!w.mul(2.0).unwrap().is_leaf());
    /// assert!(!w.narrow(0, 0, 1).unwrap().is_leaf());
    /// ```
    pub fn is_leaf(&self) -> bool {
        match self.link() {
            GradLink::Leaf { cell, owner } => owner || !cell.requires_grad(),
            GradLink::Detached => true,
            GradLink::Follow => !self.has_history(),
        }
    }

    /// Whether this tensor's storage node has recorded history.
    fn has_history(&self) -> bool {
        with_store(|s| s.records.contains(self.0.storage.node()))
    }

    /// The leaf state of a leaf handle.
    fn leaf_cell(&self) -> Option<Arc<LeafCell>> {
        match self.link() {
            GradLink::Leaf { cell, owner: true } => Some(cell),
            _ => None,
        }
    }

    /// Accumulates the gradient of this single-value tensor into the `.grad` of
    /// every leaf it depends on (PyTorch's `backward()`). The gradients are lazy:
    /// nothing is computed until one is read or realized. The history is kept, so a
    /// second call adds again.
    ///
    /// ```
    /// use lazyfuse::Tensor;
    /// let x = Tensor::from_vec(vec![1.0f32, -2.0], &[2]).unwrap().requires_grad_(true).unwrap();
    /// let loss = x.abs().unwrap().sum(&[], false).unwrap();
    /// loss.backward().unwrap();
    /// loss.backward().unwrap();
    /// assert_eq!(x.grad().unwrap().to_vec::<f32>().unwrap(), vec![2.0, -2.0]);
    /// let e = x.mul(2.0).unwrap().backward().unwrap_err();
    /// assert_eq!(e.to_string(), "grad can be implicitly created only for scalar outputs");
    /// ```
    pub fn backward(&self) -> Result<()> {
        let seeds = engine::seeds(&[self], None)?;
        engine::run(&seeds, Want::Accumulate, false).map(drop)
    }

    /// [`Tensor::backward`] seeded with `grad`, the gradient of this tensor (same
    /// shape; another dtype is converted), as PyTorch's `backward(gradient)`.
    ///
    /// ```
    /// use lazyfuse::Tensor;
    /// let x = Tensor::from_vec(vec![1.0f32, 2.0], &[2]).unwrap().requires_grad_(true).unwrap();
    /// let seed = Tensor::from_vec(vec![1.0f32, 10.0], &[2]).unwrap();
    /// x.mul(3.0).unwrap().backward_with(&seed).unwrap();
    /// assert_eq!(x.grad().unwrap().to_vec::<f32>().unwrap(), vec![3.0, 30.0]);
    /// ```
    pub fn backward_with(&self, grad: &Tensor) -> Result<()> {
        let seeds = engine::seeds(&[self], Some(&[grad]))?;
        engine::run(&seeds, Want::Accumulate, false).map(drop)
    }

    /// The gradient accumulated into this leaf by `backward` (`None` before the
    /// first, for a tensor that is not a leaf, and after `set_grad(None)`).
    ///
    /// ```
    /// use lazyfuse::{DType, Tensor};
    /// let w = Tensor::ones(&[2], DType::F32).requires_grad_(true).unwrap();
    /// assert!(w.grad().is_none());
    /// w.sum(&[], false).unwrap().backward().unwrap();
    /// assert_eq!(w.grad().unwrap().to_vec::<f32>().unwrap(), vec![1.0, 1.0]);
    /// ```
    pub fn grad(&self) -> Option<Tensor> {
        self.leaf_cell().and_then(|c| c.grad())
    }

    /// Replaces this leaf's `.grad` (PyTorch's `t.grad = g`; `None` clears it, as
    /// an optimizer's `zero_grad` does). The gradient must have this tensor's
    /// dtype, shape and device, with PyTorch's messages.
    ///
    /// ```
    /// use lazyfuse::{DType, Tensor};
    /// let w = Tensor::ones(&[2], DType::F32).requires_grad_(true).unwrap();
    /// w.set_grad(Some(&Tensor::zeros(&[2], DType::F32))).unwrap();
    /// assert!(w.set_grad(Some(&Tensor::zeros(&[3], DType::F32))).is_err());
    /// w.set_grad(None).unwrap();
    /// assert!(w.grad().is_none());
    /// ```
    pub fn set_grad(&self, grad: Option<&Tensor>) -> Result<()> {
        if let Some(g) = grad {
            self.check_grad(g)?;
        }
        let cell = match self.link() {
            GradLink::Leaf { cell, owner: true } => cell,
            GradLink::Follow if self.has_history() => {
                return Err(IrError::Unsupported(
                    "assigning .grad to a tensor that is not a leaf".into(),
                )
                .into())
            }
            GradLink::Leaf { owner: false, .. } => {
                return Err(
                    IrError::Unsupported("assigning .grad to a view of a leaf".into()).into(),
                )
            }
            // A tensor without history keeps a `.grad` as a leaf that does not
            // require grad.
            _ => {
                let cell = LeafCell::new(self.0.layout.clone(), false);
                self.0.link.set(GradLink::Leaf {
                    cell: Arc::clone(&cell),
                    owner: true,
                });
                cell
            }
        };
        cell.set_grad(grad.cloned());
        Ok(())
    }

    /// PyTorch's checks of an assigned `.grad`: dtype, device, then size.
    fn check_grad(&self, g: &Tensor) -> Result<()> {
        let message = if g.dtype() != self.dtype() {
            format!(
                "attempting to assign a gradient with dtype '{}' to a tensor with grad_dtype '{}'. \
                 The gradient must match the tensor's grad_dtype (defaults to the tensor's dtype). \
                 You can set the tensor's grad_dtype attribute with a specific dtype, or None to \
                 allow any dtype. Set grad_dtype with caution. Diverging the dtypes of a tensor \
                 and its gradient may break downstream systems that assume they match.",
                type_meta_name(g.dtype()),
                self.dtype().torch_name()
            )
        } else if g.device() != self.device() {
            format!(
                "attempting to assign a gradient located on device with type '{}' to a tensor \
                 located on device with type '{}'. Please ensure that the gradient and the \
                 tensor are on the same device",
                g.device().kind(),
                self.device().kind()
            )
        } else if g.shape() != self.shape() {
            format!(
                "attempting to assign a gradient of size '{:?}' to a tensor of size '{:?}'. \
                 Please ensure that the gradient and the tensor are the same size",
                g.shape(),
                self.shape()
            )
        } else {
            return Ok(());
        };
        Err(IrError::invalid("grad", message).into())
    }

    /// The same values without history (PyTorch's `detach`): it shares this
    /// tensor's storage (writes reach both) and does not require grad.
    ///
    /// ```
    /// use lazyfuse::{DType, Tensor};
    /// let w = Tensor::ones(&[2], DType::F32).requires_grad_(true).unwrap();
    /// let d = w.detach();
    /// assert!(!d.requires_grad() && d.shares_storage(&w));
    /// ```
    pub fn detach(&self) -> Tensor {
        let t = self.reading_as(self.0.layout.clone(), self.0.dtype, self.0.reading);
        t.0.link.set(GradLink::Detached);
        t
    }
}

/// PyTorch's refusal to change the flag of a tensor with history.
fn non_leaf_flag() -> crate::Error {
    IrError::invalid(
        "requires_grad_",
        "you can only change requires_grad flags of leaf variables. If you want to use a \
         computed variable in a subgraph that doesn't require differentiation use \
         var_no_grad = var.detach().",
    )
    .into()
}
