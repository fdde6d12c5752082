//! The [`Module`] trait: PyTorch's `nn.Module` protocol of a layer with
//! parameters, buffers, children and a training mode, and what follows from it
//! (dotted names, `state_dict`, `load_state_dict`, `train`/`eval`).
//!
//! A module lists what it owns directly (its parameters, its buffers, its
//! children by name); every recursive method is provided, walking children in
//! their order and prefixing their names as PyTorch does (`0.weight`,
//! `layers.2.bias`). Tensors are shared handles: a listed parameter *is* the
//! module's parameter, so an optimizer's in-place updates reach the module.

use crate::{Result, Tensor};
use lazyfuse_ir::Error as IrError;
use std::cell::Cell;
use std::collections::HashMap;

/// A module's training flag (PyTorch's `self.training`), settable through a
/// shared reference, as `train()` and `eval()` are.
#[derive(Debug)]
pub struct TrainingFlag(Cell<bool>);

impl TrainingFlag {
    /// A flag in training mode, as every PyTorch module starts.
    pub fn new() -> TrainingFlag {
        TrainingFlag(Cell::new(true))
    }

    /// Whether the module is in training mode.
    pub fn get(&self) -> bool {
        self.0.get()
    }

    /// Sets the mode.
    pub fn set(&self, training: bool) {
        self.0.set(training)
    }
}

impl Default for TrainingFlag {
    fn default() -> TrainingFlag {
        TrainingFlag::new()
    }
}

/// What `load_state_dict` found besides the keys it loaded: PyTorch's
/// `_IncompatibleKeys` (both empty after a strict load, which fails otherwise).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct IncompatibleKeys {
    /// keys of the module that the state dict lacks
    pub missing_keys: Vec<String>,
    /// keys of the state dict that the module lacks
    pub unexpected_keys: Vec<String>,
}

/// PyTorch's `nn.Module`: a layer (or a model) with parameters, buffers and
/// children. Implementors provide `forward` and what they own; the rest is
/// provided.
///
/// ```
/// use lazyfuse::nn::{Linear, Module, Sequential, ReLU};
/// use lazyfuse::{DType, Tensor};
///
/// let model = Sequential::new()
///     .append(Linear::new(4, 8, true)?)
///     .append(ReLU::new())
///     .append(Linear::new(8, 2, true)?);
/// let names: Vec<String> = model.named_parameters().into_iter().map(|(n, _)| n).collect();
/// assert_eq!(names, ["0.weight", "0.bias", "2.weight", "2.bias"]);
/// let y = model.forward(&Tensor::ones(&[3, 4], DType::F32))?;
/// assert_eq!(y.shape(), vec![3, 2]);
/// model.eval();
/// assert!(!model.is_training());
/// # Ok::<(), lazyfuse::Error>(())
/// ```
pub trait Module {
    /// The module's computation.
    fn forward(&self, input: &Tensor) -> Result<Tensor>;

