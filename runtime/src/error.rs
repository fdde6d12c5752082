//! The runtime's error type: failures found while executing a graph.

/// Result alias of this crate.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// A failure during execution.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum Error {
    /// Integer division (or remainder) by zero, found in the data.
    #[error("ZeroDivisionError")]
    ZeroDivision,
    /// An integer raised to a negative integer power, found in the data.
    #[error("Integers to negative integer powers are not allowed.")]
    NegativeIntegerPower,
    /// The graph asks for something the interpreter cannot do yet.
    #[error("lazyfuse does not support {0} yet")]
    Unsupported(String),
    /// The graph is malformed (a bug in the builder, reported instead of a panic).
    #[error("malformed graph: {0}")]
    Malformed(String),
    /// An index found in the data is out of range (PyTorch's message, naming the index
    /// and the size: "index 5 is out of bounds for dimension 0 with size 3").
    #[error("{0}")]
    IndexOutOfRange(String),
    /// A result whose size does not fit memory arithmetic (PyTorch's "Storage size
    /// calculation overflowed with sizes=[…]" or "numel: integer multiplication
    /// overflow"): the message.
    #[error("{0}")]
    SizeOverflow(String),
    /// The allocator refused a buffer (PyTorch's `DefaultCPUAllocator` message).
    #[error("DefaultCPUAllocator: can't allocate memory: you tried to allocate {bytes} bytes. Error code 12 (Cannot allocate memory)")]
    OutOfMemory {
        /// the size asked for
        bytes: usize,
    },
    /// A failure of the CUDA backend: a missing or too old NVRTC or driver, a kernel
    /// that does not compile (the message holds NVRTC's log and the numbered source), a
    /// driver call that failed. The message is complete and says what to do where it can.
    #[error("{0}")]
    Cuda(String),
}
