//! The CUDA compile check: every schedule a realize makes also has its loop kernels
//! translated to CUDA C (`lazyfuse_codegen::cuda`) and compiled by NVRTC to an sm_90
//! CUBIN, while the values are still computed on the CPU. It proves, on machines
//! without a GPU, that the GPU backend can compile every kernel a workload makes; a
//! failure is the realize's error, with NVRTC's log and the numbered source.
//!
//! Off by default; [`set_cuda_compile_check`] or `LAZYFUSE_CUDA_COMPILE_CHECK=1` turn
//! it on (the conformance runner's `--cuda-compile-check`). NVRTC must be installed
//! (`scripts/install-nvrtc.sh`); compiled kernels are cached in memory and on disk, so
//! a kernel seen before costs a lookup.

use crate::error::{Error, Result};
use lazyfuse_ir::kernel::{MathMode, Schedule, Step};
use lazyfuse_runtime::env_switch::EnvSwitch;
use std::sync::atomic::{AtomicUsize, Ordering};

/// The architecture the check assembles for (the H100/H200 of our GPU machines).
pub const CHECK_ARCH: &str = "sm_90";

/// Whether realizes run the check (`LAZYFUSE_CUDA_COMPILE_CHECK`, read once).
static CHECK: EnvSwitch = EnvSwitch::new("LAZYFUSE_CUDA_COMPILE_CHECK");
static UNITS: AtomicUsize = AtomicUsize::new(0);
static KERNELS: AtomicUsize = AtomicUsize::new(0);

/// Turns the CUDA compile check on or off for every realize from now on; the
/// environment variable `LAZYFUSE_CUDA_COMPILE_CHECK` (`1` or `0`) sets the initial
/// value.
///
/// ```
/// lazyfuse::set_cuda_compile_check(false);
/// assert!(!lazyfuse::cuda_compile_check());
/// ```
pub fn set_cuda_compile_check(on: bool) {
    CHECK.set(on);
}

/// Whether realizes compile their kernels' CUDA C with NVRTC as a check.
///
/// ```
/// let _ = lazyfuse::cuda_compile_check();
/// ```
pub fn cuda_compile_check() -> bool {
    CHECK.get()
}

/// What the check has done in this process: (translation units compiled or found in
/// a cache, loop kernels in them).
///
/// ```
/// let (units, kernels) = lazyfuse::cuda_compile_check_counts();
/// assert!(kernels >= units || units == 0);
/// ```
pub fn cuda_compile_check_counts() -> (usize, usize) {
    (
        UNITS.load(Ordering::Relaxed),
        KERNELS.load(Ordering::Relaxed),
    )
}

/// Compiles the loop kernels of `schedule` as one translation unit for
/// [`CHECK_ARCH`]; an `Err` holds what failed.
pub(crate) fn check(schedule: &Schedule, math: MathMode) -> Result<()> {
    let cuda = |msg: String| Error::Runtime(lazyfuse_runtime::Error::Cuda(msg));
    let mut kernels = Vec::new();
    for step in &schedule.steps {
        if let Step::Loop(k) = step {
            kernels.push(
                lazyfuse_codegen::cuda::kernel_source(k, math)
                    .map_err(|e| cuda(format!("CUDA C of kernel {}: {e}", k.name)))?,
            );
        }
    }
    if kernels.is_empty() {
        return Ok(());
    }
    let unit = lazyfuse_codegen::cuda::translation_unit(&kernels);
    lazyfuse_runtime::cuda::nvrtc::global()?.compile(&unit, CHECK_ARCH)?;
    UNITS.fetch_add(1, Ordering::Relaxed);
    KERNELS.fetch_add(kernels.len(), Ordering::Relaxed);
    Ok(())
}
