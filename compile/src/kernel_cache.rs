//! The process-wide kernel cache and the batch compile behind it: a schedule's loop
//! kernels are looked up by [`LoopKernel::structure`] (with the math mode and the
//! compiler), and the ones missing are compiled together, one module per batch.

use crate::KernelCompiler;
use hashbrown::HashMap as FastMap;
use lazyfuse_codegen::cpu::CpuModule;
use lazyfuse_codegen::cuda::host::HostCudaModule;
use lazyfuse_ir::kernel::{KernelCode, LoopKernel, MathMode, Schedule, Step};
use lazyfuse_runtime::exec::{Code, RunStats};
use lazyfuse_runtime::{Error, Result};
use std::sync::{Arc, LazyLock, Mutex, MutexGuard};
use std::time::Instant;

/// A cached kernel: its code and when a schedule last used it.
struct Cached {
    code: Code,
    last_use: u64,
}

/// The kernel cache, keyed by [`LoopKernel::structure`]. Bounded: when it holds more
/// than [`KERNEL_CACHE_CAPACITY`] kernels the least recently used half is dropped,
/// and a module's code is freed when none of its kernels is cached (or running) any
/// more.
struct KernelCache {
    kernels: FastMap<String, Cached>,
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
/// assert!(lazyfuse_compile::cached_kernels() <= lazyfuse_compile::KERNEL_CACHE_CAPACITY);
/// ```
pub fn cached_kernels() -> usize {
    lock(&CACHE).kernels.len()
}

/// The code of a schedule's loop kernels (by step index), compiling the ones the
/// cache lacks in one batch, counting compiles and hits in `stats`.
pub(crate) fn compile_all(
    schedule: &Schedule,
    math: MathMode,
    compiler: KernelCompiler,
    stats: &mut RunStats,
) -> Result<Vec<Option<Code>>> {
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
        let codes = compile_batch(&batch, math, compiler)?;
        for ((i, _), code) in missing.iter().zip(codes) {
            let key = keys[*i].clone().unwrap_or_default();
            cache.kernels.insert(
                key,
                Cached {
                    code,
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
                .and_then(|k| cache.kernels.get(k).map(|c| c.code.clone()))
        })
        .collect();
    evict(&mut cache, now);
    stats.compile += start.elapsed();
    Ok(entries)
}

/// One batch of kernels compiled into one module by `compiler`: the code of each, in
/// batch order.
fn compile_batch(
    batch: &[&LoopKernel],
    math: MathMode,
    compiler: KernelCompiler,
) -> Result<Vec<Code>> {
    let native = |module: Arc<dyn KernelCode>| {
        (0..batch.len())
            .map(|j| Code::Native(module.clone(), j))
            .collect()
    };
    Ok(match compiler {
        KernelCompiler::Cranelift => {
            let m = CpuModule::compile_with(batch, &lazyfuse_runtime::jit_symbols::lookup, math)
                .map_err(|e| Error::Unsupported(format!("compiling a kernel: {e}")))?;
            native(Arc::new(m))
        }
        KernelCompiler::CudaHost => {
            let m = HostCudaModule::compile(batch, math).map_err(|e| {
                Error::Unsupported(format!("compiling a kernel's CUDA C for the host: {e}"))
            })?;
            native(Arc::new(m))
        }
        KernelCompiler::Cuda(ordinal) => {
            let m = Arc::new(crate::device::compile(batch, math, ordinal)?);
            (0..batch.len())
                .map(|j| Code::Device(m.clone(), j))
                .collect()
        }
    })
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
