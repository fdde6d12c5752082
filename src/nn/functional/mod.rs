//! `torch.nn.functional` (users write `use lazyfuse::nn::functional as F;`):
//! PyTorch's names and positional arguments, tensors as `&Tensor`, optional
//! tensors as `Option<&Tensor>`, string modes as enums of this module.
//!
//! # Files
//! `linear` (`linear`), `embedding` (`embedding`, `one_hot`), `norm` (`layer_norm`,
//! `rms_norm`, `group_norm`), `loss` (the regression losses and [`Reduction`]),
//! `classification` (`nll_loss`, `cross_entropy`, `binary_cross_entropy_with_logits`,
//! `kl_div`), `attention` (`scaled_dot_product_attention`), `interpolate`,
//! `pooling` (`max_pool2d`, `avg_pool2d`, the adaptive pools), `batch_norm`, `conv`
//! (`conv1d`, `conv2d`, `conv2d_same`, `conv_transpose2d`), `dropout`.

mod attention;
mod batch_norm;
mod classification;
mod conv;
mod dropout;
mod embedding;
mod interpolate;
mod linear;
mod loss;
mod norm;
mod pooling;

pub use attention::scaled_dot_product_attention;
pub use batch_norm::batch_norm;
pub use classification::{
    binary_cross_entropy, binary_cross_entropy_with_logits, cross_entropy, kl_div, nll_loss,
    KlReduction,
};
pub use conv::{conv1d, conv2d, conv2d_same, conv_transpose2d};
pub use dropout::dropout;
pub use embedding::{embedding, one_hot};
pub use interpolate::{interpolate, InterpolateMode};
pub use linear::linear;
pub use loss::{huber_loss, l1_loss, mse_loss, smooth_l1_loss, Reduction};
pub use norm::{group_norm, layer_norm, rms_norm};
pub use pooling::{
    adaptive_avg_pool2d, adaptive_max_pool2d, avg_pool2d, max_pool2d, max_pool2d_with_indices,
};

use crate::{MemoryFormat, Tensor};
use lazyfuse_ir::{DType, Error as IrError};

/// PyTorch's refusal of bad arguments to `op`, worded `message`.
fn invalid(op: &str, message: impl Into<String>) -> crate::Error {
    IrError::invalid(op, message.into()).into()
}

/// Whether `t` is in PyTorch's channels-last layout (its suggested memory format
/// for a 4-D tensor: dense NHWC strides, and not also plain contiguous).
fn is_channels_last(t: &Tensor) -> bool {
    t.ndim() == 4 && !t.is_contiguous() && t.is_contiguous_in(MemoryFormat::ChannelsLast)
}

/// `y` laid out channels-last where `channels_last`, else contiguous (PyTorch's
/// convolutions, pools and batch norm return dense results in their input's
/// memory format): where `y` is not so already, a copy, which the kernel
/// computing `y` stores directly.
fn keep_format(y: Tensor, channels_last: bool) -> crate::Result<Tensor> {
    if channels_last && y.ndim() == 4 {
        y.contiguous_in(MemoryFormat::ChannelsLast)
    } else {
        y.contiguous()
    }
}

/// Refuses a dtype that is not a real floating one, as PyTorch's kernel `kernel`
/// refuses it (`"kernel" not implemented for 'Long'`).
fn require_float(kernel: &str, dtype: DType) -> crate::Result<()> {
    if dtype.is_floating_point() {
        Ok(())
    } else {
        Err(IrError::not_implemented(kernel, dtype).into())
    }
}
