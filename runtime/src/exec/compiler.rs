//! Compiling a schedule's loop kernels: the process-wide kernel cache (keyed by a
//! kernel's structure, bounded, least recently used evicted), the compiler each
//! backend uses, and the text dumps of compiled kernels.

use super::RunStats;
use crate::error::{Error, Result};
use hashbrown::HashMap as FastMap;
use lazyfuse_codegen::cpu::{CpuModule, KernelFn};
use lazyfuse_ir::kernel::{LoopKernel, MathMode, Schedule, Step};
use std::sync::{Arc, LazyLock, Mutex, MutexGuard};
use std::time::Instant;

/// What owns a kernel's code: a Cranelift module, or a host build of its CUDA C.
pub(crate) type CodeOwner = Arc<dyn std::any::Any + Send + Sync>;

/// A compiled kernel: its function and the module that owns its code.
pub(super) struct Compiled {
    /// Keeps the code alive while `entry` may be called.
    _module: CodeOwner,
    entry: Code,
    last_use: u64,
}

/// The process-wide kernel cache, keyed by [`LoopKernel::structure`]. Bounded: when
/// it holds more than [`KERNEL_CACHE_CAPACITY`] kernels the least recently used half
/// is dropped, and a module's code is freed when none of its kernels is cached (or
/// running) any more.
pub(super) struct KernelCache {
    kernels: FastMap<String, Compiled>,
    clock: u64,
}

/// Most kernels the cache keeps.
pub const KERNEL_CACHE_CAPACITY: usize = 4096;

pub(super) static CACHE: LazyLock<Mutex<KernelCache>> = LazyLock::new(|| {
    Mutex::new(KernelCache {
        kernels: FastMap::new(),
        clock: 0,
    })
});

pub(super) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
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

/// A schedule's compiled loop kernels, by step index: what [`run_compiled`](super::run_compiled) calls.
/// Holding one keeps its kernels' code alive, so a schedule cache can keep it beside
/// its schedule and skip the kernel cache's lookups (each a walk over the kernel's
/// text) on every later realize.
#[derive(Clone)]
pub struct CompiledSchedule {
    pub(super) entries: Vec<Option<Entry>>,
    /// the math mode the kernels were compiled with; extern steps follow it too
    pub(super) math: MathMode,
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
pub(super) fn compile_all(
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
pub(super) fn evict(cache: &mut KernelCache, now: u64) {
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
