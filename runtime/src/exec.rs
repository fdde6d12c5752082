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

use crate::buffer::{check_allocation, Buffer};
use crate::error::{Error, Result};
use crate::pool;
use hashbrown::HashMap as FastMap;
use lazyfuse_codegen::cpu::{CpuModule, KernelFn};
use lazyfuse_ir::kernel::{
    BufId, BufKind, Expr, ExternStep, ExternView, LoopKernel, MathMode, Schedule, Status, Step,
    STATUS_SLOTS,
};
use lazyfuse_ir::{Graph, InputId, Op};
use std::collections::HashMap;
use std::sync::{Arc, LazyLock, Mutex, MutexGuard};
use std::time::{Duration, Instant};

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

/// What owns a kernel's code: a Cranelift module, or a host build of its CUDA C.
pub(crate) type CodeOwner = Arc<dyn std::any::Any + Send + Sync>;

/// A compiled kernel: its function and the module that owns its code.
struct Compiled {
    /// Keeps the code alive while `entry` may be called.
    _module: CodeOwner,
    entry: Code,
    last_use: u64,
}

/// The process-wide kernel cache, keyed by [`LoopKernel::structure`]. Bounded: when
/// it holds more than [`KERNEL_CACHE_CAPACITY`] kernels the least recently used half
/// is dropped, and a module's code is freed when none of its kernels is cached (or
/// running) any more.
struct KernelCache {
    kernels: FastMap<String, Compiled>,
    clock: u64,
}

/// Most kernels the cache keeps.
pub const KERNEL_CACHE_CAPACITY: usize = 4096;

static CACHE: LazyLock<Mutex<KernelCache>> = LazyLock::new(|| {
    Mutex::new(KernelCache {
        kernels: FastMap::new(),
        clock: 0,
    })
});

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // Every cache edit is a complete insert or removal: a poisoned lock is consistent.
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// Number of compiled kernels in the cache (a diagnostic for tests).
///
/// ```
/// assert!(lazyfuse_runtime::exec::cached_kernels() <= lazyfuse_runtime::exec::KERNEL_CACHE_CAPACITY);
/// ```
pub fn cached_kernels() -> usize {
    lock(&CACHE).kernels.len()
}

/// A kernel's function and the module that owns its code (kept alive while it runs).
pub(crate) type Entry = (Code, CodeOwner);

/// How a compiled kernel is called.
#[derive(Clone, Copy)]
pub(crate) enum Code {
    /// a host function (Cranelift's, or the host build of the CUDA C)
    Native(KernelFn),
    /// kernel `j` of a [`crate::cuda::mirror::DeviceKernels`] (the owner), run on the GPU
    Device(usize),
}

/// What turns loop kernels into the functions the executor calls.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum KernelCompiler {
    /// Cranelift machine code (the CPU backend)
    #[default]
    Cranelift,
    /// the CUDA C of `lazyfuse_codegen::cuda`, compiled for the host by the system
    /// C++ compiler ([`crate::cuda_host`]): checks the GPU code generator on the CPU
    CudaHost,
    /// the same CUDA C compiled by NVRTC for the GPU of this ordinal (`cuda:N`) and
    /// loaded there: run with buffers copied there and back by the CPU executor
    /// ([`crate::cuda::mirror`]), or on device-resident buffers ([`crate::resident`])
    Cuda(usize),
}

/// A schedule's compiled loop kernels, by step index: what [`run_compiled`] calls.
/// Holding one keeps its kernels' code alive, so a schedule cache can keep it beside
/// its schedule and skip the kernel cache's lookups (each a walk over the kernel's
/// text) on every later realize.
#[derive(Clone)]
pub struct CompiledSchedule {
    entries: Vec<Option<Entry>>,
    /// the math mode the kernels were compiled with; extern steps follow it too
    math: MathMode,
}

impl CompiledSchedule {
    /// The compiled kernel of step `i` (`None` for an extern step).
    pub(crate) fn entry(&self, i: usize) -> Option<&Entry> {
        self.entries.get(i).and_then(Option::as_ref)
    }

