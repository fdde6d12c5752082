//! The CPU executor of compiled schedules: compiles a schedule's loop kernels with
//! Cranelift (through a process-wide kernel cache), allocates its buffers, runs its
//! steps in order (loop kernels split across the thread pool, extern steps through
//! the interpreter's routine for their one node) and frees temporaries after their
//! last reader.
//!
//! # Soundness of the kernel calls
//! A compiled kernel reads and writes raw memory. It is called only
//! - after [`LoopKernel::verify`] proved every affine access inside `0..len` of its
//!   param over the whole iteration space (run when the kernel is compiled; the proof
//!   depends only on the kernel's structure, which is the cache key), and
//! - with `params[i]` pointing at a live buffer whose dtype and element count are
//!   exactly param `i`'s (checked before every call), written only through params
//!   that the executor owns uniquely at that moment.
//!
//! Data-dependent indices are checked by the generated code itself.
//!
//! # Files
//! `compiler` (the kernel cache and the compilers), `buffers` (allocation, dead
//! temporaries, donations), `loops` (one loop kernel on the pool, its status) and
//! `externs` (extern steps on the host); this file runs a schedule's steps.
//!
//! [`LoopKernel::verify`]: lazyfuse_ir::kernel::LoopKernel::verify

use crate::buffer::Buffer;
use crate::error::{Error, Result};
use lazyfuse_ir::kernel::{BufKind, MathMode, Schedule, Step};
use lazyfuse_ir::InputId;
use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

mod buffers;
mod compiler;
mod externs;
mod loops;
#[cfg(test)]
mod tests;

use buffers::{allocate, give_back_unwritten};
pub(crate) use buffers::{dead_temps, fully_overwrites, step_buffers, unwritten_donations};
pub use compiler::{
    asm_text, cached_kernels, clif_text, compile, compile_using, CompiledSchedule, KernelCompiler,
    KERNEL_CACHE_CAPACITY,
};
pub(crate) use compiler::{Code, CodeOwner};
use externs::run_extern;
pub(crate) use externs::{extern_on_host, row_major_inputs};
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

/// Runs `schedule` on the CPU with compiled loop kernels. `inputs` holds the
/// buffers its `BufKind::Input` buffers name; the result holds one buffer per target.
///
/// ```
/// use lazyfuse_ir::kernel::*;
/// use lazyfuse_ir::{DType, InputId};
/// use lazyfuse_runtime::{exec, Buffer};
/// use std::{collections::HashMap, sync::Arc};
/// let double = LoopKernel {
///     name: "double".into(),
///     nodes: vec![],
///     params: vec![
///         Param { buf: BufId(0), dtype: DType::I32, len: 3, writes: false },
///         Param { buf: BufId(1), dtype: DType::I32, len: 3, writes: true },
///     ],
///     dims: vec![3],
///     n_parallel: 1,
///     exprs: vec![
///         ExprNode { expr: Expr::Load { param: ParamId(0), index: Affine { offset: 0, strides: vec![1] }, dynamic: None }, dtype: DType::I32, stage: Stage::Outer(0) },
///         ExprNode { expr: Expr::Binary { op: lazyfuse_ir::BinaryOp::Add, a: ExprId(0), b: ExprId(0) }, dtype: DType::I32, stage: Stage::Outer(0) },
///     ],
///     stores: vec![StoreOp { param: ParamId(1), index: Affine { offset: 0, strides: vec![1] }, value: ExprId(1) }],
/// };
/// let schedule = Schedule {
///     buffers: vec![
///         BufDecl { dtype: DType::I32, len: 3, kind: BufKind::Input(InputId(7)) },
///         BufDecl { dtype: DType::I32, len: 3, kind: BufKind::Output(0) },
///     ],
///     steps: vec![Step::Loop(double)],
///     outputs: vec![BufId(1)],
///     notes: vec![],
/// };
/// let inputs = HashMap::from([(InputId(7), Arc::new(Buffer::from_vec(vec![1i32, -2, 3])))]);
/// let (out, stats) = exec::run(&schedule, &inputs).unwrap();
/// assert_eq!(*out[0], Buffer::from_vec(vec![2i32, -4, 6]));
/// assert_eq!(stats.kernels, 1);
/// ```
pub fn run(
    schedule: &Schedule,
    inputs: &HashMap<InputId, Arc<Buffer>>,
) -> Result<(Vec<Arc<Buffer>>, RunStats)> {
    run_donating(schedule, inputs, &mut HashMap::new())
}

