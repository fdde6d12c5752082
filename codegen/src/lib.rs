//! lazyfuse-codegen: translation of scheduled kernels into native code.
//!
//! This crate turns the kernel IR produced by `lazyfuse-ir`'s scheduler into
//! Cranelift functions (CPU) and CUDA C source compiled with NVRTC (GPU). It is pure
//! translation: it owns no buffers and launches nothing; `lazyfuse-runtime` does that.
//!
//! [`cpu`] compiles loop kernels with Cranelift; [`cuda`] translates them to CUDA C
//! for NVRTC (the runtime compiles and launches it); every backend here is checked
//! against the reference interpreter. Both generators render one lowering (the
//! private `emitter` module: the order of a point's stages, phases and stores, and
//! the dispatch of each expression) and one set of value rules (`semantics`).

pub mod cpu;
pub mod cuda;
mod emitter;
mod error;
mod semantics;

pub use error::CodegenError;
