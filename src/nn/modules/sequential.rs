//! `nn.Sequential`: modules applied in order, named `0`, `1`, ….

use crate::nn::{Module, TrainingFlag};
use crate::{Result, Tensor};

/// PyTorch's `nn.Sequential(*modules)`: `forward` feeds each module's output to
/// the next; the children are named by position, so their parameters are
/// `0.weight`, `2.bias`, ….
///
/// ```
/// use lazyfuse::nn::{Linear, Module, ReLU, Sequential};
/// use lazyfuse::{DType, Tensor};
/// let mlp = Sequential::new()
///     .append(Linear::new(2, 4, true)?)
///     .append(ReLU::new())
///     .append(Linear::new(4, 1, false)?);
/// assert_eq!(mlp.len(), 3);
/// assert_eq!(mlp.parameters().len(), 3);
/// assert_eq!(mlp.forward(&Tensor::ones(&[5, 2], DType::F32))?.shape(), vec![5, 1]);
/// # Ok::<(), lazyfuse::Error>(())
/// ```
#[derive(Default)]
pub struct Sequential {
    layers: Vec<Box<dyn Module>>,
    training: TrainingFlag,
}

impl Sequential {
    /// An empty container (its `forward` is the identity).
    pub fn new() -> Sequential {
        Sequential::default()
    }

    /// This container with `module` appended (PyTorch's `append`, which returns
    /// the container too).
    pub fn append(mut self, module: impl Module + 'static) -> Sequential {
        self.push(Box::new(module));
        self
    }

    /// Appends a module, taking the training mode of the container.
    pub fn push(&mut self, module: Box<dyn Module>) {
        module.train(self.training.get());
        self.layers.push(module);
    }

    /// The number of modules.
    pub fn len(&self) -> usize {
        self.layers.len()
    }

    /// Whether it holds no module.
    pub fn is_empty(&self) -> bool {
        self.layers.is_empty()
    }

    /// The module at `index`.
    pub fn get(&self, index: usize) -> Option<&dyn Module> {
        self.layers.get(index).map(|m| m.as_ref())
    }
}

impl std::fmt::Debug for Sequential {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let names: Vec<&str> = self.layers.iter().map(|m| m.type_name()).collect();
        write!(f, "Sequential{names:?}")
    }
}

impl Module for Sequential {
    fn forward(&self, input: &Tensor) -> Result<Tensor> {
        let mut x = input.clone();
        for layer in &self.layers {
            x = layer.forward(&x)?;
        }
        Ok(x)
    }

    fn children(&self) -> Vec<(String, &dyn Module)> {
        self.layers
            .iter()
            .enumerate()
            .map(|(i, m)| (i.to_string(), m.as_ref()))
            .collect()
    }

    fn training_flag(&self) -> Option<&TrainingFlag> {
        Some(&self.training)
    }
}
