//! Kernels for a GPU: the batch's CUDA C as one translation unit, compiled by NVRTC
//! for the device's architecture (through the runtime's NVRTC and its disk cache),
//! loaded there, each kernel with the launch shape its code expects.

use lazyfuse_codegen::cuda::{kernel_source_as, translation_unit, CudaKernel, BLOCK_THREADS};
use lazyfuse_ir::kernel::{KernelSignature, LoopKernel, MathMode};
use lazyfuse_runtime::cuda::mirror::{device, DeviceKernel, DeviceKernels};
use lazyfuse_runtime::cuda::{nvrtc, LaunchDims};
use lazyfuse_runtime::{Error, Result};

/// Generates the CUDA C of `batch` (one translation unit, symbols `lf_kernel_<j>`),
/// compiles it for the architecture of `cuda:ordinal` and loads it there.
pub(crate) fn compile(
    batch: &[&LoopKernel],
    math: MathMode,
    ordinal: usize,
) -> Result<DeviceKernels> {
    let dev = device(ordinal)?;
    let sources = batch
        .iter()
        .enumerate()
        .map(|(j, k)| {
            kernel_source_as(k, math, &format!("lf_kernel_{j}"))
                .map_err(|e| Error::Unsupported(format!("kernel {} as CUDA C: {e}", k.name)))
        })
        .collect::<Result<Vec<_>>>()?;
    let unit = translation_unit(&sources);
    let cubin = nvrtc::global()?.compile_cubin(&unit, dev.arch())?;
    let module = dev.load(&cubin)?;
    let kernels = sources
        .iter()
        .zip(batch)
        .map(|(src, k)| DeviceKernel {
            symbol: src.symbol.clone(),
            dims: launch_dims(src),
            signature: KernelSignature::of(k),
        })
        .collect();
    Ok(DeviceKernels::new(module, kernels, ordinal))
}

/// The launch of a generated kernel: one block per point (up to 65,535 blocks, which
/// then step through the points), or enough blocks of [`BLOCK_THREADS`] threads for one
/// grid-stride step per thread (up to 65,535 blocks as well).
///
/// ```
/// use lazyfuse_codegen::cuda::CudaKernel;
/// use lazyfuse_compile::launch_dims;
/// let k = CudaKernel { symbol: "k".into(), function: String::new(), n_points: 1 << 20, group: 4, n_params: 2, block_per_point: false };
/// assert_eq!(launch_dims(&k).grid.0, (1 << 18) / 256);
/// let rows = CudaKernel { n_points: 3, group: 1, block_per_point: true, ..k };
/// assert_eq!((launch_dims(&rows).grid.0, launch_dims(&rows).block.0), (3, 256));
/// ```
pub fn launch_dims(k: &CudaKernel) -> LaunchDims {
    const MAX_BLOCKS: u64 = 65_535;
    let blocks = if k.block_per_point {
        k.n_points
    } else {
        (k.n_points / k.group.max(1)).div_ceil(u64::from(BLOCK_THREADS))
    };
    LaunchDims::linear(blocks.clamp(1, MAX_BLOCKS) as u32, BLOCK_THREADS)
}
