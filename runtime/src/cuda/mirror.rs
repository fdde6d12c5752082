//! The process's GPU handles ([`device`]) and batches of generated kernels loaded on
//! a GPU ([`DeviceKernels`]), which both GPU executors launch: the device-resident
//! one of CUDA tensors ([`crate::resident`]), and the mirrored one here, which runs
//! loop kernels on `cuda:0` for host-resident buffers (the CPU executor's schedule
//! runner with the kernel calls replaced by GPU launches,
//! `lazyfuse_compile::KernelCompiler::Cuda`, the facade's `CpuBackend::Cuda`).
//!
//! A mirrored launch copies the kernel's params to the device, runs the generated
//! CUDA C (compiled by NVRTC for the device's architecture and loaded once per batch
//! by the compile stage, `lazyfuse-compile`), and copies the written params and the
//! status block
//! back. Everything else (buffers, extern steps, in-place writes, status errors) is
//! the CPU executor's. The copies make it slow: it is a second check of the GPU
//! code on whole workloads, with the CPU executor's buffers and steps around it.

use super::{CudaDevice, DeviceBuffer, KernelArg, LaunchDims, Module};
use crate::error::{Error, Result};
use lazyfuse_ir::kernel::{KernelSignature, LoopKernel, STATUS_SLOTS};
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

/// A batch of kernels loaded on one device.
pub struct DeviceKernels {
    module: Module,
    kernels: Vec<DeviceKernel>,
    ordinal: usize,
}

/// One kernel of a [`DeviceKernels`] batch: how it is launched, and the kernel it was
/// compiled from.
#[derive(Clone, Debug)]
pub struct DeviceKernel {
    /// the kernel's symbol in the module
    pub symbol: String,
    /// the grid and block it runs with
    pub dims: LaunchDims,
    /// the kernel it was compiled from; a step runs it only if this admits the
    /// step's kernel
    pub signature: KernelSignature,
}

impl DeviceKernels {
    /// The kernels of `module` (loaded on `cuda:ordinal`), in batch order.
    pub fn new(module: Module, kernels: Vec<DeviceKernel>, ordinal: usize) -> Self {
        DeviceKernels {
            module,
            kernels,
            ordinal,
        }
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
        k: &LoopKernel,
        params: &[&DeviceBuffer],
        status: &DeviceBuffer,
    ) -> Result<()> {
        self.launch_checked(self.kernel(j, k)?, params, status)
    }

    /// Launches `meta`, a kernel of this batch already checked against its step.
    fn launch_checked(
        &self,
        meta: &DeviceKernel,
        params: &[&DeviceBuffer],
        status: &DeviceBuffer,
    ) -> Result<()> {
        let mut args: Vec<KernelArg<'_>> = params.iter().map(|b| KernelArg::Buffer(b)).collect();
        args.push(KernelArg::Buffer(status));
        device(self.ordinal)?.launch(&self.module, &meta.symbol, meta.dims, &args)
    }

    /// Kernel `j`, once its signature admits `k`.
    fn kernel(&self, j: usize, k: &LoopKernel) -> Result<&DeviceKernel> {
        match self.kernels.get(j) {
            Some(meta) if meta.signature.admits(k) => Ok(meta),
            Some(_) => Err(Error::Malformed(format!(
                "kernel {} was given device code compiled for another signature",
                k.name
            ))),
            None => Err(Error::Malformed(format!("no kernel {j} in this batch"))),
        }
    }

    /// Runs kernel `j` over all its points with the params at `params` (host memory,
    /// `k`'s params in order, each `len` elements of its dtype); copies the written
    /// ones back and fills `status`.
    ///
    /// # Safety
    /// `params[i]` must point at `k.params[i].len` live elements of its dtype, written
    /// through by nobody else during the call (the CPU executor's guarantee for its
    /// kernel calls).
    pub(crate) unsafe fn run(
        &self,
        j: usize,
        k: &LoopKernel,
        params: &[*mut u8],
        status: &mut [u64; STATUS_SLOTS],
    ) -> Result<()> {
        // Checked before any upload: a kernel of another signature fails at once.
        let meta = self.kernel(j, k)?;
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
        self.launch_checked(meta, &bufs.iter().collect::<Vec<_>>(), &status_buf)?;
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
