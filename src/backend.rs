//! The realize driver: which CPU backend runs a realize, and the inspection switches
//! (`LAZYFUSE_CPU_BACKEND`, `LAZYFUSE_NOFUSE`, `LAZYFUSE_DEBUG`, `LAZYFUSE_DUMP_IR`).
//!
//! The pipeline after the graph passes is one line per stage in [`execute`]:
//! scheduling (fusion, with composite ops lowered on the way) → kernel IR →
//! Cranelift code → execution. The interpreter backend skips the middle stages and
//! runs the graph node by node.

use crate::error::{Error, Result};
use crate::realize_cache::Ran;
use lazyfuse_ir::kernel::{BufKind, MathMode, Schedule, Step};
use lazyfuse_ir::schedule::{schedule_donating, ScheduleOptions};
use lazyfuse_ir::{Graph, InputId, NodeId};
use lazyfuse_runtime::exec::{CompiledSchedule, KernelCompiler, RunStats};
use lazyfuse_runtime::resident::{self, DeviceArray};
use lazyfuse_runtime::Buffer;
use std::collections::HashMap;
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::{Arc, LazyLock, Mutex};
use std::time::Instant;

/// Which CPU backend realizes CPU tensors.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CpuBackend {
    /// Fused loop kernels compiled to native code with Cranelift (the default).
    Jit,
    /// The reference interpreter: one node at a time, the semantics' oracle.
    Interp,
    /// The fused kernels' CUDA C (the GPU backend's code), compiled for the host by
    /// the system C++ compiler and run on the CPU: checks the CUDA code generator's
    /// semantics where no GPU exists. Slow to compile; for tests.
    CudaHost,
    /// The fused kernels' CUDA C compiled by NVRTC and run on `cuda:0`, each kernel's
    /// buffers copied to the GPU and back (tensors stay on the CPU): checks the GPU
    /// backend on whole workloads until tensors live on the device. Without a GPU,
    /// realizes fail with "CUDA driver not found: …".
    Cuda,
}

impl CpuBackend {
    /// What compiles the loop kernels of this backend (`None`: the interpreter).
    fn compiler(self) -> Option<KernelCompiler> {
        match self {
            CpuBackend::Jit => Some(KernelCompiler::Cranelift),
            CpuBackend::CudaHost => Some(KernelCompiler::CudaHost),
            CpuBackend::Cuda => Some(KernelCompiler::Cuda(0)),
            CpuBackend::Interp => None,
        }
    }
}

impl std::str::FromStr for CpuBackend {
    type Err = Error;

    fn from_str(s: &str) -> Result<Self> {
        match s {
            "jit" => Ok(CpuBackend::Jit),
            "interp" => Ok(CpuBackend::Interp),
            "cuda-host" => Ok(CpuBackend::CudaHost),
            "cuda" => Ok(CpuBackend::Cuda),
            other => Err(Error::Config(format!(
                "unknown CPU backend '{other}': expected 'jit', 'interp', 'cuda-host' or 'cuda'"
            ))),
        }
    }
}

/// 0: not chosen yet (read the environment), 1: jit, 2: interp, 3: cuda-host, 4: cuda.
static BACKEND: AtomicU8 = AtomicU8::new(0);

/// Selects the CPU backend for every realize from now on; `LAZYFUSE_CPU_BACKEND`
/// (`jit`, `interp`, `cuda-host` or `cuda`) sets the initial choice, the JIT by default.
///
/// ```
/// use lazyfuse::{CpuBackend, Tensor};
/// lazyfuse::set_cpu_backend(CpuBackend::Interp);
/// let x = Tensor::from_vec(vec![1.0f32, 2.0], &[2]).unwrap().exp().unwrap();
/// let on_interp = x.to_vec::<f32>().unwrap();
/// lazyfuse::set_cpu_backend(CpuBackend::Jit);
/// assert_eq!(lazyfuse::cpu_backend().unwrap(), CpuBackend::Jit);
/// let y = Tensor::from_vec(vec![1.0f32, 2.0], &[2]).unwrap().exp().unwrap();
/// assert_eq!(y.to_vec::<f32>().unwrap(), on_interp);
/// ```
pub fn set_cpu_backend(backend: CpuBackend) {
    BACKEND.store(
        match backend {
            CpuBackend::Jit => 1,
            CpuBackend::Interp => 2,
            CpuBackend::CudaHost => 3,
            CpuBackend::Cuda => 4,
        },
        Ordering::Relaxed,
    );
}

