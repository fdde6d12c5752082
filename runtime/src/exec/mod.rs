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
//! `compiled` (the compiled kernels of a schedule), `buffers` (allocation, dead
//! temporaries, donations), `loops` (one loop kernel on the pool, its status) and
//! `externs` (extern steps on the host); this file runs a schedule's steps.
//!
//! [`LoopKernel::verify`]: lazyfuse_ir::kernel::LoopKernel::verify
//! [`KernelCode`]: lazyfuse_ir::kernel::KernelCode

use crate::buffer::Buffer;
use crate::error::{Error, Result};
use lazyfuse_ir::kernel::{BufKind, Schedule, Step};
use lazyfuse_ir::InputId;
use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

mod buffers;
mod compiled;
mod externs;
mod loops;
#[cfg(test)]
mod tests;

use buffers::{allocate, give_back_unwritten};
pub(crate) use buffers::{dead_temps, fully_overwrites, step_buffers, unwritten_donations};
pub use compiled::{Code, CompiledSchedule};
use externs::run_extern;
pub(crate) use externs::{extern_on_host, row_major_inputs};
pub(crate) use loops::native_entry;
use loops::run_loop;
pub use loops::status_error;

/// Timing of one step, for `LAZYFUSE_DEBUG=2`.
#[derive(Clone, Debug, PartialEq)]
pub struct StepTiming {
    /// the kernel's name (loop kernels) or `extern <op>`
    pub name: String,
    /// wall time of the step
    pub time: Duration,
    /// bytes of its params (each buffer once): the traffic a perfect kernel moves
    pub bytes: u64,
}

/// What one run of a schedule did.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RunStats {
    /// steps run (loop kernels and extern steps)
    pub kernels: usize,
    /// loop kernels compiled by this run
    pub compiled: usize,
    /// loop kernels found in the kernel cache
    pub cache_hits: usize,
    /// time spent compiling
    pub compile: Duration,
    /// time spent running steps
    pub run: Duration,
    /// one entry per step
    pub steps: Vec<StepTiming>,
    /// donated input buffers the run wrote in place (no copy of the storage)
    pub in_place: usize,
}

/// A buffer slot of a running schedule.
enum Slot {
    Empty,
    Ready(Arc<Buffer>),
}

/// Runs `schedule` on the CPU with its loop kernels compiled in `compiled` (for this
/// schedule). `inputs` holds the buffers its `BufKind::Input` buffers name; the
/// result holds one buffer per target. `donated` holds buffers the caller gave up:
/// each [`BufKind::Donated`] buffer of the schedule is taken out of the map and
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
    mut stats: RunStats,
) -> Result<(Vec<Arc<Buffer>>, RunStats)> {
    if compiled.steps() != schedule.steps.len() {
        return Err(Error::Malformed(format!(
            "{} compiled entries for {} steps",
            compiled.steps(),
            schedule.steps.len()
        )));
    }
    let run_start = Instant::now();
    // The step after which each temporary is dead.
    let mut last_use: Vec<usize> = vec![0; schedule.buffers.len()];
    for (i, step) in schedule.steps.iter().enumerate() {
        for b in step_buffers(step) {
            last_use[b.0 as usize] = i;
        }
    }
    // Every input first, so that a missing one fails before a donated buffer is
    // taken.
    for decl in &schedule.buffers {
        match decl.kind {
            BufKind::Input(id) | BufKind::Donated(id)
                if !inputs.contains_key(&id) && !donated.contains_key(&id) =>
            {
                return Err(Error::Malformed(format!("input {id} was not provided")))
            }
            _ => {}
        }
    }
    let mut slots: Vec<Slot> = Vec::with_capacity(schedule.buffers.len());
    // The donated buffers taken, by slot, with their memory's address: a buffer
    // still at that address at the end was written in place.
    let mut taken: Vec<(usize, *const u8)> = Vec::new();
    for decl in &schedule.buffers {
        slots.push(match decl.kind {
            // A donated buffer the schedule only reads is read in place (the
            // caller keeps it).
            BufKind::Input(id) => Slot::Ready(
                inputs
                    .get(&id)
                    .or_else(|| donated.get(&id))
                    .cloned()
                    .ok_or_else(|| Error::Malformed(format!("input {id} was not provided")))?,
            ),
            // An empty buffer needs no writer: a `cat` of empty tensors has no step,
            // and its readers still read it.
            BufKind::Output(_) | BufKind::Temp if decl.len == 0 => {
                Slot::Ready(Arc::new(Buffer::zeros(decl.dtype, 0)))
            }
            BufKind::Donated(id) => match donated.remove(&id) {
                Some(b) => {
                    taken.push((slots.len(), b.as_ptr()));
                    Slot::Ready(b)
                }
                None => Slot::Ready(
                    inputs
                        .get(&id)
                        .cloned()
                        .ok_or_else(|| Error::Malformed(format!("input {id} was not provided")))?,
                ),
            },
            BufKind::Output(_) | BufKind::Temp => Slot::Empty,
        });
    }
    for (i, step) in schedule.steps.iter().enumerate() {
        let t0 = Instant::now();
        let done = match step {
            Step::Loop(k) => compiled
                .entry(i)
                .ok_or_else(|| Error::Malformed(format!("kernel {} was not compiled", k.name)))
                .and_then(|code| {
                    run_loop(schedule, k, code, &mut slots).map(|b| (k.name.clone(), b))
                }),
            Step::Extern(e) => run_extern(schedule, e, compiled.math(), &mut slots)
                .map(|b| (format!("extern {}", e.op.name()), b)),
        };
        let (name, bytes) = match done {
            Ok(x) => x,
            Err(err) => {
                give_back_unwritten(schedule, i, &mut slots, donated);
                return Err(err);
            }
        };
        stats.steps.push(StepTiming {
            name,
            time: t0.elapsed(),
            bytes,
        });
        for idx in dead_temps(schedule, &last_use, i, step) {
            // A dead temporary's memory serves the next allocation of its size.
            if let Slot::Ready(buf) = std::mem::replace(&mut slots[idx], Slot::Empty) {
                crate::buffer_cache::recycle(buf);
            }
        }
    }
    stats.kernels = schedule.steps.len();
    stats.in_place = taken
        .iter()
        .filter(|(idx, at)| matches!(&slots[*idx], Slot::Ready(b) if b.as_ptr() == *at))
        .count();
    let outs = schedule
        .outputs
        .iter()
        .map(|b| match slots.get(b.0 as usize) {
            Some(Slot::Ready(buf)) => Ok(buf.clone()),
            _ => Err(Error::Malformed(format!("output {b} was never written"))),
        })
        .collect::<Result<Vec<_>>>()?;
    stats.run = run_start.elapsed();
    Ok((outs, stats))
}
