//! lazyfuse-codegen: translation of scheduled kernels into native code.
//!
//! This crate will turn the kernel IR produced by `lazyfuse-ir`'s scheduler into
//! Cranelift functions (CPU) and CUDA C source compiled with NVRTC (GPU). It is pure
//! translation: it owns no buffers and launches nothing; `lazyfuse-runtime` does that.
//!
//! Nothing is generated yet: the semantic core (dtypes, promotion, views, the lazy graph
//! and the reference interpreter) comes first, and every backend added here will be
//! checked against that interpreter.