/// The CPU backend realizes use; an `Err` when `LAZYFUSE_CPU_BACKEND` names none.
///
/// ```
/// assert!(lazyfuse::cpu_backend().is_ok());
/// ```
pub fn cpu_backend() -> Result<CpuBackend> {
    match BACKEND.load(Ordering::Relaxed) {
        1 => Ok(CpuBackend::Jit),
        2 => Ok(CpuBackend::Interp),
        3 => Ok(CpuBackend::CudaHost),
        4 => Ok(CpuBackend::Cuda),
        _ => match std::env::var("LAZYFUSE_CPU_BACKEND") {
            Ok(v) => v.parse(),
            Err(_) => Ok(CpuBackend::Jit),
        },
    }
}

/// 0: not chosen yet (read the environment), 1: fast, 2: exact.
static MATH: AtomicU8 = AtomicU8::new(0);

/// Selects how JIT kernels compute float math from now on: [`MathMode::Fast`] (the
/// default: inline vector approximations, reordered reductions and `a*b + c` as one
/// fused multiply-add, within the conformance tolerances) or [`MathMode::Exact`]
/// (bit for bit the reference interpreter's values). `LAZYFUSE_MATH` (`fast` or `exact`) sets the initial
/// choice.
///
/// ```
/// use lazyfuse::{MathMode, Tensor};
/// lazyfuse::set_math_mode(MathMode::Exact);
/// assert_eq!(lazyfuse::math_mode().unwrap(), MathMode::Exact);
/// let x = Tensor::from_vec(vec![0.5f32, 2.0], &[2]).unwrap();
/// assert_eq!(x.exp().unwrap().to_vec::<f32>().unwrap(), vec![0.5f32.exp(), 2.0f32.exp()]);
/// lazyfuse::set_math_mode(MathMode::Fast);
/// ```
pub fn set_math_mode(mode: MathMode) {
    MATH.store(
        match mode {
            MathMode::Fast => 1,
            MathMode::Exact => 2,
        },
        Ordering::Relaxed,
    );
}

/// The math mode JIT kernels are compiled with; an `Err` when `LAZYFUSE_MATH` names
/// none.
///
/// ```
/// assert!(lazyfuse::math_mode().is_ok());
/// ```
pub fn math_mode() -> Result<MathMode> {
    match MATH.load(Ordering::Relaxed) {
        1 => Ok(MathMode::Fast),
        2 => Ok(MathMode::Exact),
        _ => match std::env::var("LAZYFUSE_MATH") {
            Ok(v) => v.parse().map_err(Error::Config),
            Err(_) => Ok(MathMode::Fast),
        },
    }
}

/// `LAZYFUSE_DEBUG`: 0 (off), 1 (one line per realize), 2 (and one per kernel),
/// 3 (and why each materialized value was not fused).
static DEBUG: LazyLock<u8> = LazyLock::new(|| {
    std::env::var("LAZYFUSE_DEBUG")
        .ok()
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(0)
});

/// `LAZYFUSE_NOFUSE=1`: one kernel per node.
static NOFUSE: LazyLock<bool> =
    LazyLock::new(|| std::env::var_os("LAZYFUSE_NOFUSE").is_some_and(|v| v != "0"));

/// The schedule of `graph` for `targets` with the current fusion setting and math
/// mode; in-place writes may store into the buffers of the inputs `donate`. On a GPU
/// (`on_gpu`), matmul is a generated kernel rather than an extern step on the host,
/// and long reductions with few outputs are split (`passes::split_reductions`).
pub(crate) fn schedule_of(
    graph: &Graph,
    targets: &[NodeId],
    donate: &[InputId],
    on_gpu: bool,
) -> Result<Schedule> {
    let math = math_mode()?;
    let opts = ScheduleOptions {
        fuse: !*NOFUSE,
        math,
        matmul_kernels: on_gpu,
        // cuBLAS reorders the sum: fast math only, and a real GPU only.
        library_float_matmul: on_gpu && math == MathMode::Fast && cublas_usable(),
    };
    let split;
    let (graph, targets) = if on_gpu {
        // Few outputs over a long extent would leave most of a GPU idle: split them.
        let (g, t, _) = lazyfuse_ir::passes::split_reductions(graph, targets, opts.math);
        split = (g, t);
        (&split.0, &split.1[..])
    } else {
        (graph, targets)
    };
    schedule_donating(graph, targets, &opts, donate)
        .map_err(|e| Error::Runtime(lazyfuse_runtime::Error::Unsupported(e)))
}

