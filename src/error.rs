//! The facade's error type: wraps the IR's (build-time) and the runtime's
//! (realize-time) errors and adds the API's own, all with PyTorch-like messages.

/// Result alias of the lazyfuse API.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Any failure of a lazyfuse operation.
///
/// ```
/// use lazyfuse::{DType, Tensor};
/// let a = Tensor::zeros(&[2], DType::F32);
/// let b = Tensor::zeros(&[3], DType::F32);
/// let err = a.add(&b).unwrap_err();
/// assert_eq!(
///     err.to_string(),
///     "The size of tensor a (2) must match the size of tensor b (3) at non-singleton dimension 0"
/// );
/// ```
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum Error {
    /// Found while building the graph: shapes, dtypes, dims, views, promotion.
    #[error(transparent)]
    Build(#[from] lazyfuse_ir::Error),
    /// Found while executing the graph (integer division by zero, …).
    #[error(transparent)]
    Runtime(#[from] lazyfuse_runtime::Error),
    /// `to_vec::<T>` with a `T` that is not the tensor's element type.
    #[error("to_vec: expected element type {requested} but the tensor's dtype is {actual}")]
    ElementType {
        /// the dtype of the requested `T`
        requested: lazyfuse_ir::DType,
        /// the tensor's dtype
        actual: lazyfuse_ir::DType,
    },
    /// Data whose length does not match the requested shape.
    #[error("{op}: shape {shape:?} has {expected} elements but the data has {actual}")]
    DataLength {
        /// the constructor
        op: &'static str,
        /// the requested shape
        shape: Vec<usize>,
        /// elements the shape needs
        expected: usize,
        /// elements given
        actual: usize,
    },
    /// An unknown device string.
    #[error("Expected one of cpu, cuda, ipu, xpu, mkldnn, opengl, opencl, ideep, hip, ve, fpga, maia, xla, lazy, vulkan, mps, meta, hpu, mtia, privateuseone device type at start of device string: {0}")]
    Device(String),
    /// A negative CUDA ordinal (`Device::try_from(-1)`), PyTorch's message.
    #[error("Device index must not be negative")]
    InvalidDeviceIndex,
    /// A device string with a known type but a malformed index (`"cuda:+1"`,
    /// `"cpu:01"`, `"cuda:"`), PyTorch's message.
    #[error("Invalid device string: '{0}'")]
    InvalidDevice(String),
    /// Tensors of two devices in one op (PyTorch's message, after the op's name).
    /// Zero-dim CPU tensors are the exception: they join an op on a CUDA device.
    #[error("{op}: Expected all tensors to be on the same device, but found at least two devices, {first} and {second}!")]
    DeviceMismatch {
        /// the op
        op: String,
        /// the op's device
        first: crate::Device,
        /// the other device found
        second: crate::Device,
    },
    /// A lazyfuse setting (an environment variable such as `LAZYFUSE_CPU_BACKEND`)
    /// with a value it does not know.
    #[error("{0}")]
    Config(String),
}

impl Error {
    /// The error of an op (`op`) that met tensors on `first` and `second`.
    pub(crate) fn device_mismatch(op: &str, first: crate::Device, second: crate::Device) -> Self {
        Error::DeviceMismatch {
            op: op.to_string(),
            first,
            second,
        }
    }

    /// True when the failure is a gap of lazyfuse ("not supported yet"), not a
    /// refusal that PyTorch makes too.
    ///
    /// ```
    /// use lazyfuse::{DType, Tensor};
    /// let t = Tensor::zeros(&[1], DType::F32);
    /// assert!(t.to_device("mps").unwrap_err().is_unsupported()); // a gap of lazyfuse
    /// let b = Tensor::zeros(&[1], DType::Bool);
    /// assert!(!b.sub(&b).unwrap_err().is_unsupported()); // PyTorch refuses it too
    /// ```
    pub fn is_unsupported(&self) -> bool {
        match self {
            Error::Build(e) => e.is_unsupported(),
            Error::Runtime(lazyfuse_runtime::Error::Unsupported(_)) => true,
            _ => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runtime_errors_keep_their_message() {
        // CUDA errors carry what to do ("run scripts/install-nvrtc.sh"), NVRTC's log and
        // the kernel's source: the facade must show them unchanged.
        let msg = "NVRTC not found: libnvrtc.so.13 is not on the library path (run scripts/install-nvrtc.sh)";
        let e: Error = lazyfuse_runtime::Error::Cuda(msg.to_string()).into();
        assert_eq!(e.to_string(), msg);
        assert!(!e.is_unsupported());
    }
}