    /// The math mode the kernels were compiled with.
    pub(crate) fn math(&self) -> MathMode {
        self.math
    }

    /// Number of steps (loop kernels and extern steps).
    pub(crate) fn steps(&self) -> usize {
        self.entries.len()
    }

    /// Number of loop kernels.
    pub fn loop_kernels(&self) -> usize {
        self.entries.iter().filter(|e| e.is_some()).count()
    }
}

/// Compiles `schedule`'s loop kernels with `math`: the ones the kernel cache lacks
/// in one batch (one Cranelift module), the others from the cache. The stats say how
/// many of each and how long it took.
pub fn compile(schedule: &Schedule, math: MathMode) -> Result<(CompiledSchedule, RunStats)> {
    compile_using(schedule, math, KernelCompiler::Cranelift)
}

/// [`compile`] with the kernels made by `compiler`.
pub fn compile_using(
    schedule: &Schedule,
    math: MathMode,
    compiler: KernelCompiler,
) -> Result<(CompiledSchedule, RunStats)> {
    let mut stats = RunStats::default();
    let entries = compile_all(schedule, math, compiler, &mut stats)?;
    Ok((CompiledSchedule { entries, math }, stats))
}

/// The entry points of a schedule's loop kernels (by step index), compiling the ones
/// the cache lacks in one batch, counting compiles and hits in `stats`.
fn compile_all(
    schedule: &Schedule,
    math: MathMode,
    compiler: KernelCompiler,
    stats: &mut RunStats,
) -> Result<Vec<Option<Entry>>> {
    let start = Instant::now();
    let keys: Vec<Option<String>> = schedule
        .steps
        .iter()
        .map(|s| match s {
            // The math mode changes the code, not the structure.
            Step::Loop(k) => Some(format!("{math} {compiler:?}\n{}", k.structure())),
            Step::Extern(_) => None,
        })
        .collect();
    let mut cache = lock(&CACHE);
    cache.clock += 1;
    let now = cache.clock;
    let mut missing: Vec<(usize, &LoopKernel)> = Vec::new();
    let mut seen_missing: FastMap<&str, ()> = FastMap::new();
    for (i, (step, key)) in schedule.steps.iter().zip(&keys).enumerate() {
        lazyfuse_ir::work::add(1);
        if let (Step::Loop(k), Some(key)) = (step, key) {
            if let Some(c) = cache.kernels.get_mut(key) {
                c.last_use = now;
                stats.cache_hits += 1;
            } else if seen_missing.insert(key.as_str(), ()).is_none() {
                k.verify()
                    .map_err(|e| Error::Malformed(format!("kernel IR: {e}")))?;
                missing.push((i, k));
            } else {
                stats.cache_hits += 1;
            }
        }
    }
    if !missing.is_empty() {
        let batch: Vec<&LoopKernel> = missing.iter().map(|(_, k)| *k).collect();
        // code generation is linear in each kernel's expressions and stores
        lazyfuse_ir::work::add(
            batch
                .iter()
                .map(|k| (k.exprs.len() + k.stores.len()) as u64)
                .sum(),
        );
        let (module, entries): (CodeOwner, Vec<Code>) = match compiler {
            KernelCompiler::Cranelift => {
                let m = CpuModule::compile_with(&batch, &crate::jit_symbols::lookup, math)
                    .map_err(|e| Error::Unsupported(format!("compiling a kernel: {e}")))?;
                let entries = (0..batch.len()).map(|j| Code::Native(m.entry(j))).collect();
                (Arc::new(m), entries)
            }
            KernelCompiler::CudaHost => {
                let m = crate::cuda_host::HostCudaModule::compile(&batch, math).map_err(|e| {
                    Error::Unsupported(format!("compiling a kernel's CUDA C for the host: {e}"))
                })?;
                let entries = (0..batch.len()).map(|j| Code::Native(m.entry(j))).collect();
                (Arc::new(m), entries)
            }
            KernelCompiler::Cuda(ordinal) => {
                let m = crate::cuda::mirror::DeviceKernels::compile(&batch, math, ordinal)?;
                (Arc::new(m), (0..batch.len()).map(Code::Device).collect())
            }
        };
        for (j, (i, _)) in missing.iter().enumerate() {
            let key = keys[*i].clone().unwrap_or_default();
            cache.kernels.insert(
                key,
                Compiled {
                    _module: module.clone(),
                    entry: entries[j],
                    last_use: now,
                },
            );
        }
        stats.compiled += missing.len();
    }
    // The entries are taken before eviction: the kernels of the schedule being run
    // are never the ones evicted.
    let entries = keys
        .iter()
        .map(|k| {
            k.as_ref()
                .and_then(|k| cache.kernels.get(k).map(|c| (c.entry, c._module.clone())))
        })
        .collect();
    evict(&mut cache, now);
    stats.compile += start.elapsed();
    Ok(entries)
}