/// Runs the (already optimized) `graph` for `targets`: the interpreter, or
/// schedule → compile → execute. `dump` prints the kernels and their code.
///
/// `donated` holds input buffers the store gave up (see `Store::plan`): the JIT
/// writes in place into those the schedule donates (`BufKind::Donated`) and leaves
/// the others in the map; on an error, the ones no step wrote are back in the map.
pub(crate) fn execute(
    graph: &Graph,
    buffers: &HashMap<InputId, Arc<Buffer>>,
    donated: &mut HashMap<InputId, Arc<Buffer>>,
    targets: &[NodeId],
    dump: bool,
) -> Result<(Vec<Arc<Buffer>>, Option<Ran>)> {
    let debug = *DEBUG;
    match cpu_backend()? {
        CpuBackend::Interp => {
            if dump {
                eprintln!(
                    "== lazyfuse: kernels: none (reference interpreter, one node at a time) =="
                );
            }
            let t0 = Instant::now();
            // The interpreter never writes its inputs: donated buffers are only read
            // (and stay in `donated` for the store to take back).
            let mut all = buffers.clone();
            all.extend(donated.iter().map(|(k, v)| (*k, v.clone())));
            let out = lazyfuse_runtime::interp::execute(graph, &all, targets)?;
            if debug >= 1 {
                eprintln!(
                    "realize: {} kernels (0 compiled, 0 cache hits), compile 0.000 ms, run {:.3} ms",
                    graph.topo_order(targets).len(),
                    t0.elapsed().as_secs_f64() * 1e3
                );
            }
            Ok((out, None))
        }
        backend @ (CpuBackend::Jit | CpuBackend::CudaHost | CpuBackend::Cuda) => {
            let compiler = backend.compiler().unwrap_or_default();
            let t0 = Instant::now();
            let Cached {
                schedule: sched,
                compiled,
                stats: compile_stats,
                inputs,
                order: back,
                scheduled,
            } = prepare(graph, targets, buffers, donated, compiler, false, dump)?;
            let schedule_time = t0.elapsed();
            let ran = with_renumbered(back.as_deref(), donated, |donated| {
                lazyfuse_runtime::exec::run_compiled(
                    &sched,
                    &compiled,
                    &inputs,
                    donated,
                    compile_stats,
                )
            });
            let (outs, stats) = ran?;
            report(&stats, &sched, schedule_time, scheduled, false);
            let ran = back.map(|order| Ran {
                schedule: sched,
                compiled,
                order,
            });
            Ok((outs, ran))
        }
    }
}

/// Whether float matmul on a GPU goes to cuBLAS: a GPU (not the emulation) and the
/// library present. Says why not once under `LAZYFUSE_DEBUG`.
fn cublas_usable() -> bool {
    if resident::emulated() {
        return false;
    }
    match lazyfuse_runtime::cuda::blas::cublas_version() {
        Ok(_) => true,
        Err(why) => {
            static SAID: std::sync::Once = std::sync::Once::new();
            if *DEBUG >= 1 {
                SAID.call_once(|| {
                    eprintln!("cublas: {why}; float matmul on the GPU is a generated kernel")
                });
            }
            false
        }
    }
}

/// Runs the (already optimized) `graph` for `targets` on `cuda:ordinal`, reading the
/// device arrays `arrays`: schedule (through the schedule cache) → CUDA C → NVRTC
/// (the kernel cache) → launches on device-resident buffers
/// ([`lazyfuse_runtime::resident`]). `dump` prints the kernels and their CUDA C.
pub(crate) fn execute_on_device(
    graph: &Graph,
    arrays: &HashMap<InputId, Arc<DeviceArray>>,
    donated: &mut HashMap<InputId, Arc<DeviceArray>>,
    targets: &[NodeId],
    ordinal: usize,
    dump: bool,
) -> Result<(Vec<Arc<DeviceArray>>, Option<Ran>)> {
    let t0 = Instant::now();
    let compiler = resident::kernel_compiler(ordinal);
    let Cached {
        schedule: sched,
        compiled,
        stats,
        inputs,
        order,
        scheduled,
    } = prepare(graph, targets, arrays, donated, compiler, true, dump)?;
    let schedule_time = t0.elapsed();
    let ran = with_renumbered(order.as_deref(), donated, |donated| {
        resident::run(&sched, &compiled, ordinal, &inputs, donated, stats)
    });
    let (outs, stats) = ran?;
    report(&stats, &sched, schedule_time, scheduled, false);
    // What the realize cache records (a donating realize never reaches it).
    let ran = order.map(|order| Ran {
        schedule: sched,
        compiled,
        order,
    });
    Ok((outs, ran))
}

