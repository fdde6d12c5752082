//! `lazyfuse::nn`: neural-network building blocks, as PyTorch's `torch.nn`.
//!
//! [`functional`] holds the stateless functions of `torch.nn.functional`, each a
//! composition of lazyfuse's ops (so it fuses with its neighbours and
//! differentiates through autograd's rules), with PyTorch's argument order,
//! dtypes, shapes and errors. The layers ([`Linear`], [`Conv2d`],
//! [`BatchNorm2d`], [`LayerNorm`], [`Embedding`], [`Dropout`], [`Sequential`], …)
//! hold parameters and implement the [`Module`] trait (dotted names,
//! `state_dict`, `load_state_dict`, `train`/`eval`); [`init`] holds their
//! initializations and [`utils`] `clip_grad_norm_`.
//!
//! ```
//! use lazyfuse::nn::functional::{self as F, Reduction};
//! use lazyfuse::{DType, Tensor};
//!
//! let x = Tensor::ones(&[2, 3, 8, 8], DType::F32);
//! let w = Tensor::ones(&[4, 3, 3, 3], DType::F32).mul(0.1)?.requires_grad_(true)?;
//! let h = F::conv2d(&x, &w, None, &[1], &[1], &[1], 1)?.relu()?;
//! let h = F::max_pool2d(&h, &[2], &[], &[0], &[1], false)?; // [2, 4, 4, 4]
//! let logits = h.mean(&[2, 3], false)?; // [2, 4]
//! let target = Tensor::from_vec(vec![1i64, 3], &[2])?;
//! let loss = F::cross_entropy(&logits, &target, None, -100, Reduction::Mean, 0.0)?;
//! loss.backward()?;
//! assert_eq!(w.grad().unwrap().shape(), vec![4, 3, 3, 3]);
//! # Ok::<(), lazyfuse::Error>(())
//! ```

pub mod functional;
pub mod init;
mod module;
mod modules;
pub mod utils;

pub use module::{IncompatibleKeys, Module, TrainingFlag};
pub use modules::{
    BatchNorm2d, Conv2d, Conv2dOptions, Conv2dPadding, Dropout, Embedding, Flatten, LayerNorm,
    Linear, MaxPool2d, ReLU, Sequential,
};
