//! Running a planned graph: the interpreter, or schedule → compile → run on the
//! host (the JIT, CUDA C built for the host, NVRTC kernels with copied buffers) or on
//! a device's resident arrays, and a realize cache hit's recorded schedule.

use super::{
    cache::Ran,
    schedule_cache::{prepare, Cached},
    stats::report,
};
use crate::error::{Error, Result};
use crate::settings::Settings;
use lazyfuse_ir::kernel::{MathMode, Schedule};
use lazyfuse_ir::schedule::{schedule_donating, ScheduleOptions};
use lazyfuse_ir::{Graph, InputId, NodeId};
use lazyfuse_runtime::exec::{CompiledSchedule, RunStats};
use lazyfuse_runtime::resident::{self, DeviceArray};
use lazyfuse_runtime::Buffer;
use std::collections::HashMap;
use std::sync::Arc;
use std::time::Instant;

/// The schedule stage: the schedule of `graph` (after the passes stage,
/// [`super::passes`]) for `targets` with the settings' fusion and math mode;
/// in-place writes may store into the buffers of the inputs `donate`. On a GPU,
/// matmul is a generated kernel (or cuBLAS) rather than an extern step on the host.
pub(crate) fn schedule_of(
    graph: &Graph,
    targets: &[NodeId],
    donate: &[InputId],
    settings: &Settings,
) -> Result<Schedule> {
    let on_gpu = settings.on_gpu();
    let opts = ScheduleOptions {
        fuse: settings.fuse,
        math: settings.math,
        matmul_kernels: on_gpu,
        // cuBLAS reorders the sum: fast math only, and a real GPU only.
        library_float_matmul: on_gpu && settings.math == MathMode::Fast && cublas_usable(settings),
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
    settings: &Settings,
) -> Result<(Vec<Arc<Buffer>>, Option<Ran>)> {
    match settings.compiler {
        None => {
            if settings.dump {
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
            if settings.debug >= 1 {
                eprintln!(
                    "realize: {} kernels (0 compiled, 0 cache hits), compile 0.000 ms, run {:.3} ms",
                    graph.topo_order(targets).len(),
                    t0.elapsed().as_secs_f64() * 1e3
                );
            }
            Ok((out, None))
        }
        Some(compiler) => {
            let t0 = Instant::now();
            let Cached {
                schedule: sched,
                compiled,
                stats: compile_stats,
                inputs,
                order: back,
                scheduled,
            } = prepare(graph, targets, buffers, donated, compiler, settings)?;
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
            report(
                &stats,
                &sched,
                schedule_time,
                scheduled,
                false,
                settings.debug,
            );
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
pub(super) fn cublas_usable(settings: &Settings) -> bool {
    if settings.emulated {
        return false;
    }
    match lazyfuse_runtime::cuda::blas::cublas_version() {
        Ok(_) => true,
        Err(why) => {
            static SAID: std::sync::Once = std::sync::Once::new();
            if settings.debug >= 1 {
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
/// ([`lazyfuse_runtime::resident`]). A dump prints the kernels and their CUDA C.
pub(crate) fn execute_on_device(
    graph: &Graph,
    arrays: &HashMap<InputId, Arc<DeviceArray>>,
    donated: &mut HashMap<InputId, Arc<DeviceArray>>,
    targets: &[NodeId],
    ordinal: usize,
    settings: &Settings,
) -> Result<(Vec<Arc<DeviceArray>>, Option<Ran>)> {
    let t0 = Instant::now();
    let compiler = settings
        .compiler
        .unwrap_or_else(|| resident::kernel_compiler(ordinal));
    let Cached {
        schedule: sched,
        compiled,
        stats,
        inputs,
        order,
        scheduled,
    } = prepare(graph, targets, arrays, donated, compiler, settings)?;
    let schedule_time = t0.elapsed();
    let ran = with_renumbered(order.as_deref(), donated, |donated| {
        resident::run(&sched, &compiled, ordinal, &inputs, donated, stats)
    });
    let (outs, stats) = ran?;
    report(
        &stats,
        &sched,
        schedule_time,
        scheduled,
        false,
        settings.debug,
    );
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
    settings: &Settings,
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
    report(
        &stats,
        schedule,
        std::time::Duration::ZERO,
        false,
        true,
        settings.debug,
    );
    Ok(outs)
}

/// Runs `run` on the donated buffers numbered the way a cached schedule names its
/// inputs (by first appearance: `order`, `None` for a fresh schedule that uses the
/// graph's own ids); the ones it leaves (or hands back) return under their own ids.
pub(super) fn with_renumbered<B, R>(
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

/// Runs a schedule the realize cache had (see `super::cache`): `inputs` are
/// numbered the way the schedule names them; nothing is donated.
pub(crate) fn execute_hit(
    schedule: &Schedule,
    compiled: &CompiledSchedule,
    inputs: &HashMap<InputId, Arc<Buffer>>,
    settings: &Settings,
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
    report(
        &stats,
        schedule,
        std::time::Duration::ZERO,
        false,
        true,
        settings.debug,
    );
    Ok(outs)
}