/// Runs a schedule the realize cache had, on `cuda:ordinal`: `arrays` are numbered
/// the way the schedule names them; nothing is donated.
pub(crate) fn execute_hit_on_device(
    schedule: &Schedule,
    compiled: &CompiledSchedule,
    arrays: &HashMap<InputId, Arc<DeviceArray>>,
    ordinal: usize,
) -> Result<Vec<Arc<DeviceArray>>> {
    let stats = RunStats {
        cache_hits: compiled.loop_kernels(),
        ..RunStats::default()
    };
    let (outs, stats) = resident::run(
        schedule,
        compiled,
        ordinal,
        arrays,
        &mut HashMap::new(),
        stats,
    )?;
    report(&stats, schedule, std::time::Duration::ZERO, false, true);
    Ok(outs)
}

/// Runs `run` on the donated buffers numbered the way a cached schedule names its
/// inputs (by first appearance: `order`, `None` for a fresh schedule that uses the
/// graph's own ids); the ones it leaves (or hands back) return under their own ids.
fn with_renumbered<B, R>(
    order: Option<&[InputId]>,
    donated: &mut HashMap<InputId, B>,
    run: impl FnOnce(&mut HashMap<InputId, B>) -> R,
) -> R {
    let Some(order) = order else {
        return run(donated);
    };
    let mut renumbered: HashMap<InputId, B> = order
        .iter()
        .enumerate()
        .filter_map(|(k, id)| donated.remove(id).map(|b| (InputId(k as u64), b)))
        .collect();
    let ran = run(&mut renumbered);
    for (k, b) in renumbered {
        donated.insert(order[k.0 as usize], b);
    }
    ran
}

/// Runs a schedule the realize cache had (see `crate::realize_cache`): `inputs` are
/// numbered the way the schedule names them; nothing is donated.
pub(crate) fn execute_hit(
    schedule: &Schedule,
    compiled: &CompiledSchedule,
    inputs: &HashMap<InputId, Arc<Buffer>>,
) -> Result<Vec<Arc<Buffer>>> {
    let stats = RunStats {
        cache_hits: compiled.loop_kernels(),
        ..RunStats::default()
    };
    let (outs, stats) = lazyfuse_runtime::exec::run_compiled(
        schedule,
        compiled,
        inputs,
        &mut HashMap::new(),
        stats,
    )?;
    report(&stats, schedule, std::time::Duration::ZERO, false, true);
    Ok(outs)
}

/// Whether fusion is on (`LAZYFUSE_NOFUSE` unset).
pub(crate) fn fuse_enabled() -> bool {
    !*NOFUSE
}

/// Records a JIT realize's figures for [`last_realize_stats`] and prints them as
/// `LAZYFUSE_DEBUG` asks.
fn report(
    stats: &RunStats,
    sched: &Schedule,
    schedule_time: std::time::Duration,
    scheduled: bool,
    reused: bool,
) {
    let debug = *DEBUG;
    LAST.with(|l| {
        l.set(RealizeStats {
            kernels: stats.kernels,
            compiled: stats.compiled,
            kernel_cache_hits: stats.cache_hits,
            scheduled,
            in_place: stats.in_place,
            reused,
            outputs: sched.outputs.len(),
            temporaries: sched
                .buffers
                .iter()
                .filter(|b| matches!(b.kind, BufKind::Temp))
                .count(),
        })
    });
    if debug >= 1 {
        eprintln!(
            "realize: {} kernels ({} compiled, {} cache hits), compile {:.3} ms, run {:.3} ms",
            stats.kernels,
            stats.compiled,
            stats.cache_hits,
            (stats.compile + schedule_time).as_secs_f64() * 1e3,
            stats.run.as_secs_f64() * 1e3
        );
    }
    if debug >= 2 {
        for s in &stats.steps {
            let secs = s.time.as_secs_f64();
            let gbs = if secs > 0.0 {
                s.bytes as f64 / secs / 1e9
            } else {
                0.0
            };
            eprintln!(
                "  kernel {}: {:.3} ms, {} bytes, {:.2} GB/s",
                s.name,
                secs * 1e3,
                s.bytes,
                gbs
            );
        }
    }
    if debug >= 3 {
        for n in &sched.notes {
            eprintln!("  materialized: {n}");
        }
    }
}

