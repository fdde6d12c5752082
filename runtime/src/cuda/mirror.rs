//! The process's GPU handles ([`device`]) and batches of generated kernels loaded on
//! a GPU ([`DeviceKernels`]), which both GPU executors launch: the device-resident
//! one of CUDA tensors ([`crate::resident`]), and the mirrored one here, which runs
//! loop kernels on `cuda:0` for host-resident buffers (the CPU executor's schedule
//! runner with the kernel calls replaced by GPU launches,
//! [`crate::exec::KernelCompiler::Cuda`], the facade's `CpuBackend::Cuda`).
//!
//! A mirrored launch copies the kernel's params to the device, runs the generated
//! CUDA C (`lazyfuse_codegen::cuda`, compiled by NVRTC for the device's architecture
//! and loaded once per batch), and copies the written params and the status block
//! back. Everything else (buffers, extern steps, in-place writes, status errors) is
//! the CPU executor's. The copies make it slow: it is a second check of the GPU
//! code on whole workloads, with the CPU executor's buffers and steps around it.

use super::{CudaDevice, DeviceBuffer, KernelArg, LaunchDims, Module};
use crate::error::{Error, Result};
use lazyfuse_codegen::cuda::{kernel_source_as, translation_unit, CudaKernel, BLOCK_THREADS};
use lazyfuse_ir::kernel::{LoopKernel, MathMode, STATUS_SLOTS};
use std::sync::OnceLock;

/// The process's handle of `cuda:ordinal`, opened on first use and kept: one context,
/// stream and caching allocator per GPU for every executor.
///
/// # Errors
/// "CUDA driver not found: …" without a driver, "no CUDA device cuda:N (found M)"
/// for an ordinal the machine lacks, or the driver's error opening it.
pub fn device(ordinal: usize) -> Result<&'static CudaDevice> {
    let table = devices()?;
    let slot = table.get(ordinal).ok_or_else(|| {
        Error::Cuda(format!(
            "no CUDA device cuda:{ordinal} (found {})",
            table.len()
        ))
    })?;
    slot.get_or_init(|| CudaDevice::new(ordinal))
        .as_ref()
        .map_err(Clone::clone)
}

/// One slot per GPU of the machine, counted once per process: [`device`] is asked on
/// every allocation, launch and copy, and must not ask the driver each time.
fn devices() -> Result<&'static [OnceLock<Result<CudaDevice>>]> {
    static DEVICES: OnceLock<Result<Vec<OnceLock<Result<CudaDevice>>>>> = OnceLock::new();
    DEVICES
        .get_or_init(|| {
            let count = super::device::device_count()?;
            Ok((0..count).map(|_| OnceLock::new()).collect())
        })
        .as_deref()
        .map_err(Clone::clone)
}

/// The number of GPUs of the machine, counted once per process.
///
/// # Errors
/// "CUDA driver not found: …" without a driver, or the driver's error.
pub fn device_count() -> Result<usize> {
    devices().map(<[_]>::len)
}

/// A batch of kernels compiled and loaded on one device.
pub struct DeviceKernels {
    module: Module,
    kernels: Vec<CudaKernel>,
    ordinal: usize,
}

impl DeviceKernels {
    /// Generates the CUDA C of `batch` (one translation unit, symbols
    /// `lf_kernel_<j>`), compiles it for the architecture of `cuda:ordinal` and loads
    /// it there.
    pub(crate) fn compile(batch: &[&LoopKernel], math: MathMode, ordinal: usize) -> Result<Self> {
        let dev = device(ordinal)?;
        let kernels = batch
            .iter()
            .enumerate()
            .map(|(j, k)| {
                kernel_source_as(k, math, &format!("lf_kernel_{j}"))
                    .map_err(|e| Error::Unsupported(format!("kernel {} as CUDA C: {e}", k.name)))
            })
            .collect::<Result<Vec<_>>>()?;
        let unit = translation_unit(&kernels);
        let cubin = super::nvrtc::global()?.compile_cubin(&unit, dev.arch())?;
        let module = dev.load(&cubin)?;
        Ok(DeviceKernels {
            module,
            kernels,
            ordinal,
        })
    }

    /// The device the kernels are loaded on.
    pub(crate) fn ordinal(&self) -> usize {
        self.ordinal
    }

    /// Launches kernel `j` over all its points on device buffers: `params` in the
    /// kernel's param order, then the status block (at least
    /// `STATUS_SLOTS` words, zeroed by the caller). Returns once the launch is queued.
    pub(crate) fn launch(
        &self,
        j: usize,
        params: &[&DeviceBuffer],
        status: &DeviceBuffer,
    ) -> Result<()> {
        let meta = self
            .kernels
            .get(j)
            .ok_or_else(|| Error::Malformed(format!("no kernel {j} in this batch")))?;
        let mut args: Vec<KernelArg<'_>> = params.iter().map(|b| KernelArg::Buffer(b)).collect();
        args.push(KernelArg::Buffer(status));
        device(self.ordinal)?.launch(&self.module, &meta.symbol, launch_dims(meta), &args)
    }

    /// Runs kernel `j` over all its points with the params at `params` (host memory,
    /// `k`'s params in order, each `len` elements of its dtype); copies the written
    /// ones back and fills `status`.
    ///
    /// # Safety
    /// `params[i]` must point at `k.params[i].len` live elements of its dtype, written
    /// through by nobody else during the call (the CPU executor's guarantee for its
    /// kernel calls), and `k` must be the kernel `j` was compiled from.
    pub(crate) unsafe fn run(
        &self,
        j: usize,
        k: &LoopKernel,
        params: &[*mut u8],
        status: &mut [u64; STATUS_SLOTS],
    ) -> Result<()> {
        let dev = device(self.ordinal)?;
        let mut bufs: Vec<DeviceBuffer> = Vec::with_capacity(params.len());
        for (p, &ptr) in k.params.iter().zip(params) {
            let bytes = p.len * p.dtype.size_in_bytes();
            bufs.push(if bytes == 0 {
                // A pointer the kernel never dereferences (no element exists).
                dev.alloc(32)?
            } else {
                // SAFETY: the caller guarantees `bytes` live bytes at `ptr`.
                let host = unsafe { std::slice::from_raw_parts(ptr as *const u8, bytes) };
                dev.upload(host)?
            });
        }
        let status_buf = dev.alloc_zeroed(STATUS_SLOTS * 8)?;
        self.launch(j, &bufs.iter().collect::<Vec<_>>(), &status_buf)?;
        for (p, (&ptr, buf)) in k.params.iter().zip(params.iter().zip(&bufs)) {
            let bytes = p.len * p.dtype.size_in_bytes();
            if p.writes && bytes > 0 {
                // SAFETY: as above; the caller owns these bytes exclusively.
                let host = unsafe { std::slice::from_raw_parts_mut(ptr, bytes) };
                dev.read(buf, host)?;
            }
        }
        let mut words = [0u8; STATUS_SLOTS * 8];
        dev.read(&status_buf, &mut words)?;
        for (slot, w) in status.iter_mut().zip(words.chunks_exact(8)) {
            *slot = u64::from_le_bytes(w.try_into().expect("8 bytes"));
        }
        Ok(())
    }
}

/// The launch of a generated kernel: one block per point (up to 65,535 blocks, which
/// then step through the points), or enough blocks of [`BLOCK_THREADS`] threads for one
/// grid-stride step per thread (up to 65,535 blocks as well).
///
/// ```
/// use lazyfuse_codegen::cuda::CudaKernel;
/// use lazyfuse_runtime::cuda::mirror::launch_dims;
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