    /// The class name PyTorch's messages use (`Linear`, `Sequential`).
    fn type_name(&self) -> &'static str {
        let full = std::any::type_name::<Self>();
        let base = full.split('<').next().unwrap_or(full);
        base.rsplit("::").next().unwrap_or(base)
    }

    /// The parameters this module owns directly, by name, in registration order.
    fn own_parameters(&self) -> Vec<(String, Tensor)> {
        Vec::new()
    }

    /// The persistent buffers this module owns directly (running statistics):
    /// saved in the state dict, not trained.
    fn own_buffers(&self) -> Vec<(String, Tensor)> {
        Vec::new()
    }

    /// The direct submodules, by name, in order.
    fn children(&self) -> Vec<(String, &dyn Module)> {
        Vec::new()
    }

    /// This module's own training flag, where it has one.
    fn training_flag(&self) -> Option<&TrainingFlag> {
        None
    }

    /// Every parameter of this module and its descendants with its dotted name,
    /// each once, in PyTorch's order (own first, then each child's).
    fn named_parameters(&self) -> Vec<(String, Tensor)> {
        let mut out = Vec::new();
        collect(self, "", &mut out, Owned::Parameters);
        dedup(out)
    }

    /// The parameters of [`Module::named_parameters`], without their names.
    fn parameters(&self) -> Vec<Tensor> {
        self.named_parameters()
            .into_iter()
            .map(|(_, t)| t)
            .collect()
    }

    /// Every persistent buffer with its dotted name.
    fn named_buffers(&self) -> Vec<(String, Tensor)> {
        let mut out = Vec::new();
        collect(self, "", &mut out, Owned::Buffers);
        dedup(out)
    }

    /// Sets training mode (`true`) or evaluation mode on this module and every
    /// descendant (PyTorch's `train(mode)`).
    fn train(&self, mode: bool) {
        if let Some(flag) = self.training_flag() {
            flag.set(mode);
        }
        for (_, child) in self.children() {
            child.train(mode);
        }
    }

    /// Evaluation mode: `train(false)`.
    fn eval(&self) {
        self.train(false)
    }

    /// Whether this module is in training mode (a module without a flag of its
    /// own reports its first child's, and training when it has none).
    fn is_training(&self) -> bool {
        match self.training_flag() {
            Some(flag) => flag.get(),
            None => self.children().first().is_none_or(|(_, c)| c.is_training()),
        }
    }

    /// The parameters and buffers by dotted name, in PyTorch's `state_dict` order
    /// (per module: parameters, then buffers, then children; a shared tensor
    /// under each of its names). Each is a detached alias of the module's own
    /// storage, as PyTorch's are: not a copy.
    fn state_dict(&self) -> Vec<(String, Tensor)> {
        let mut out = Vec::new();
        collect(self, "", &mut out, Owned::State);
        out.into_iter().map(|(n, t)| (n, t.detach())).collect()
    }

    /// Copies `state_dict`'s tensors into this module's parameters and buffers
    /// (converted to their dtypes and devices, outside autograd), as PyTorch's
    /// `load_state_dict(state_dict, strict)`. A shape mismatch is an error; with
    /// `strict`, so are missing and unexpected keys, reported in PyTorch's
    /// message. Everything is checked before anything is copied: an error leaves
    /// the module as it was.
    ///
    /// ```
    /// use lazyfuse::nn::{Linear, Module};
    /// use std::collections::HashMap;
    /// let a = Linear::new(3, 2, true)?;
    /// let b = Linear::new(3, 2, true)?;
    /// let state: HashMap<String, lazyfuse::Tensor> = a.state_dict().into_iter().collect();
    /// b.load_state_dict(&state, true)?;
    /// assert_eq!(b.weight.to_vec::<f32>()?, a.weight.to_vec::<f32>()?);
    /// let mut partial = state.clone();
    /// partial.remove("bias");
    /// let err = b.load_state_dict(&partial, true).unwrap_err().to_string();
    /// assert!(err.contains("Missing key(s) in state_dict: \"bias\"."), "{err}");
    /// assert_eq!(b.load_state_dict(&partial, false)?.missing_keys, ["bias"]);
    /// # Ok::<(), lazyfuse::Error>(())
    /// ```
    fn load_state_dict(
        &self,
        state_dict: &HashMap<String, Tensor>,
        strict: bool,
    ) -> Result<IncompatibleKeys> {
        let own = self.state_dict();
        let mut keys = IncompatibleKeys::default();
        let mut mismatches = Vec::new();
        for (name, tensor) in &own {
            match state_dict.get(name) {
                None => keys.missing_keys.push(name.clone()),
                Some(src) if src.shape() != tensor.shape() => mismatches.push(format!(
                    "size mismatch for {name}: copying a param with shape {} from checkpoint, the shape in current model is {}.",
                    torch_size(&src.shape()),
                    torch_size(&tensor.shape())
                )),
                Some(_) => {}
            }
        }
        let mut unexpected: Vec<&String> = state_dict
            .keys()
            .filter(|k| !own.iter().any(|(n, _)| n == *k))
            .collect();
        unexpected.sort();
        keys.unexpected_keys = unexpected.into_iter().cloned().collect();
        let mut errors = Vec::new();
        if strict {
            let quoted = |ks: &[String]| {
                ks.iter()
                    .map(|k| format!("\"{k}\""))
                    .collect::<Vec<_>>()
                    .join(", ")
            };
            if !keys.missing_keys.is_empty() {
                errors.push(format!(
                    "Missing key(s) in state_dict: {}. ",
                    quoted(&keys.missing_keys)
                ));
            }
            if !keys.unexpected_keys.is_empty() {
                errors.push(format!(
                    "Unexpected key(s) in state_dict: {}. ",
                    quoted(&keys.unexpected_keys)
                ));
            }
        }
        errors.extend(mismatches);
        if !errors.is_empty() {
            return Err(IrError::invalid(
                "load_state_dict",
                format!(
                    "Error(s) in loading state_dict for {}:\n\t{}",
                    self.type_name(),
                    errors.join("\n\t")
                ),
            )
            .into());
        }
        crate::no_grad(|| {
            for (name, tensor) in &own {
                if let Some(src) = state_dict.get(name) {
                    tensor.copy_(src)?;
                }
            }
            let targets: Vec<&Tensor> = own.iter().map(|(_, t)| t).collect();
            crate::realize_all(&targets)
        })?;
        Ok(keys)
    }

    /// Sets every parameter's gradient to `None` (PyTorch's default
    /// `zero_grad(set_to_none=True)`).
    fn zero_grad(&self) -> Result<()> {
        for p in self.parameters() {
            p.set_grad(None)?;
        }
        Ok(())
    }
}

/// PyTorch's `torch.Size([2, 3])`.
fn torch_size(shape: &[usize]) -> String {
    let dims: Vec<String> = shape.iter().map(usize::to_string).collect();
    format!("torch.Size([{}])", dims.join(", "))
}

/// Which of a module's own tensors a walk collects.
#[derive(Clone, Copy)]
enum Owned {
    Parameters,
    Buffers,
    /// parameters, then buffers
    State,
}

/// Appends the `what` tensors of `m` and then of every descendant, names
/// prefixed.
fn collect<M: Module + ?Sized>(m: &M, prefix: &str, out: &mut Vec<(String, Tensor)>, what: Owned) {
    let own = match what {
        Owned::Parameters => m.own_parameters(),
        Owned::Buffers => m.own_buffers(),
        Owned::State => {
            let mut own = m.own_parameters();
            own.extend(m.own_buffers());
            own
        }
    };
    for (name, t) in own {
        out.push((format!("{prefix}{name}"), t));
    }
    for (name, child) in m.children() {
        collect(child, &format!("{prefix}{name}."), out, what);
    }
}

/// Keeps the first name of a tensor listed twice (a shared parameter), as
/// PyTorch's `named_parameters(remove_duplicate=True)`.
fn dedup(all: Vec<(String, Tensor)>) -> Vec<(String, Tensor)> {
    let mut out: Vec<(String, Tensor)> = Vec::with_capacity(all.len());
    for (name, t) in all {
        if !out
            .iter()
            .any(|(_, seen)| std::sync::Arc::ptr_eq(&seen.0, &t.0))
        {
            out.push((name, t));
        }
    }
    out
}