/// What the last JIT realize of the calling thread did (see [`last_realize_stats`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RealizeStats {
    /// steps run: loop kernels and extern steps
    pub kernels: usize,
    /// loop kernels compiled
    pub compiled: usize,
    /// loop kernels found in the kernel cache
    pub kernel_cache_hits: usize,
    /// whether the graph was scheduled (`false`: the schedule cache had it)
    pub scheduled: bool,
    /// storages written in place: in-place writes that stored into the storage's
    /// own buffer instead of copying it (see `Store::plan` for when)
    pub in_place: usize,
    /// whether the realize cache had the graph's structure: the realize ran its
    /// recorded schedule without the graph passes, the schedule cache or kernel
    /// lookups (rebuilding and realizing the same computation takes this path)
    pub reused: bool,
    /// values the realize stored for the caller: its targets (one for
    /// [`crate::Tensor::realize`] and every read, one per distinct unrealized tensor
    /// for [`crate::realize_all`])
    pub outputs: usize,
    /// values stored for the realize's own kernels and dropped after it (what fusion
    /// decided to materialize: see `LAZYFUSE_DEBUG=3`)
    pub temporaries: usize,
}

thread_local! {
    static LAST: std::cell::Cell<RealizeStats> = const {
        std::cell::Cell::new(RealizeStats { kernels: 0, compiled: 0, kernel_cache_hits: 0, scheduled: false, in_place: 0, reused: false, outputs: 0, temporaries: 0 })
    };
}

/// What the calling thread's last realize on the JIT did: how many kernels ran, how
/// many were compiled or came from the kernel cache, and whether the schedule came
/// from the schedule cache. Rebuilding and realizing the same computation compiles
/// and schedules nothing new:
///
/// ```
/// use lazyfuse::{DType, Tensor};
/// let x = Tensor::arange(0.0, 8.0, 1.0, DType::F32).unwrap();
/// x.realize().unwrap();
/// let build = || x.mul(3.0).unwrap().sin().unwrap().add(&x).unwrap();
/// build().realize().unwrap();
/// build().realize().unwrap();
/// let s = lazyfuse::last_realize_stats();
/// assert_eq!((s.kernels, s.compiled, s.scheduled, s.reused), (1, 0, false, true));
/// ```
pub fn last_realize_stats() -> RealizeStats {
    LAST.with(|l| l.get())
}

/// Most schedules the schedule cache keeps.
const SCHEDULE_CACHE_CAPACITY: usize = 1024;

/// The schedule cache: graph structure → schedule, so that rebuilding and realizing
/// the same computation schedules nothing new. The key is the graph's text form
/// ([`Graph::dump`]: ops, attributes, dtypes, shapes, with input buffers numbered by
/// first appearance) and the fusion setting; a cached schedule names its input
/// buffers by that number (`InputId(k)` is the k-th input), and each realize maps
/// its own buffers onto those numbers.
static SCHEDULES: LazyLock<Mutex<ScheduleCache>> = LazyLock::new(|| {
    Mutex::new(ScheduleCache {
        entries: HashMap::new(),
        clock: 0,
    })
});

struct ScheduleCache {
    entries: HashMap<String, (Arc<Schedule>, Arc<CompiledSchedule>, u64)>,
    clock: u64,
}

/// A schedule from the cache, ready to run; `B` is what holds an input's elements
/// (a host buffer, or a device array).
struct Cached<B> {
    schedule: Arc<Schedule>,
    /// its loop kernels, compiled
    compiled: Arc<CompiledSchedule>,
    /// what getting them took (compiles, kernel cache hits)
    stats: RunStats,
    /// the input buffers, numbered as the schedule names them
    inputs: HashMap<InputId, B>,
    /// the graph's inputs in the schedule's numbering order (`None`: a fresh
    /// schedule, which names the graph's inputs by their own ids)
    order: Option<Vec<InputId>>,
    /// whether the graph was scheduled now (a schedule cache miss)
    scheduled: bool,
}

