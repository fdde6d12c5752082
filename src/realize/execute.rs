//! The compile and run stages: [`execute`] (the schedule and its compiled kernels
//! through the caches, then the run) in host memory (the JIT, CUDA C built for the
//! host, NVRTC kernels with copied buffers) or in a device's resident arrays, both
//! behind [`Memory`]; a realize cache hit's recorded schedule ([`execute_hit`]); or
//! the reference interpreter ([`interpret`]).

use super::{
    cache::Ran,
    schedule_cache::{prepare, Cached},
    stats::report,
};
use crate::error::Result;
use crate::settings::Settings;
use crate::store::Realized;
use lazyfuse_compile::KernelCompiler;
use lazyfuse_ir::kernel::Schedule;
use lazyfuse_ir::{Graph, InputId, NodeId};
use lazyfuse_runtime::exec::{CompiledSchedule, RunStats};
use lazyfuse_runtime::resident::{self, DeviceArray};
use lazyfuse_runtime::Buffer;
use std::collections::HashMap;
use std::sync::Arc;
use std::time::Instant;

/// A run's outputs as the store keeps them, and what the realize cache records of
/// it (`None`: nothing).
pub(crate) type Executed = (Vec<Realized>, Option<Ran>);

/// Where a realize's values live, and what runs a compiled schedule there: host
/// buffers (`lazyfuse_runtime::exec`, every CPU backend that compiles) or a GPU's
/// resident arrays (`lazyfuse_runtime::resident`). The stages above the run are the
/// same for both.
pub(crate) trait Memory {
    /// One input's or output's elements.
    type Array;

    /// Runs `schedule`'s steps on `inputs` (numbered the way the schedule names
    /// them); in-place writes take the `donated` arrays the schedule donates and
    /// leave the others in the map. `stats` holds what compiling took.
    fn run(
        &self,
        schedule: &Schedule,
        compiled: &CompiledSchedule,
        inputs: &HashMap<InputId, Arc<Self::Array>>,
        donated: &mut HashMap<InputId, Arc<Self::Array>>,
        stats: RunStats,
    ) -> Result<(Vec<Arc<Self::Array>>, RunStats)>;

    /// An output as the store keeps it.
    fn realized(array: Arc<Self::Array>) -> Realized;
}

/// Host memory: the CPU executor runs the schedule.
pub(crate) struct Host;

impl Memory for Host {
    type Array = Buffer;

    fn run(
        &self,
        schedule: &Schedule,
        compiled: &CompiledSchedule,
        inputs: &HashMap<InputId, Arc<Buffer>>,
        donated: &mut HashMap<InputId, Arc<Buffer>>,
        stats: RunStats,
    ) -> Result<(Vec<Arc<Buffer>>, RunStats)> {
        Ok(lazyfuse_runtime::exec::run_compiled(
            schedule, compiled, inputs, donated, stats,
        )?)
    }

    fn realized(array: Arc<Buffer>) -> Realized {
        Realized::Host(array)
    }
}

/// The memory of `cuda:N`: the device executor launches the schedule there.
pub(crate) struct OnDevice(pub(crate) usize);

impl Memory for OnDevice {
    type Array = DeviceArray;

    fn run(
        &self,
        schedule: &Schedule,
        compiled: &CompiledSchedule,
        inputs: &HashMap<InputId, Arc<DeviceArray>>,
        donated: &mut HashMap<InputId, Arc<DeviceArray>>,
        stats: RunStats,
    ) -> Result<(Vec<Arc<DeviceArray>>, RunStats)> {
        Ok(resident::run(
            schedule, compiled, self.0, inputs, donated, stats,
        )?)
    }

    fn realized(array: Arc<DeviceArray>) -> Realized {
        Realized::Device(array)
    }
}

/// Schedule → compile → run of the (already optimized) `graph` for `targets` in
/// `memory`, the loop kernels compiled by `compiler`. The schedule and its kernels
/// come from the schedule cache (or are made now and cached; a dump makes and
/// prints a fresh one). Also hands back what the realize cache records, when the
/// schedule came through the schedule cache.
///
/// `donated` holds input arrays the store gave up (see `Store::plan`): in-place
/// writes store into those the schedule donates (`BufKind::Donated`); on an error,
/// the ones no step wrote are back in the map.
pub(crate) fn execute<M: Memory>(
    memory: &M,
    compiler: KernelCompiler,
    graph: &Graph,
    inputs: &HashMap<InputId, Arc<M::Array>>,
    donated: &mut HashMap<InputId, Arc<M::Array>>,
    targets: &[NodeId],
    settings: &Settings,
) -> Result<Executed> {
    let t0 = Instant::now();
    // Schedule and compile (through the schedule cache and the kernel cache).
    let Cached {
        schedule,
        compiled,
        stats,
        inputs,
        order,
        scheduled,
    } = prepare(graph, targets, inputs, donated, compiler, settings)?;
    let schedule_time = t0.elapsed();
    // Run, the donated arrays numbered as the schedule names its inputs.
    let stats = RunStats {
        timed: settings.debug >= 1,
        ..stats
    };
    let (outs, stats) = with_renumbered(order.as_deref(), donated, |donated| {
        memory.run(&schedule, &compiled, &inputs, donated, stats)
    })?;
    report(
        &stats,
        &schedule,
        schedule_time,
        scheduled,
        false,
        settings.debug,
    );
    // What the realize cache records (a donating realize never reaches it).
    let ran = order.map(|order| Ran {
        schedule,
        compiled,
        order,
    });
    Ok((outs.into_iter().map(M::realized).collect(), ran))
}

/// Runs a schedule the realize cache had (see `super::cache`) in `memory`: `inputs`
/// are numbered the way the schedule names them; nothing is donated.
pub(crate) fn execute_hit<M: Memory>(
    memory: &M,
    schedule: &Schedule,
    compiled: &CompiledSchedule,
    inputs: &HashMap<InputId, Arc<M::Array>>,
    settings: &Settings,
) -> Result<Vec<Realized>> {
    let stats = RunStats {
        cache_hits: compiled.loop_kernels(),
        timed: settings.debug >= 1,
        ..RunStats::default()
    };
    let (outs, stats) = memory.run(schedule, compiled, inputs, &mut HashMap::new(), stats)?;
    report(
        &stats,
        schedule,
        std::time::Duration::ZERO,
        false,
        true,
        settings.debug,
    );
    Ok(outs.into_iter().map(M::realized).collect())
}

/// The reference interpreter's run of the (already optimized) `graph` for
/// `targets`, one node at a time (the CPU backend `interp`). It never writes its
/// inputs: the `donated` buffers are only read, and stay in the map for the store
/// to take back.
pub(crate) fn interpret(
    graph: &Graph,
    buffers: &HashMap<InputId, Arc<Buffer>>,
    donated: &HashMap<InputId, Arc<Buffer>>,
    targets: &[NodeId],
    settings: &Settings,
) -> Result<Vec<Arc<Buffer>>> {
    if settings.dump {
        eprintln!("== lazyfuse: kernels: none (reference interpreter, one node at a time) ==");
    }
    let t0 = Instant::now();
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
    Ok(out)
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
