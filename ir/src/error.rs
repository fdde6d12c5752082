//! The IR's error type. Every variant renders PyTorch's message text, so a user who
//! knows PyTorch recognises the failure; the variants keep the facts structured.

use crate::dtype::DType;

/// Result alias of this crate.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// An error found while building the graph (shapes, dtypes, dims, views).
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum Error {
    /// Two shapes do not broadcast.
    #[error("The size of tensor a ({size_a}) must match the size of tensor b ({size_b}) at non-singleton dimension {dim}")]
    Broadcast {
        /// size of the left operand at the failing dim
        size_a: usize,
        /// size of the right operand at the failing dim
        size_b: usize,
        /// the failing dim, counted in the broadcast result
        dim: usize,
    },
    /// `expand`/`broadcast_to` to an incompatible shape.
    #[error("The expanded size of the tensor ({target}) must match the existing size ({existing}) at non-singleton dimension {dim}.  Target sizes: {target_shape}.  Tensor sizes: {tensor_shape}")]
    Expand {
        /// requested size
        target: isize,
        /// current size
        existing: usize,
        /// the dim
        dim: usize,
        /// the requested shape, formatted
        target_shape: String,
        /// the tensor's shape, formatted
        tensor_shape: String,
    },
    /// Promotion of a wide unsigned dtype with another integer or bool dtype.
    #[error("Promotion for uint16, uint32, uint64 types is not supported, attempted to promote {} and {}", .a.torch_name(), .b.torch_name())]
    UnsignedPromotion {
        /// left dtype
        a: DType,
        /// right dtype
        b: DType,
    },
    /// An op has no kernel for a dtype.
    #[error("\"{kernel}\" not implemented for '{}'", .dtype.torch_name())]
    NotImplemented {
        /// PyTorch's kernel name, e.g. `bitwise_and_cpu`
        kernel: String,
        /// the dtype
        dtype: DType,
    },
    /// An op refuses its input with a message of its own (PyTorch's text).
    #[error("{message}")]
    Invalid {
        /// the op's name
        op: String,
        /// the message
        message: String,
    },
    /// An in-place op's result cannot be cast back to the destination dtype.
    #[error("result type {} can't be cast to the desired output type {}", .result.torch_name(), .output.torch_name())]
    InplaceCast {
        /// the computed dtype
        result: DType,
        /// the destination dtype
        output: DType,
    },
    /// An in-place op's broadcast would change the destination's shape.
    #[error("output with shape {} doesn't match the broadcast shape {}", fmt_shape(.output), fmt_shape(.broadcast))]
    InplaceShape {
        /// destination shape
        output: Vec<usize>,
        /// broadcast shape
        broadcast: Vec<usize>,
    },
    /// A dim argument outside `[-ndim, ndim)`.
    #[error("Dimension out of range (expected to be in range of [{min}, {max}], but got {dim})")]
    DimOutOfRange {
        /// the given dim
        dim: isize,
        /// smallest valid
        min: isize,
        /// largest valid
        max: isize,
    },
    /// `view` of a layout that cannot be expressed with strides.
    #[error("view size is not compatible with input tensor's size and stride (at least one dimension spans across two contiguous subspaces). Use .reshape(...) instead.")]
    ViewIncompatible,
    /// A write to a tensor in which several elements share one memory location.
    #[error("unsupported operation: more than one element of the written-to tensor refers to a single memory location. Please clone() the tensor before performing the operation.")]
    InternalOverlap,
    /// A write whose input partially overlaps the destination.
    #[error("unsupported operation: some elements of the input tensor and the written-to tensor refer to a single memory location. Please clone() the tensor before performing the operation.")]
    PartialOverlap,
    /// Integer division by a zero known at build time (a Python scalar).
    #[error("ZeroDivisionError")]
    ZeroDivision,
    /// Something lazyfuse does not support yet (never PyTorch's error; ours).
    #[error("lazyfuse does not support {0} yet")]
    Unsupported(String),
}

impl Error {
    /// Shorthand for [`Error::Invalid`].
    pub fn invalid(op: impl Into<String>, message: impl Into<String>) -> Self {
        Error::Invalid {
            op: op.into(),
            message: message.into(),
        }
    }

    /// Shorthand for [`Error::NotImplemented`].
    pub fn not_implemented(kernel: impl Into<String>, dtype: DType) -> Self {
        Error::NotImplemented {
            kernel: kernel.into(),
            dtype,
        }
    }

    /// True when the failure is a gap of lazyfuse, not a refusal PyTorch makes too.
    pub fn is_unsupported(&self) -> bool {
        matches!(self, Error::Unsupported(_))
    }
}

/// Formats a shape as PyTorch prints sizes in messages: `[2, 3]`.
///
/// ```
/// assert_eq!(lazyfuse_ir::shape::fmt_shape(&[2, 3]), "[2, 3]");
/// ```
pub fn fmt_shape(shape: &[usize]) -> String {
    let parts: Vec<String> = shape.iter().map(|s| s.to_string()).collect();
    format!("[{}]", parts.join(", "))
}
