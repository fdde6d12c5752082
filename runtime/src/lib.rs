//! lazyfuse-runtime: buffers and execution.
//!
//! This crate holds host [`Buffer`]s and the reference interpreter ([`interp`]), which
//! executes a graph node by node with PyTorch's numerics: the oracle every compiled
//! backend is compared with. It runs compiled schedules ([`exec`] on the CPU,
//! [`resident`] on a GPU) but compiles nothing itself and does not depend on the code
//! generators: the compile stage (`lazyfuse-compile`) hands it loaded code through
//! `lazyfuse_ir::kernel::KernelCode`. [`jit_symbols`] holds the functions JIT-compiled
//! kernels call, thin wrappers over the interpreter's scalar code. [`cuda`] is the
//! CUDA runtime: NVRTC with its caches, device memory and kernel launches, all loaded
//! at run time, so nothing here needs CUDA to build.
#![deny(missing_docs)]

mod blas;
pub mod buffer;
pub mod buffer_cache;
pub mod cuda;
pub mod env_switch;
mod epilogue;
pub mod error;
pub mod exec;
pub mod interp;
pub mod jit_symbols;
pub mod kernel_eval;
mod mapped_file;
pub mod pool;
pub mod resident;
mod streamed_transpose;
mod tiled_gemm;
pub mod vector_runs;

pub use buffer::{Buffer, Element};
pub use error::{Error, Result};
pub use half;
pub use mapped_file::MappedFile;
pub use num_complex::Complex;