/// Drops the least recently used half of the cache once it holds more than
/// [`KERNEL_CACHE_CAPACITY`] kernels. The kernels used at `now` (the schedule just
/// compiled, which shares one timestamp) stay, however many they are; every older
/// kernel goes when they alone fill the cache.
fn evict(cache: &mut KernelCache, now: u64) {
    if cache.kernels.len() <= KERNEL_CACHE_CAPACITY {
        return;
    }
    let mut uses: Vec<u64> = cache
        .kernels
        .values()
        .map(|c| c.last_use)
        .filter(|&u| u < now)
        .collect();
    uses.sort_unstable();
    let current = cache.kernels.len() - uses.len();
    // Keep at most half the capacity (less what the current schedule holds) of the
    // older kernels, the most recently used ones.
    let keep = (KERNEL_CACHE_CAPACITY / 2).saturating_sub(current);
    let cutoff = match uses.len().checked_sub(keep + 1) {
        Some(i) => uses[i],
        None => return,
    };
    cache.kernels.retain(|_, c| c.last_use > cutoff);
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
///         ExprNode { expr: Expr::Load { param: 0, index: Affine { offset: 0, strides: vec![1] }, dynamic: None }, dtype: DType::I32, stage: Stage::Outer(0) },
///         ExprNode { expr: Expr::Binary { op: lazyfuse_ir::BinaryOp::Add, a: ExprId(0), b: ExprId(0) }, dtype: DType::I32, stage: Stage::Outer(0) },
///     ],
///     stores: vec![StoreOp { param: 1, index: Affine { offset: 0, strides: vec![1] }, value: ExprId(1) }],
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
///         ExprNode { expr: Expr::Load { param: 0, index: Affine { offset: 1, strides: vec![] }, dynamic: None }, dtype: DType::I32, stage: Stage::Outer(0) },
///         ExprNode { expr: Expr::Binary { op: lazyfuse_ir::BinaryOp::Add, a: ExprId(0), b: ExprId(0) }, dtype: DType::I32, stage: Stage::Outer(0) },
///     ],
///     stores: vec![StoreOp { param: 0, index: Affine { offset: 1, strides: vec![] }, value: ExprId(1) }],
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

/// [`run_donating`] with the loop kernels already compiled (by [`compile`], for this
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

/// After step `failed` failed: hands the donated buffers that no step up to it
/// writes back to the caller (their contents are the old version, untouched).
fn give_back_unwritten(
    schedule: &Schedule,
    failed: usize,
    slots: &mut [Slot],
    donated: &mut HashMap<InputId, Arc<Buffer>>,
) {
    for (idx, id) in unwritten_donations(schedule, failed + 1) {
        if let Slot::Ready(buf) = std::mem::replace(&mut slots[idx], Slot::Empty) {
            donated.insert(id, buf);
        }
    }
}

/// The donated buffers (slot and input id) that none of the first `steps_run` steps
/// of `schedule` writes: after a failed run, their contents are still the old
/// version, theirs to hand back.
pub(crate) fn unwritten_donations(schedule: &Schedule, steps_run: usize) -> Vec<(usize, InputId)> {
    let ran = &schedule.steps[..steps_run.min(schedule.steps.len())];
    schedule
        .buffers
        .iter()
        .enumerate()
        .filter_map(|(idx, decl)| match decl.kind {
            BufKind::Donated(id) => Some((idx, id)),
            _ => None,
        })
        .filter(|&(idx, _)| {
            let b = BufId(idx as u32);
            !ran.iter().any(|s| match s {
                Step::Loop(k) => k.params.iter().any(|p| p.buf == b && p.writes),
                Step::Extern(e) => e.output == b,
            })
        })
        .collect()
}

/// The temporaries (by slot) that step `i` reads or writes last: dead after it.
pub(crate) fn dead_temps(
    schedule: &Schedule,
    last_use: &[usize],
    i: usize,
    step: &Step,
) -> Vec<usize> {
    step_buffers(step)
        .into_iter()
        .filter(|b| {
            let idx = b.0 as usize;
            last_use[idx] == i
                && schedule.buffers[idx].kind == BufKind::Temp
                && !schedule.outputs.contains(b)
        })
        .map(|b| b.0 as usize)
        .collect()
}

pub(crate) fn step_buffers(step: &Step) -> Vec<BufId> {
    match step {
        Step::Loop(k) => k.params.iter().map(|p| p.buf).collect(),
        Step::Extern(e) => e.inputs.iter().copied().chain([e.output]).collect(),
    }
}

/// A buffer for `b` (reused memory from the buffer cache when it has some, see
/// `crate::buffer_cache`), refusing sizes the allocator cannot give: zeroed, unless
/// `overwritten` (its writer stores every element before reading any, see
/// [`fully_overwrites`]).
fn allocate(schedule: &Schedule, b: BufId, overwritten: bool) -> Result<Buffer> {
    let decl = &schedule.buffers[b.0 as usize];
    if !crate::buffer_cache::has(decl.dtype, decl.len) {
        check_allocation(&[decl.len], decl.dtype, false)?;
    }
    Ok(if overwritten {
        crate::buffer_cache::take_for_overwrite(decl.dtype, decl.len)
    } else {
        crate::buffer_cache::take_zeroed(decl.dtype, decl.len)
    })
}

/// Whether kernel `k` stores every element of param `i` and never loads its buffer: no
/// reduction dims (every point runs its stores once), no `Load` of the param, and
/// a store at offset 0 with the row-major strides of `dims` covering exactly the
/// param's length. Such a buffer's initial contents are never observed, so it
/// need not be zeroed.
pub(crate) fn fully_overwrites(k: &LoopKernel, i: usize) -> bool {
    let Some(p) = k.params.get(i) else {
        return false;
    };
    if !k.reduce_dims().is_empty()
        || k.parallel_points() != p.len
        || k.exprs
            .iter()
            // A load through any param naming the same buffer reads it.
            .any(|e| {
                matches!(e.expr, Expr::Load { param, .. }
                if k.params.get(param).is_none_or(|q| q.buf == p.buf))
            })
    {
        return false;
    }
    let mut row_major = vec![0i64; k.dims.len()];
    let mut step = 1i64;
    for (s, &d) in row_major.iter_mut().zip(&k.dims).rev() {
        *s = step;
        step = step.saturating_mul(d as i64);
    }
    k.stores
        .iter()
        .any(|s| s.param == i && s.index.offset == 0 && s.index.strides == row_major)
}

/// Parallel points per chunk: at least this many elements of work per chunk keeps
/// the pool's overhead (a few microseconds per job) small.
const MIN_WORK_PER_CHUNK: usize = 1 << 15;

/// How many chunks a loop of `points` parallel points, each `work_per_point`
/// elements of work, is split into on `threads` threads. Below
/// `2 * MIN_WORK_PER_CHUNK` elements of work it is one chunk, which
/// [`pool::parallel_for`] runs on the calling thread: waking a worker costs more
/// than a small kernel runs.
fn chunk_count(points: usize, work_per_point: usize, threads: usize) -> usize {
    let total_work = points.saturating_mul(work_per_point);
    if total_work < 2 * MIN_WORK_PER_CHUNK || threads == 1 {
        1
    } else {
        (total_work / MIN_WORK_PER_CHUNK)
            .min(threads * 4)
            .min(points)
    }
}

fn run_loop(
    schedule: &Schedule,
    k: &LoopKernel,
    entry: Code,
    owner: &CodeOwner,
    slots: &mut [Slot],
) -> Result<u64> {
    // Writable params first: each gets a buffer this step owns uniquely.
    for (i, p) in k.params.iter().enumerate().filter(|(_, p)| p.writes) {
        let idx = p.buf.0 as usize;
        let slot = &mut slots[idx];
        match slot {
            Slot::Empty => {
                let overwritten = fully_overwrites(k, i);
                *slot = Slot::Ready(Arc::new(allocate(schedule, p.buf, overwritten)?))
            }
            Slot::Ready(arc) => {
                // A buffer written by an earlier step and shared since (a target read
                // back by the store, say) is copied rather than written under a reader.
                Arc::make_mut(arc);
            }
        }
    }
    let mut ptrs: Vec<*mut u8> = Vec::with_capacity(k.params.len());
    let mut bytes = 0u64;
    let mut seen: Vec<BufId> = Vec::new();
    for p in &k.params {
        let idx = p.buf.0 as usize;
        let buf = match &mut slots[idx] {
            Slot::Ready(arc) => arc,
            Slot::Empty => {
                return Err(Error::Malformed(format!(
                    "kernel {} reads {} before it was written",
                    k.name, p.buf
                )))
            }
        };
        if buf.dtype() != p.dtype || buf.len() != p.len {
            return Err(Error::Malformed(format!(
                "kernel {} expects {}[{}] in {}, found {}[{}]",
                k.name,
                p.dtype,
                p.len,
                p.buf,
                buf.dtype(),
                buf.len()
            )));
        }
        if !seen.contains(&p.buf) {
            seen.push(p.buf);
            bytes += (p.len * p.dtype.size_in_bytes()) as u64;
        }
        ptrs.push(if p.writes {
            Arc::get_mut(buf)
                .ok_or_else(|| Error::Malformed(format!("{} is shared while written", p.buf)))?
                .as_mut_ptr()
        } else {
            buf.as_ptr() as *mut u8
        });
    }
    let points = k.parallel_points();
    if points == 0 {
        return Ok(bytes);
    }
    let entry = match entry {
        Code::Native(f) => f,
        Code::Device(j) => {
            let kernels = owner
                .downcast_ref::<crate::cuda::mirror::DeviceKernels>()
                .ok_or_else(|| Error::Malformed(format!("kernel {}: no device code", k.name)))?;
            let mut status = [0u64; STATUS_SLOTS];
            // SAFETY: `ptrs` holds each param's buffer, checked above to have exactly
            // the param's dtype and length, written ones owned by this step alone
            // (`Arc::get_mut`); the kernel is the one compiled for this step.
            unsafe { kernels.run(j, k, &ptrs, &mut status)? };
            if status[0] != 0 {
                return Err(status_error(k, &status));
            }
            return Ok(bytes);
        }
    };
    let work_per_point = k.reduce_dims().iter().product::<usize>().max(1);
    let chunks = chunk_count(points, work_per_point, pool::threads());
    let mut statuses = vec![[0u64; STATUS_SLOTS]; chunks];
    let status_ptr = SendPtr(statuses.as_mut_ptr());
    let params = SendPtr(ptrs.as_mut_ptr());
    let body = |c: usize| {
        let begin = points * c / chunks;
        let end = points * (c + 1) / chunks;
        // SAFETY: see the module doc: the kernel was verified in bounds for params of
        // exactly these dtypes and lengths (checked above), the pointers stay valid
        // for the whole call (the buffers live in `slots`, which this function borrows
        // mutably, so nothing else touches them), chunks write disjoint parallel
        // points, and each chunk has its own status block.
        unsafe {
            entry(
                params.get() as *const *mut u8,
                status_ptr.get().add(c) as *mut u64,
                begin as u64,
                end as u64,
            )
        };
    };
    pool::parallel_for(chunks, &body);
    for s in &statuses {
        if s[0] != 0 {
            return Err(status_error(k, s));
        }
    }
    Ok(bytes)
}

/// A raw pointer that chunks on other threads may use (each chunk writes only its own
/// status block and its own parallel points).
#[derive(Clone, Copy)]
struct SendPtr<T>(*mut T);
// SAFETY: see `run_loop`: the pointee outlives the parallel loop and chunks touch
// disjoint parts of it.
unsafe impl<T> Send for SendPtr<T> {}
// SAFETY: as above.
unsafe impl<T> Sync for SendPtr<T> {}
impl<T> SendPtr<T> {
    fn get(self) -> *mut T {
        self.0
    }
}

/// The error a kernel's status block reports: the op's error, with the interpreter's
/// message for an index out of range (the failing load's `DynIndex` names the op).
/// Every runner of compiled kernels maps statuses through this one function.
pub fn status_error(k: &LoopKernel, s: &[u64; STATUS_SLOTS]) -> Error {
    match Status::from_code(s[0]) {
        Some(Status::ZeroDivision) => Error::ZeroDivision,
        // Slot 3 names the failing load: its `DynIndex` says whose message it is.
        Some(Status::IndexOutOfRange) => match k.exprs.get(s[3] as usize).map(|e| &e.expr) {
            Some(Expr::Load {
                dynamic: Some(d), ..
            }) => Error::IndexOutOfRange(d.error.message(s[1] as i64, s[2])),
            _ => Error::Malformed(format!(
                "kernel {} reported an index out of range at v{}, not a dynamic load",
                k.name, s[3]
            )),
        },
        Some(Status::Ok) | None => {
            Error::Malformed(format!("kernel {} reported status {}", k.name, s[0]))
        }
    }
}

/// Runs one node on whole contiguous buffers: a float matmul in
/// [`MathMode::Fast`] through [`crate::blas`], anything else with the interpreter's
/// routine.
fn run_extern(
    schedule: &Schedule,
    e: &ExternStep,
    math: MathMode,
    slots: &mut [Slot],
) -> Result<u64> {
    let inputs = e
        .inputs
        .iter()
        .map(|b| match &slots[b.0 as usize] {
            Slot::Ready(arc) => Ok(arc.clone()),
            Slot::Empty => Err(Error::Malformed(format!(
                "extern {} reads {b} before it was written",
                e.op.name()
            ))),
        })
        .collect::<Result<Vec<_>>>()?;
    let mut bytes: u64 = inputs
        .iter()
        .map(|b| (b.len() * b.dtype().size_in_bytes()) as u64)
        .sum();
    let out = extern_on_host(schedule, e, math, inputs)?;
    bytes += (out.len() * out.dtype().size_in_bytes()) as u64;
    slots[e.output.0 as usize] = Slot::Ready(out);
    Ok(bytes)
}

/// The output of extern step `e` computed on the host from its input buffers (in
/// `e.inputs` order): a float matmul in [`MathMode::Fast`] through [`crate::blas`],
/// anything else with the interpreter's routine for the one node. Checked against the
/// schedule's declaration of the output buffer.
pub(crate) fn extern_on_host(
    schedule: &Schedule,
    e: &ExternStep,
    math: MathMode,
    inputs: Vec<Arc<Buffer>>,
) -> Result<Arc<Buffer>> {
    if inputs.len() != e.inputs.len() || e.input_views.len() != e.inputs.len() {
        return Err(Error::Malformed(format!(
            "extern {} got {} inputs for {}",
            e.op.name(),
            inputs.len(),
            e.inputs.len()
        )));
    }
    if let Some(out) = strided_matmul(e, math, &inputs) {
        return checked_output(schedule, e, out);
    }
    let inputs = row_major_inputs(e, inputs);
    let mut g = Graph::new();
    let mut args = HashMap::new();
    let mut ids = Vec::with_capacity(e.inputs.len());
    for (slot_no, (buf, shape)) in inputs.into_iter().zip(&e.input_shapes).enumerate() {
        let id = ids_input(slot_no);
        ids.push(g.add(Op::Input(id), buf.dtype(), shape.clone(), &[]));
        args.insert(id, buf);
    }
    if ids.len() != e.inputs.len() {
        return Err(Error::Malformed(format!(
            "extern {} got {} inputs for {}",
            e.op.name(),
            ids.len(),
            e.inputs.len()
        )));
    }
    let fast = match (&e.op, e.input_shapes.as_slice()) {
        (Op::Matmul, [a, b]) if math == MathMode::Fast && a.len() == 3 && b.len() == 3 => {
            let d = crate::interp::matmul::Dims {
                b: a[0],
                m: a[1],
                k: a[2],
                n: b[2],
            };
            let ok = a[0] == b[0] && a[2] == b[1] && e.shape == [d.b, d.m, d.n];
            ok.then(|| crate::blas::matmul(&args[&ids_input(0)], &args[&ids_input(1)], d))
                .flatten()
                .map(Arc::new)
        }
        _ => None,
    };
    let out = match fast {
        Some(out) => out,
        None => {
            let node = g.add(e.op.clone(), e.dtype, e.shape.clone(), &ids);
            crate::interp::execute(&g, &args, &[node])?
                .pop()
                .ok_or_else(|| Error::Malformed("extern step produced nothing".into()))?
        }
    };
    checked_output(schedule, e, out)
}

/// A matmul step with a strided operand, read in place by the float product of
/// Fast math; `None` for any other step (or dtype), which reads row-major inputs.
fn strided_matmul(e: &ExternStep, math: MathMode, inputs: &[Arc<Buffer>]) -> Option<Arc<Buffer>> {
    let (Op::Matmul, [a, b], [x, y]) = (&e.op, e.input_shapes.as_slice(), inputs) else {
        return None;
    };
    if math != MathMode::Fast || e.input_views.iter().all(Option::is_none) {
        return None;
    }
    let [batch, m, k] = <[usize; 3]>::try_from(a.as_slice()).ok()?;
    let [b2, k2, n] = <[usize; 3]>::try_from(b.as_slice()).ok()?;
    if batch != b2 || k != k2 || e.shape != [batch, m, n] {
        return None;
    }
    let strided = |v: &Option<ExternView>, rows: usize, cols: usize| match v {
        None => Some(crate::blas::Strided::row_major(rows, cols)),
        Some(v) => match v.strides.as_slice() {
            &[batch, row, col] => Some(crate::blas::Strided {
                offset: v.offset,
                batch,
                row,
                col,
            }),
            _ => None,
        },
    };
    let xs = strided(&e.input_views[0], m, k)?;
    let ys = strided(&e.input_views[1], k, n)?;
    let d = crate::interp::matmul::Dims { b: batch, m, k, n };
    crate::blas::matmul_strided(x, &xs, y, &ys, d).map(Arc::new)
}

/// The inputs of extern step `e` as row-major buffers: a strided one gathered.
pub(crate) fn row_major_inputs(e: &ExternStep, inputs: Vec<Arc<Buffer>>) -> Vec<Arc<Buffer>> {
    inputs
        .into_iter()
        .zip(e.input_views.iter().zip(&e.input_shapes))
        .map(|(b, (v, shape))| match v {
            None => b,
            Some(v) => Arc::new(b.gather(&lazyfuse_ir::Layout {
                shape: shape.clone(),
                strides: v.strides.iter().map(|&s| s as isize).collect(),
                offset: v.offset,
            })),
        })
        .collect()
}

/// `out` checked against the schedule's declaration of `e`'s output buffer.
fn checked_output(schedule: &Schedule, e: &ExternStep, out: Arc<Buffer>) -> Result<Arc<Buffer>> {
    let decl = &schedule.buffers[e.output.0 as usize];
    if out.dtype() != decl.dtype || out.len() != decl.len {
        return Err(Error::Malformed(format!(
            "extern {} produced {}[{}] for {}[{}]",
            e.op.name(),
            out.dtype(),
            out.len(),
            decl.dtype,
            decl.len
        )));
    }
    Ok(out)
}

/// The id under which [`run_extern`] passes its input slot `i` to the interpreter.
fn ids_input(i: usize) -> InputId {
    InputId(i as u64)
}

/// The Cranelift IR of a loop kernel compiled with `math`, for `LAZYFUSE_DUMP_IR`.
pub fn clif_text(kernel: &LoopKernel, math: MathMode) -> Result<String> {
    lazyfuse_codegen::cpu::clif_text(kernel, math)
        .map_err(|e| Error::Unsupported(format!("compiling kernel {}: {e}", kernel.name)))
}

/// The machine code of a loop kernel compiled with `math`, for `LAZYFUSE_DUMP_IR=asm`.
pub fn asm_text(kernel: &LoopKernel, math: MathMode) -> Result<String> {
    lazyfuse_codegen::cpu::asm_text(kernel, math)
        .map_err(|e| Error::Unsupported(format!("compiling kernel {}: {e}", kernel.name)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use lazyfuse_ir::kernel::Affine;

    #[test]
    fn small_loops_are_one_chunk_and_large_ones_split() {
        assert_eq!(chunk_count(1000, 1, 2), 1);
        assert_eq!(chunk_count(2 * MIN_WORK_PER_CHUNK - 1, 1, 16), 1);
        assert_eq!(chunk_count(10, MIN_WORK_PER_CHUNK / 10, 16), 1);
        assert_eq!(chunk_count(1 << 24, 1, 2), 8);
        assert_eq!(chunk_count(1 << 24, 1, 1), 1);
        // A few rows of much work each: no more chunks than rows.
        assert_eq!(chunk_count(3, 1 << 20, 2), 3);
    }

    /// `out[i] = x[i] + x[i]` over `[2, 3]`, `x` and `out` in buffers 0 and `out_buf`.
    fn add_kernel(out_buf: u32, store: Affine) -> LoopKernel {
        use lazyfuse_ir::kernel::{ExprId, ExprNode, Param, Stage, StoreOp};
        use lazyfuse_ir::DType;
        LoopKernel {
            name: "k".into(),
            nodes: vec![],
            params: vec![
                Param {
                    buf: BufId(0),
                    dtype: DType::F32,
                    len: 6,
                    writes: false,
                },
                Param {
                    buf: BufId(out_buf),
                    dtype: DType::F32,
                    len: 6,
                    writes: true,
                },
            ],
            dims: vec![2, 3],
            n_parallel: 2,
            exprs: vec![
                ExprNode {
                    expr: Expr::Load {
                        param: 0,
                        index: Affine {
                            offset: 0,
                            strides: vec![3, 1],
                        },
                        dynamic: None,
                    },
                    dtype: DType::F32,
                    stage: Stage::Outer(0),
                },
                ExprNode {
                    expr: Expr::Binary {
                        op: lazyfuse_ir::BinaryOp::Add,
                        a: ExprId(0),
                        b: ExprId(0),
                    },
                    dtype: DType::F32,
                    stage: Stage::Outer(0),
                },
            ],
            stores: vec![StoreOp {
                param: 1,
                index: store,
                value: ExprId(1),
            }],
        }
    }

    #[test]
    fn only_provable_full_overwrites_skip_zeroing() {
        let row_major = Affine {
            offset: 0,
            strides: vec![3, 1],
        };
        assert!(fully_overwrites(&add_kernel(1, row_major.clone()), 1));
        // A transposed store still covers every element, but is not proven here.
        let transposed = Affine {
            offset: 0,
            strides: vec![1, 2],
        };
        assert!(!fully_overwrites(&add_kernel(1, transposed), 1));
        // A store of half the elements, twice each.
        let half = Affine {
            offset: 0,
            strides: vec![0, 1],
        };
        assert!(!fully_overwrites(&add_kernel(1, half), 1));
        // The written buffer is also read (through param 0): its contents matter.
        assert!(!fully_overwrites(&add_kernel(0, row_major.clone()), 1));
        // A param that is only read.
        assert!(!fully_overwrites(&add_kernel(1, row_major.clone()), 0));
        // Reduction dims: stores run once per point, not per element of the loop.
        let mut r = add_kernel(1, row_major);
        r.n_parallel = 1;
        assert!(!fully_overwrites(&r, 1));
    }
}
