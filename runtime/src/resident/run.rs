//! The device executor: a schedule's steps on `cuda:N`'s arrays through the shared
//! walk (`crate::exec::walk`), kernels launched on the device's stream with their
//! status blocks read once at the end, float matmuls through cuBLAS on the device,
//! and the other extern steps through the host routine with their arrays
//! downloaded and uploaded.

use super::{emulated, DeviceArray, Memory};
use crate::buffer::Buffer;
use crate::cuda::mirror::device;
use crate::cuda::DeviceBuffer;
use crate::error::{Error, Result};
use crate::exec::{
    fully_overwrites, native_entry, status_error, walk, Code, CompiledSchedule, Executor, RunStats,
    Slots,
};
use lazyfuse_ir::kernel::{BufDecl, BufId, ExternStep, LoopKernel, Schedule, Step, STATUS_SLOTS};
use lazyfuse_ir::{InputId, Op};
use std::collections::HashMap;
use std::sync::Arc;

/// A status block of a launched kernel, read after the last launch.
struct PendingStatus {
    step: usize,
    block: DeviceBuffer,
}

/// Runs `schedule` on `cuda:ordinal` with the kernels of `compiled` (compiled for this
/// schedule by the compiler `lazyfuse_compile::kernel_compiler(ordinal)` picks). `inputs` holds the arrays its `BufKind::Input`
/// buffers name; `donated` holds arrays the caller gave up, as
/// [`crate::exec::run_compiled`]'s buffers: a `BufKind::Donated` array taken from
/// there is written in place when this run holds it alone (else, or when it is only
/// in `inputs`, it is copied on the device before the first write); on an error the
/// ones no step wrote go back into the map. The result holds one array per target. A
/// kernel's status (integer division by zero, an index out of range) is the op's
/// error, as on the CPU.
///
/// # Errors
/// A missing input, an input on another device, a device error, or a kernel's status.
pub fn run(
    schedule: &Schedule,
    compiled: &CompiledSchedule,
    ordinal: usize,
    inputs: &HashMap<InputId, Arc<DeviceArray>>,
    donated: &mut HashMap<InputId, Arc<DeviceArray>>,
    stats: RunStats,
) -> Result<(Vec<Arc<DeviceArray>>, RunStats)> {
    let mut exec = Device {
        ordinal,
        emulation: emulated(),
        pending: Vec::new(),
    };
    walk(schedule, compiled, &mut exec, inputs, donated, stats)
}

/// The memory of `cuda:ordinal` (or its host emulation), with the status blocks of
/// the kernels launched and not yet read.
struct Device {
    ordinal: usize,
    emulation: bool,
    pending: Vec<PendingStatus>,
}

impl Executor for Device {
    type Array = DeviceArray;

    fn check_input(&self, a: &DeviceArray) -> Result<()> {
        if a.ordinal != self.ordinal || a.is_emulated() != self.emulation {
            return Err(Error::Cuda(format!(
                "an input on {a:?} was given to a run on cuda:{}{}",
                self.ordinal,
                if self.emulation { " (emulated)" } else { "" }
            )));
        }
        Ok(())
    }

    fn empty(&self, decl: &BufDecl) -> Result<DeviceArray> {
        DeviceArray::alloc(self.ordinal, decl.dtype, 0, false)
    }

    fn address(a: &Arc<DeviceArray>) -> *const u8 {
        Arc::as_ptr(a).cast()
    }

    fn run_loop(
        &mut self,
        schedule: &Schedule,
        i: usize,
        k: &LoopKernel,
        code: &Code,
        slots: &mut Slots<DeviceArray>,
    ) -> Result<u64> {
        let (bytes, status) = run_loop(schedule, k, code, self.ordinal, slots)?;
        if let Some(block) = status {
            self.pending.push(PendingStatus { step: i, block });
        }
        Ok(bytes)
    }

    fn run_extern_here(
        &mut self,
        schedule: &Schedule,
        e: &ExternStep,
        slots: &mut Slots<DeviceArray>,
    ) -> Result<Option<(String, u64)>> {
        if !on_device_blas(e, slots) {
            return Ok(None);
        }
        let bytes = device_matmul(schedule, e, self.ordinal, slots)?;
        Ok(Some((format!("cublas {}", e.op.name()), bytes)))
    }

    fn before_host(&mut self, schedule: &Schedule) -> Result<()> {
        // The host reads values the kernels before it wrote: their errors come first.
        check_statuses(schedule, self.ordinal, &mut self.pending)
    }

