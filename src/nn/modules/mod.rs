//! The layers of `torch.nn`, each a [`Module`](crate::nn::Module) with
//! PyTorch's parameter names, shapes and default initialization.
//!
//! # Files
//! `linear` (`Linear`), `conv` (`Conv2d` and its options), `norm` (`BatchNorm2d`,
//! `LayerNorm`), `embedding` (`Embedding`), `stateless` (`ReLU`, `Dropout`,
//! `Flatten`, `MaxPool2d`), `sequential` (`Sequential`).

mod conv;
mod embedding;
mod linear;
mod norm;
mod sequential;
mod stateless;

pub use conv::{Conv2d, Conv2dOptions, Conv2dPadding};

use crate::Tensor;

/// The present tensors among `fields`, named: a module's own parameters or
/// buffers, an absent one (a layer without bias) left out.
fn named(fields: &[(&str, Option<&Tensor>)]) -> Vec<(String, Tensor)> {
    fields
        .iter()
        .filter_map(|(n, t)| t.map(|t| (n.to_string(), t.clone())))
        .collect()
}
pub use embedding::Embedding;
pub use linear::Linear;
pub use norm::{BatchNorm2d, LayerNorm};
pub use sequential::Sequential;
pub use stateless::{Dropout, Flatten, MaxPool2d, ReLU};