/// [`run`] (kernels compiled with the default [`MathMode`]), where `donated` holds
/// buffers the caller gave up: each
/// [`BufKind::Donated`] buffer of the schedule is taken out of the map and written in
/// place when this run owns it alone (an in-place write stores into it, no copy).
/// A donated buffer the map lacks is read from `inputs` and copied before the first
/// write, as any shared buffer; an input the schedule only reads may be in either
/// map. On an error, the donated buffers that no step had
/// written yet go back into the map (a written one is dropped: its old contents
/// are gone); on success the map keeps the buffers the schedule did not take.
///
/// ```
/// use lazyfuse_ir::kernel::*;
/// use lazyfuse_ir::{DType, InputId};
/// use lazyfuse_runtime::{exec, Buffer};
/// use std::{collections::HashMap, sync::Arc};
/// let bump = LoopKernel {
///     name: "bump".into(),
///     nodes: vec![],
///     params: vec![Param { buf: BufId(0), dtype: DType::I32, len: 3, writes: true }],
///     dims: vec![],
///     n_parallel: 0,
///     exprs: vec![
///         ExprNode { expr: Expr::Load { param: ParamId(0), index: Affine { offset: 1, strides: vec![] }, dynamic: None }, dtype: DType::I32, stage: Stage::Outer(0) },
///         ExprNode { expr: Expr::Binary { op: lazyfuse_ir::BinaryOp::Add, a: ExprId(0), b: ExprId(0) }, dtype: DType::I32, stage: Stage::Outer(0) },
///     ],
///     stores: vec![StoreOp { param: ParamId(0), index: Affine { offset: 1, strides: vec![] }, value: ExprId(1) }],
/// };
/// let schedule = Schedule {
///     buffers: vec![BufDecl { dtype: DType::I32, len: 3, kind: BufKind::Donated(InputId(0)) }],
///     steps: vec![Step::Loop(bump)],
///     outputs: vec![BufId(0)],
///     notes: vec![],
/// };
/// let x = Arc::new(Buffer::from_vec(vec![1i32, 2, 3]));
/// let at = x.as_ptr();
/// let mut donated = HashMap::from([(InputId(0), x)]);
/// let (out, _) = exec::run_donating(&schedule, &HashMap::new(), &mut donated).unwrap();
/// assert_eq!(*out[0], Buffer::from_vec(vec![1i32, 4, 3]));
/// assert_eq!(out[0].as_ptr(), at); // written in place
/// assert!(donated.is_empty());
/// ```
pub fn run_donating(
    schedule: &Schedule,
    inputs: &HashMap<InputId, Arc<Buffer>>,
    donated: &mut HashMap<InputId, Arc<Buffer>>,
) -> Result<(Vec<Arc<Buffer>>, RunStats)> {
    let (compiled, stats) = compile(schedule, MathMode::default())?;
    run_compiled(schedule, &compiled, inputs, donated, stats)
}

/// [`run_donating`] with the loop kernels already compiled (by [`compile()`], for this
/// schedule); `stats` is where the run's figures are added.
pub fn run_compiled(
    schedule: &Schedule,
    compiled: &CompiledSchedule,
    inputs: &HashMap<InputId, Arc<Buffer>>,
    donated: &mut HashMap<InputId, Arc<Buffer>>,
    mut stats: RunStats,
) -> Result<(Vec<Arc<Buffer>>, RunStats)> {
    let entries = &compiled.entries;
    if entries.len() != schedule.steps.len() {
        return Err(Error::Malformed(format!(
            "{} compiled entries for {} steps",
            entries.len(),
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
            Step::Loop(k) => entries[i]
                .clone()
                .ok_or_else(|| Error::Malformed(format!("kernel {} was not compiled", k.name)))
                .and_then(|(entry, module)| {
                    run_loop(schedule, k, entry, &module, &mut slots).map(|b| (k.name.clone(), b))
                }),
            Step::Extern(e) => run_extern(schedule, e, compiled.math, &mut slots)
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