    fn download(&self, a: &Arc<DeviceArray>) -> Result<Arc<Buffer>> {
        a.to_host().map(Arc::new)
    }

    fn upload(&self, b: Arc<Buffer>) -> Result<Arc<DeviceArray>> {
        DeviceArray::upload(self.ordinal, &b).map(Arc::new)
    }

    fn release(&mut self, a: Arc<DeviceArray>) {
        // Dropping returns the block to the device's allocator; the stream's order
        // keeps its next user behind this step's kernels.
        drop(a);
    }

    fn finish(&mut self, schedule: &Schedule) -> Result<()> {
        if self.pending.is_empty() && !self.emulation && !schedule.steps.is_empty() {
            // No status to read (the last steps were library calls): wait all the
            // same, so that a realize returns with its values computed and a fault of
            // its work is its error.
            device(self.ordinal)?.synchronize()?;
        }
        check_statuses(schedule, self.ordinal, &mut self.pending)
    }
}

/// Whether extern step `e` is a float matmul that cuBLAS runs on the device: its
/// inputs in GPU memory, cuBLAS present.
fn on_device_blas(e: &ExternStep, slots: &[Option<Arc<DeviceArray>>]) -> bool {
    matches!(e.op, Op::Matmul)
        && e.input_views.iter().all(Option::is_none)
        && e.epilogue.is_empty()
        && crate::cuda::blas::handles(e.dtype)
        && crate::cuda::blas::cublas_version().is_ok()
        && e.inputs.iter().all(|b| {
            matches!(
                slots[b.0 as usize].as_deref(),
                Some(DeviceArray {
                    mem: Memory::Gpu(_),
                    ..
                })
            )
        })
}

/// Runs matmul step `e` through cuBLAS into a new array; returns its bytes.
fn device_matmul(
    schedule: &Schedule,
    e: &ExternStep,
    ordinal: usize,
    slots: &mut [Option<Arc<DeviceArray>>],
) -> Result<u64> {
    let (Some(a), Some(b)) = (
        slots[e.inputs[0].0 as usize].clone(),
        slots[e.inputs[1].0 as usize].clone(),
    ) else {
        return Err(Error::Malformed(
            "matmul reads a buffer before it was written".into(),
        ));
    };
    let three = |i: usize| {
        <[usize; 3]>::try_from(e.input_shapes[i].as_slice())
            .map_err(|_| Error::Malformed("matmul of a non-3-D operand".into()))
    };
    let ([batch, m, k], [_, _, n]) = (three(0)?, three(1)?);
    let decl = &schedule.buffers[e.output.0 as usize];
    let mut out = DeviceArray::alloc(ordinal, decl.dtype, decl.len, true)?;
    let (Memory::Gpu(ab), Memory::Gpu(bb), Memory::Gpu(ob)) = (&a.mem, &b.mem, &mut out.mem) else {
        return Err(Error::Malformed("cuBLAS matmul of host memory".into()));
    };
    device(ordinal)?.matmul(
        e.dtype,
        ab,
        bb,
        ob,
        crate::cuda::blas::MatmulDims { batch, m, k, n },
    )?;
    let bytes = (a.len * a.dtype.size_in_bytes()
        + b.len * b.dtype.size_in_bytes()
        + out.len * out.dtype.size_in_bytes()) as u64;
    slots[e.output.0 as usize] = Some(Arc::new(out));
    Ok(bytes)
}

/// Reads the status blocks of the kernels launched so far, in launch order: the first
/// that reports a failure is the run's error.
fn check_statuses(
    schedule: &Schedule,
    ordinal: usize,
    pending: &mut Vec<PendingStatus>,
) -> Result<()> {
    for p in pending.drain(..) {
        let mut words = [0u8; STATUS_SLOTS * 8];
        device(ordinal)?.read(&p.block, &mut words)?;
        let mut status = [0u64; STATUS_SLOTS];
        for (slot, w) in status.iter_mut().zip(words.chunks_exact(8)) {
            *slot = u64::from_le_bytes(w.try_into().expect("8 bytes"));
        }
        if status[0] != 0 {
            if let Some(Step::Loop(k)) = schedule.steps.get(p.step) {
                return Err(status_error(k, &status));
            }
        }
    }
    Ok(())
}

