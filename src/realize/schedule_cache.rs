//! The schedule cache: a graph's structure after the passes → its schedule and
//! compiled kernels, so that rebuilding and realizing the same computation
//! schedules nothing new (the realize cache answers most repeats before the
//! passes; this one answers the graphs it does not record, those whose schedule
//! donated a buffer, and graphs that the passes make equal).

use super::cache::{evict_half, structure_words, StructureKey};
use super::{dump::dump_schedule, schedule::schedule_of};
use crate::error::{Error, Result};
use crate::settings::Settings;
use lazyfuse_compile::KernelCompiler;
use lazyfuse_ir::kernel::{BufKind, Schedule};
use lazyfuse_ir::{Graph, InputId, NodeId};
use lazyfuse_runtime::exec::{CompiledSchedule, RunStats};
use std::collections::HashMap;
use std::hash::{Hash, Hasher};
use std::sync::{Arc, LazyLock, Mutex};

/// Most schedules the schedule cache keeps.
pub(super) const SCHEDULE_CACHE_CAPACITY: usize = 1024;

/// The schedule cache: graph structure → schedule, so that rebuilding and realizing
/// the same computation schedules nothing new. The key is the realize cache's
/// structural one ([`structure_words`]: ops, attributes, dtypes, shapes and edges
/// in topological order, input buffers numbered by first appearance, the targets)
/// after the settings the schedule depends on and the donated inputs' numbers; a
/// hit is only taken after the full comparison ([`StructureKey::matches`]). A
/// cached schedule names its input buffers by that number (`InputId(k)` is the
/// k-th input), and each realize maps its own buffers onto those numbers.
pub(super) static SCHEDULES: LazyLock<Mutex<ScheduleCache>> = LazyLock::new(|| {
    Mutex::new(ScheduleCache {
        entries: HashMap::new(),
        clock: 0,
    })
});

pub(super) struct ScheduleCache {
    /// by the key's hash; structures that the words do not tell apart (ops of
    /// one variant with other attributes, such as a reduction's axes) share a
    /// hash and sit side by side in its list
    entries: HashMap<u64, Vec<Entry>>,
    clock: u64,
}

struct Entry {
    key: StructureKey,
    schedule: Arc<Schedule>,
    compiled: Arc<CompiledSchedule>,
    last_use: u64,
}

/// A schedule from the cache, ready to run; `B` is what holds an input's elements
/// (a host buffer, or a device array).
pub(super) struct Cached<B> {
    pub(super) schedule: Arc<Schedule>,
    /// its loop kernels, compiled
    pub(super) compiled: Arc<CompiledSchedule>,
    /// what getting them took (compiles, kernel cache hits)
    pub(super) stats: RunStats,
    /// the input buffers, numbered as the schedule names them
    pub(super) inputs: HashMap<InputId, B>,
    /// the graph's inputs in the schedule's numbering order (`None`: a fresh
    /// schedule, which names the graph's inputs by their own ids)
    pub(super) order: Option<Vec<InputId>>,
    /// whether the graph was scheduled now (a schedule cache miss)
    pub(super) scheduled: bool,
}

/// What an executor runs for `graph`: with `dump`, a fresh schedule (so that the dump
/// names this graph's nodes) printed and compiled; otherwise the schedule cache's
/// ([`cached_schedule`]). A schedule made now is also compiled by NVRTC when the CUDA
/// compile check is on (under the emulation, this is what proves a device's kernels
/// compile for a GPU). `donated` names the inputs in-place writes may take.
pub(super) fn prepare<B: Clone>(
    graph: &Graph,
    targets: &[NodeId],
    buffers: &HashMap<InputId, B>,
    donated: &HashMap<InputId, B>,
    compiler: KernelCompiler,
    settings: &Settings,
) -> Result<Cached<B>> {
    let donate: Vec<InputId> = donated.keys().copied().collect();
    let prepared = if settings.dump {
        let sched = Arc::new(schedule_of(graph, targets, &donate, settings)?);
        dump_schedule(graph, targets, &sched, settings);
        let (compiled, stats) = lazyfuse_compile::compile_using(&sched, settings.math, compiler)?;
        Cached {
            schedule: sched,
            compiled: Arc::new(compiled),
            stats,
            inputs: buffers.clone(),
            order: None,
            scheduled: true,
        }
    } else {
        cached_schedule(graph, targets, buffers, &donate, compiler, settings)?
    };
    if prepared.scheduled && settings.cuda_check {
        crate::cuda_check::check(&prepared.schedule, settings.math)?;
    }
    Ok(prepared)
}

/// The schedule of `graph` and its compiled kernels from the cache (scheduling and
/// compiling on a miss), and the input buffers renumbered the way the cached
/// schedule names them.
pub(super) fn cached_schedule<B: Clone>(
    graph: &Graph,
    targets: &[NodeId],
    buffers: &HashMap<InputId, B>,
    donate: &[InputId],
    compiler: KernelCompiler,
    settings: &Settings,
) -> Result<Cached<B>> {
    let topo = graph.topo_order(targets);
    // The key's head: what besides the graph decides the schedule. Which inputs
    // are donated changes it (stores in place or a copy); they are named by
    // number once the words have numbered the inputs.
    let head = (settings.fuse, settings.math, compiler, settings.on_gpu());
    let (mut words, order) = structure_words(graph, &topo, targets, &head);
    let donated_at: Vec<usize> = order
        .iter()
        .enumerate()
        .filter(|(_, id)| donate.contains(id))
        .map(|(k, _)| k)
        .collect();
    donated_at.hash(&mut words);
    let hash = words.finish();
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
    let mut cache = SCHEDULES.lock().unwrap_or_else(|p| p.into_inner());
    cache.clock += 1;
    let now = cache.clock;
    let found = cache.entries.get_mut(&hash).and_then(|list| {
        list.iter_mut()
            .find(|e| e.key.matches(graph, &topo, &words))
    });
    if let Some(e) = found {
        e.last_use = now;
        let stats = RunStats {
            cache_hits: e.compiled.loop_kernels(),
            ..RunStats::default()
        };
        return Ok(Cached {
            schedule: e.schedule.clone(),
            compiled: e.compiled.clone(),
            stats,
            inputs: renumbered,
            order: Some(order),
            scheduled: false,
        });
    }
    drop(cache);
    let mut sched = schedule_of(graph, targets, donate, settings)?;
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
    let (compiled, stats) = lazyfuse_compile::compile_using(&sched, settings.math, compiler)?;
    let compiled = Arc::new(compiled);
    let mut cache = SCHEDULES.lock().unwrap_or_else(|p| p.into_inner());
    evict_half(&mut cache.entries, SCHEDULE_CACHE_CAPACITY, |e| e.last_use);
    // (another thread may have scheduled the same structure meanwhile: the
    // first entry stays)
    let list = cache.entries.entry(hash).or_default();
    if !list.iter().any(|e| e.key.matches(graph, &topo, &words)) {
        list.push(Entry {
            key: StructureKey::new(words, graph, &topo),
            schedule: sched.clone(),
            compiled: compiled.clone(),
            last_use: now,
        });
    }
    Ok(Cached {
        schedule: sched,
        compiled,
        stats,
        inputs: renumbered,
        order: Some(order),
        scheduled: true,
    })
}
