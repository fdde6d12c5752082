//! The schedule stage: a graph (after the passes stage) → its `Schedule`, with the
//! settings' fusion and math mode and, on a GPU, the device's forms (matmul kernels,
//! cuBLAS where usable).

use crate::error::{Error, Result};
use crate::settings::Settings;
use lazyfuse_ir::kernel::{MathMode, Schedule};
use lazyfuse_ir::schedule::{schedule_donating, ScheduleOptions};
use lazyfuse_ir::{Graph, InputId, NodeId};

/// The schedule stage: the schedule of `graph` (after the passes stage,
/// [`super::passes`]) for `targets` with the settings' fusion and math mode;
/// in-place writes may store into the buffers of the inputs `donate`. On a GPU,
/// matmul is a generated kernel (or cuBLAS) rather than an extern step on the host.
pub(crate) fn schedule_of(
    graph: &Graph,
    targets: &[NodeId],
    donate: &[InputId],
    settings: &Settings,
) -> Result<Schedule> {
    let on_gpu = settings.on_gpu();
    let opts = ScheduleOptions {
        fuse: settings.fuse,
        math: settings.math,
        matmul_kernels: on_gpu,
        // cuBLAS reorders the sum: fast math only, and a real GPU only.
        library_float_matmul: on_gpu && settings.math == MathMode::Fast && cublas_usable(settings),
    };
    schedule_donating(graph, targets, &opts, donate)
        .map_err(|e| Error::Runtime(lazyfuse_runtime::Error::Unsupported(e)))
}

/// Whether float matmul on a GPU goes to cuBLAS: a GPU (not the emulation) and the
/// library present. Says why not once under `LAZYFUSE_DEBUG`.
pub(super) fn cublas_usable(settings: &Settings) -> bool {
    if settings.emulated {
        return false;
    }
    match lazyfuse_runtime::cuda::blas::cublas_version() {
        Ok(_) => true,
        Err(why) => {
            static SAID: std::sync::Once = std::sync::Once::new();
            if settings.debug >= 1 {
                SAID.call_once(|| {
                    eprintln!("cublas: {why}; float matmul on the GPU is a generated kernel")
                });
            }
            false
        }
    }
}