/// What an executor runs for `graph`: with `dump`, a fresh schedule (so that the dump
/// names this graph's nodes) printed and compiled; otherwise the schedule cache's
/// ([`cached_schedule`]). A schedule made now is also compiled by NVRTC when the CUDA
/// compile check is on (under the emulation, this is what proves a device's kernels
/// compile for a GPU). `donated` names the inputs in-place writes may take.
fn prepare<B: Clone>(
    graph: &Graph,
    targets: &[NodeId],
    buffers: &HashMap<InputId, B>,
    donated: &HashMap<InputId, B>,
    compiler: KernelCompiler,
    on_gpu: bool,
    dump: bool,
) -> Result<Cached<B>> {
    let donate: Vec<InputId> = donated.keys().copied().collect();
    let prepared = if dump {
        let sched = Arc::new(schedule_of(graph, targets, &donate, on_gpu)?);
        dump_schedule(graph, targets, &sched, on_gpu);
        let (compiled, stats) =
            lazyfuse_runtime::exec::compile_using(&sched, math_mode()?, compiler)?;
        Cached {
            schedule: sched,
            compiled: Arc::new(compiled),
            stats,
            inputs: buffers.clone(),
            order: None,
            scheduled: true,
        }
    } else {
        cached_schedule(graph, targets, buffers, &donate, compiler, on_gpu)?
    };
    if prepared.scheduled && crate::cuda_check::cuda_compile_check() {
        crate::cuda_check::check(&prepared.schedule, math_mode()?)?;
    }
    Ok(prepared)
}

/// The schedule of `graph` and its compiled kernels from the cache (scheduling and
/// compiling on a miss), and the input buffers renumbered the way the cached
/// schedule names them.
fn cached_schedule<B: Clone>(
    graph: &Graph,
    targets: &[NodeId],
    buffers: &HashMap<InputId, B>,
    donate: &[InputId],
    compiler: KernelCompiler,
    on_gpu: bool,
) -> Result<Cached<B>> {
    // The graph's inputs in order of first appearance, as `Graph::dump` numbers them.
    let mut order: Vec<InputId> = Vec::new();
    for n in graph.topo_order(targets) {
        if let lazyfuse_ir::Op::Input(id) = graph.node(n).op {
            if !order.contains(&id) {
                order.push(id);
            }
        }
    }
    let renumbered = order
        .iter()
        .enumerate()
        .filter(|(_, id)| !donate.contains(id))
        .map(|(k, id)| {
            buffers
                .get(id)
                .map(|b| (InputId(k as u64), b.clone()))
                .ok_or_else(|| {
                    Error::Runtime(lazyfuse_runtime::Error::Malformed(format!(
                        "input {id} has no buffer"
                    )))
                })
        })
        .collect::<Result<HashMap<_, _>>>()?;
    // Which inputs are donated changes the schedule (stores in place or a copy).
    let donated_at: Vec<usize> = order
        .iter()
        .enumerate()
        .filter(|(_, id)| donate.contains(id))
        .map(|(k, _)| k)
        .collect();
    let key = format!(
        "fuse={} math={} {compiler:?} gpu={on_gpu} donate={donated_at:?}\n{}",
        !*NOFUSE,
        math_mode()?,
        graph.dump(targets)
    );
    let mut cache = SCHEDULES.lock().unwrap_or_else(|p| p.into_inner());
    cache.clock += 1;
    let now = cache.clock;
    if let Some((sched, compiled, used)) = cache.entries.get_mut(&key) {
        *used = now;
        let stats = RunStats {
            cache_hits: compiled.loop_kernels(),
            ..RunStats::default()
        };
        return Ok(Cached {
            schedule: sched.clone(),
            compiled: compiled.clone(),
            stats,
            inputs: renumbered,
            order: Some(order),
            scheduled: false,
        });
    }
    drop(cache);
    let mut sched = schedule_of(graph, targets, donate, on_gpu)?;
    for b in &mut sched.buffers {
        if let BufKind::Input(id) | BufKind::Donated(id) = b.kind {
            let k = order.iter().position(|o| *o == id).ok_or_else(|| {
                Error::Runtime(lazyfuse_runtime::Error::Malformed(format!(
                    "the schedule reads input {id}, which the graph does not hold"
                )))
            })?;
            let k = InputId(k as u64);
            b.kind = match b.kind {
                BufKind::Donated(_) => BufKind::Donated(k),
                _ => BufKind::Input(k),
            };
        }
    }
    let sched = Arc::new(sched);
    let (compiled, stats) = lazyfuse_runtime::exec::compile_using(&sched, math_mode()?, compiler)?;
    let compiled = Arc::new(compiled);
    let mut cache = SCHEDULES.lock().unwrap_or_else(|p| p.into_inner());
    if cache.entries.len() >= SCHEDULE_CACHE_CAPACITY {
        let mut uses: Vec<u64> = cache.entries.values().map(|(_, _, u)| *u).collect();
        uses.sort_unstable();
        let cutoff = uses[uses.len() / 2];
        cache.entries.retain(|_, (_, _, u)| *u > cutoff);
    }
    cache
        .entries
        .insert(key, (sched.clone(), compiled.clone(), now));
    Ok(Cached {
        schedule: sched,
        compiled,
        stats,
        inputs: renumbered,
        order: Some(order),
        scheduled: true,
    })
}

