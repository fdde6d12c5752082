//! `torch.nn.functional` (users write `use lazyfuse::nn::functional as F;`):
//! PyTorch's names and positional arguments, tensors as `&Tensor`, optional
//! tensors as `Option<&Tensor>`, string modes as enums of this module.
//!
//! # Files
//! `linear` (`linear`), `loss` (the regression losses and [`Reduction`]).

mod linear;
mod loss;

pub use linear::linear;
pub use loss::{huber_loss, l1_loss, mse_loss, smooth_l1_loss, Reduction};
