//! The CUDA runtime: NVRTC compilation of CUDA C to CUBIN ([`nvrtc`]), and device memory
//! and kernel launches on a GPU ([`device`]).
//!
//! Everything goes through [cudarc](https://docs.rs/cudarc) built with
//! `dynamic-loading`: `libnvrtc.so.13` and `libcuda.so` are opened on first use, so this
//! crate builds, and every non-GPU path runs, on a machine with no CUDA at all. cudarc
//! panics when a library is missing, so every entry point here probes first
//! ([`nvrtc::nvrtc_version`], [`device::driver_version`]) and returns an
//! [`Error::Cuda`](crate::Error::Cuda) that says what is missing and how to get it.
//!
//! All of the crate's CUDA `unsafe` code lives in this module, each block with the
//! reason it is sound.
//!
//! # Environment
//! - `LAZYFUSE_CUDA_INCLUDE`: the CUDA headers (`cuda_fp16.h`, `cuda_bf16.h`);
//!   default `/usr/local/cuda/include`. `scripts/install-nvrtc.sh` prints it.
//! - `LAZYFUSE_CACHE_DIR`: where compiled kernels are kept between processes; default
//!   `$XDG_CACHE_HOME/lazyfuse`, else `~/.cache/lazyfuse`.
//! - `LAZYFUSE_DEBUG=1` (or more): one line on stderr per NVRTC compile or disk-cache
//!   hit.

mod allocator;
pub mod blas;
pub mod device;
mod disk_cache;
mod matmul;
pub mod mirror;
pub mod nvrtc;

pub use allocator::AllocatorStats;
pub use device::{CudaDevice, DeviceBuffer, KernelArg, LaunchDims, Module};
pub use nvrtc::{compile_cubin, Compiled, NvrtcCompiler, Origin};

use std::sync::LazyLock;

/// `LAZYFUSE_DEBUG` as a level (the facade reads the same variable the same way).
static DEBUG: LazyLock<u8> = LazyLock::new(|| {
    std::env::var("LAZYFUSE_DEBUG")
        .ok()
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(0)
});

/// Whether `LAZYFUSE_DEBUG` asks for the CUDA runtime's lines (level 1 and up).
fn debug() -> bool {
    *DEBUG >= 1
}

/// A CUDA error as this crate's error, with the context of what was being done.
fn cuda_err(what: &str, e: impl std::fmt::Debug) -> crate::Error {
    crate::Error::Cuda(format!("CUDA: {what} failed: {e:?}"))
}