/// A text form of a loop kernel compiled with a math mode (`lazyfuse_runtime::exec`'s
/// `clif_text` and `asm_text`).
pub(crate) type KernelText =
    fn(&lazyfuse_ir::kernel::LoopKernel, MathMode) -> lazyfuse_runtime::Result<String>;

/// Prints the kernels (with the graph nodes each holds), each kernel's loop IR and
/// its Cranelift IR (for a CPU realize; `on_gpu`: its CUDA C); with
/// `LAZYFUSE_DUMP_IR=dot`, also writes the DOT picture.
fn dump_schedule(graph: &Graph, targets: &[NodeId], sched: &Schedule, on_gpu: bool) {
    eprintln!(
        "== lazyfuse: kernels ({} steps) ==\n{}",
        sched.kernel_count(),
        sched.text()
    );
    // The Cranelift IR, and with `LAZYFUSE_DUMP_IR=asm` the machine code too.
    let asm = std::env::var("LAZYFUSE_DUMP_IR").is_ok_and(|v| v == "asm");
    let stages: [(&str, KernelText); 2] = [
        ("Cranelift IR", lazyfuse_runtime::exec::clif_text),
        ("machine code", lazyfuse_runtime::exec::asm_text),
    ];
    let stages = &stages[..if asm { 2 } else { 1 }];
    for step in sched.steps.iter().filter(|_| !on_gpu) {
        if let Step::Loop(k) = step {
            for (what, text) in stages {
                match math_mode().and_then(|m| Ok(text(k, m)?)) {
                    Ok(t) => eprintln!("== lazyfuse: {what} of {} ==\n{t}", k.name),
                    Err(e) => eprintln!("== lazyfuse: {what} of {}: {e} ==", k.name),
                }
            }
        }
    }
    if on_gpu || std::env::var("LAZYFUSE_DUMP_IR").is_ok_and(|v| v == "cuda") {
        // The CUDA C the GPU backend generates for the same kernels (on CPU tensors a
        // preview; the device-independent prelude is `cuda::PRELUDE`).
        for step in &sched.steps {
            if let Step::Loop(k) = step {
                let math = math_mode().unwrap_or_default();
                match lazyfuse_codegen::cuda::kernel_source(k, math) {
                    Ok(src) => eprintln!("== lazyfuse: CUDA C of {} ==\n{}", k.name, src.function),
                    Err(e) => eprintln!("== lazyfuse: CUDA C of {}: {e} ==", k.name),
                }
            }
        }
    }
    if std::env::var("LAZYFUSE_DUMP_IR").is_ok_and(|v| v == "dot") {
        let dir = std::env::var("LAZYFUSE_DUMP_DIR").unwrap_or_else(|_| ".".into());
        let dot = lazyfuse_ir::dot::schedule_dot(graph, targets, sched);
        let path = std::path::Path::new(&dir).join(format!(
            "lazyfuse-{}-{}.dot",
            std::process::id(),
            DOT_COUNTER.fetch_add(1, Ordering::Relaxed)
        ));
        match std::fs::write(&path, dot) {
            Ok(()) => eprintln!("== lazyfuse: wrote {} ==", path.display()),
            Err(e) => eprintln!("== lazyfuse: could not write {}: {e} ==", path.display()),
        }
    }
}

static DOT_COUNTER: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
