//! The CPU executor of compiled schedules: given a schedule and its compiled loop
//! kernels ([`CompiledSchedule`], made by the compile stage, `lazyfuse-compile`), it
//! allocates the buffers, runs the steps in order (loop kernels split across the
//! thread pool, extern steps through the interpreter's routine for their one node)
//! and frees temporaries after their last reader.
//!
//! # Soundness of the kernel calls
//! A compiled kernel reads and writes raw memory. It is called only
//! - when its code is a [`KernelCode`] whose signature admits the step's kernel: the
//!   code generator verified that kernel ([`LoopKernel::verify`] proved every affine
//!   access inside `0..len` of its param over the whole iteration space) and
//!   promises the code stays inside params of those dtypes and lengths, and
//! - with `params[i]` pointing at a live buffer whose dtype and element count are
//!   exactly param `i`'s (checked before every call), written only through params
//!   that the executor owns uniquely at that moment.
//!
//! Data-dependent indices are checked by the generated code itself.
//!
//! # Files
//! `walk` (the steps in order, shared with the device executor), `compiled` (the
//! compiled kernels of a schedule), `buffers` (allocation, dead
//! temporaries, donations), `loops` (one loop kernel on the pool, its status) and
//! `externs` (extern steps on the host); this file runs a schedule's steps.
//!
//! [`LoopKernel::verify`]: lazyfuse_ir::kernel::LoopKernel::verify
//! [`KernelCode`]: lazyfuse_ir::kernel::KernelCode

use crate::buffer::Buffer;
use crate::error::Result;
use lazyfuse_ir::kernel::{BufDecl, ExternStep, LoopKernel, Schedule};
use lazyfuse_ir::InputId;
use std::collections::HashMap;
use std::sync::Arc;

mod buffers;
mod compiled;
mod externs;
mod loops;
mod stats;
#[cfg(test)]
mod tests;
mod walk;

use buffers::allocate;
pub(crate) use buffers::{dead_temps, fully_overwrites, step_buffers, unwritten_donations};
pub use compiled::{Code, CompiledSchedule};
pub(crate) use externs::{extern_on_host, row_major_inputs, with_epilogue};
pub(crate) use loops::native_entry;
use loops::run_loop;
pub use loops::status_error;
pub use stats::{RunStats, StepTiming};
pub(crate) use walk::{walk, Executor, Slots};

/// The CPU's memory: host buffers, loop kernels on the thread pool, extern steps on
/// the buffers themselves.
struct Host;

impl Executor for Host {
    type Array = Buffer;

    fn check_input(&self, _: &Buffer) -> Result<()> {
        Ok(())
    }

    fn empty(&self, decl: &BufDecl) -> Result<Buffer> {
        Ok(Buffer::zeros(decl.dtype, 0))
    }

    fn address(a: &Arc<Buffer>) -> *const u8 {
        a.as_ptr()
    }

    fn run_loop(
        &mut self,
        schedule: &Schedule,
        _: usize,
        k: &LoopKernel,
        code: &Code,
        slots: &mut Slots<Buffer>,
    ) -> Result<u64> {
        run_loop(schedule, k, code, slots)
    }

    fn run_extern_here(
        &mut self,
        _: &Schedule,
        _: &ExternStep,
        _: &mut Slots<Buffer>,
    ) -> Result<Option<(String, u64)>> {
        Ok(None)
    }

    fn before_host(&mut self, _: &Schedule) -> Result<()> {
        Ok(())
    }

    fn download(&self, a: &Arc<Buffer>) -> Result<Arc<Buffer>> {
        Ok(a.clone())
    }

    fn upload(&self, b: Arc<Buffer>) -> Result<Arc<Buffer>> {
        Ok(b)
    }

    fn release(&mut self, a: Arc<Buffer>) {
        // A dead temporary's memory serves the next allocation of its size.
        crate::buffer_cache::recycle(a);
    }

    fn finish(&mut self, _: &Schedule) -> Result<()> {
        Ok(())
    }
}

/// Runs `schedule` on the CPU with its loop kernels compiled in `compiled` (for this
/// schedule). `inputs` holds the buffers its `BufKind::Input` buffers name; the
/// result holds one buffer per target. `donated` holds buffers the caller gave up:
/// each [`BufKind::Donated`](lazyfuse_ir::kernel::BufKind::Donated) buffer of the schedule is taken out of the map and
/// written in place when this run owns it alone (an in-place write stores into it,
/// no copy). A donated buffer the map lacks is read from `inputs` and copied before
/// the first write, as any shared buffer; an input the schedule only reads may be in
/// either map. On an error, the donated buffers that no step had written yet go back
/// into the map (a written one is dropped: its old contents are gone); on success the
/// map keeps the buffers the schedule did not take. `stats` is where the run's
/// figures are added.
///
/// `lazyfuse_compile::run` compiles and runs a schedule in one call, with examples.
pub fn run_compiled(
    schedule: &Schedule,
    compiled: &CompiledSchedule,
    inputs: &HashMap<InputId, Arc<Buffer>>,
    donated: &mut HashMap<InputId, Arc<Buffer>>,
    stats: RunStats,
) -> Result<(Vec<Arc<Buffer>>, RunStats)> {
    walk(schedule, compiled, &mut Host, inputs, donated, stats)
}