/// Runs loop kernel `k` on the arrays in `slots`: allocates its outputs, copies a
/// written array that someone else still holds, launches it (GPU: returns its status
/// block, read later) or runs it on the host (emulation: its status checked at once).
/// Returns the bytes of its params.
fn run_loop(
    schedule: &Schedule,
    k: &LoopKernel,
    code: &Code,
    ordinal: usize,
    slots: &mut [Option<Arc<DeviceArray>>],
) -> Result<(u64, Option<DeviceBuffer>)> {
    for (i, p) in k.params.iter().enumerate().filter(|(_, p)| p.writes) {
        let slot = &mut slots[p.buf.0 as usize];
        match slot {
            None => {
                let decl = &schedule.buffers[p.buf.0 as usize];
                *slot = Some(Arc::new(DeviceArray::alloc(
                    ordinal,
                    decl.dtype,
                    decl.len,
                    fully_overwrites(k, i),
                )?));
            }
            Some(arc) => {
                if Arc::get_mut(arc).is_none() {
                    // Held elsewhere (an input of the caller): written into a copy.
                    *arc = Arc::new(arc.duplicate()?);
                }
            }
        }
    }
    let mut bytes = 0u64;
    let mut seen: Vec<BufId> = Vec::new();
    for p in &k.params {
        let a = slots[p.buf.0 as usize].as_ref().ok_or_else(|| {
            Error::Malformed(format!(
                "kernel {} reads {} before it was written",
                k.name, p.buf
            ))
        })?;
        if a.dtype != p.dtype || a.len != p.len {
            return Err(Error::Malformed(format!(
                "kernel {} expects {}[{}] in {}, found {}[{}]",
                k.name, p.dtype, p.len, p.buf, a.dtype, a.len
            )));
        }
        if !seen.contains(&p.buf) {
            seen.push(p.buf);
            bytes += (p.len * p.dtype.size_in_bytes()) as u64;
        }
    }
    let points = k.parallel_points();
    if points == 0 {
        return Ok((bytes, None));
    }
    match code {
        Code::Device(kernels, j) => {
            if kernels.ordinal() != ordinal {
                return Err(Error::Malformed(format!(
                    "kernel {}: no code for cuda:{ordinal}",
                    k.name
                )));
            }
            let bufs = k
                .params
                .iter()
                .map(|p| match slots[p.buf.0 as usize].as_deref() {
                    Some(DeviceArray {
                        mem: Memory::Gpu(b),
                        ..
                    }) => Ok(b),
                    _ => Err(Error::Malformed(format!(
                        "kernel {}: {} is not in GPU memory",
                        k.name, p.buf
                    ))),
                })
                .collect::<Result<Vec<_>>>()?;
            let status = device(ordinal)?.alloc_zeroed(STATUS_SLOTS * 8)?;
            kernels.launch(*j, k, &bufs, &status)?;
            Ok((bytes, Some(status)))
        }
        Code::Native(code, j) => {
            let entry = native_entry(k, code.as_ref(), *j)?;
            let mut ptrs: Vec<*mut u8> = Vec::with_capacity(k.params.len());
            for p in &k.params {
                let arc = slots[p.buf.0 as usize]
                    .as_mut()
                    .ok_or_else(|| Error::Malformed(format!("{} vanished", p.buf)))?;
                let ptr = if p.writes {
                    match Arc::get_mut(arc).map(|a| &mut a.mem) {
                        Some(Memory::Emulated(b)) => b.as_mut_ptr(),
                        _ => {
                            return Err(Error::Malformed(format!(
                                "{} is shared while written, or not emulated",
                                p.buf
                            )))
                        }
                    }
                } else {
                    match &arc.mem {
                        Memory::Emulated(b) => b.as_ptr() as *mut u8,
                        Memory::Gpu(_) => {
                            return Err(Error::Malformed(format!(
                                "kernel {}: {} is GPU memory, the kernel host code",
                                k.name, p.buf
                            )))
                        }
                    }
                };
                ptrs.push(ptr);
            }
            let mut status = [0u64; STATUS_SLOTS];
            // SAFETY: the code stays inside params of exactly these dtypes and lengths
            // (its signature admits `k`; the arrays were checked against `k` above)
            // for points up to `points`; the pointers
            // address host buffers held in `slots`, which this function borrows
            // mutably for the call, the written ones owned by this step alone
            // (`Arc::get_mut`); one call covers every point on this thread.
            unsafe { entry(ptrs.as_ptr(), status.as_mut_ptr(), 0, points as u64) };
            if status[0] != 0 {
                return Err(status_error(k, &status));
            }
            Ok((bytes, None))
        }
    }
}
