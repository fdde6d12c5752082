//! The error of both code generators: why a kernel could not be compiled.

/// Why a kernel could not be compiled.
#[derive(Debug, thiserror::Error)]
pub enum CodegenError {
    /// An op or dtype the CPU backend (like the interpreter) has no kernel for.
    #[error("the CPU backend cannot compile {0}")]
    Unsupported(String),
    /// An op or dtype the CUDA code generator has no translation for.
    #[error("the CUDA backend cannot compile {0}")]
    CudaUnsupported(String),
    /// Cranelift failed (a bug here, or an unusable host).
    #[error("cranelift: {0}")]
    Backend(String),
    /// A runtime function the kernel calls is not in the symbol table.
    #[error("the CPU backend needs the runtime function `{0}`, which the symbol table lacks")]
    MissingSymbol(String),
    /// The kernel is malformed (it fails `LoopKernel::verify`).
    #[error("malformed kernel: {0}")]
    Malformed(String),
}
