//! Planning a realize under the store's lock: its targets, the realize cache's
//! lookup, the graph passes, the buffers it reads and the ones in-place writes may
//! take (donation); installing its results, or giving everything back.

use super::cache;
use super::cache::Flags;
use crate::error::{Error, Result};
use crate::settings::Settings;
use crate::store::{Realized, Storage, Store};
use crate::Device;
use lazyfuse_compile::KernelCompiler;
use lazyfuse_ir::passes::SplitPolicy;
use lazyfuse_ir::{Graph, InputId, NodeId, Op};
use lazyfuse_runtime::resident::DeviceArray;
use lazyfuse_runtime::Buffer;
use std::collections::{HashMap, HashSet};
use std::sync::Arc;

impl Store {
    /// What realizing `storages` takes ([`Planned::Done`] when each one's node is an
    /// input already): the graph copy to run (after the passes), its targets, the
    /// buffers it reads, and the store's target nodes, pinned until [`Store::install`]
    /// or [`Store::abandon`] so that no other thread's edit removes them meanwhile.
    ///
    /// The targets are the storages' current nodes and nothing else: an unrealized
    /// node that a live tensor still names is not stored as a side effect (it is
    /// computed when it is read, from the inputs its node keeps alive). Inside the
    /// realize, fusion alone decides what is materialized. Every storage is on
    /// `device` (the caller groups them).
    ///
    /// # In-place writes (donation)
    /// The plan takes out of the store the buffer of every old version that an
    /// in-place write (`write_view`) of this realize overwrites and that nobody needs
    /// afterwards ([`Store::donations`]), so that the write stores into that buffer
    /// instead of copying the whole storage. While the realize runs, such a buffer
    /// is *in flight*: another plan reading it gets [`Planned::Busy`] and retries.
    /// The scheduler may still refuse a donation (`schedule_donating`); then the
    /// buffer comes back untouched.
    pub(super) fn plan(&mut self, storages: &[&Storage], device: Device) -> Planned {
        let mut targets: Vec<NodeId> = Vec::with_capacity(storages.len());
        // (a set only for many storages: most realizes have one)
        let mut seen = HashSet::new();
        for storage in storages {
            let node = storage.node();
            let new = if storages.len() > 8 {
                seen.insert(node)
            } else {
                !targets.contains(&node)
            };
            if !matches!(self.graph.node(node).op, Op::Input(_)) && new {
                targets.push(node);
            }
        }
        if targets.is_empty() {
            return Planned::Done;
        }
        let settings = match Settings::current(device) {
            Ok(s) => s,
            Err(e) => return Planned::Failed(e),
        };
        let dump = settings.dump;
        if dump {
            eprintln!(
                "== lazyfuse: graph as built ==\n{}",
                self.graph.dump(&targets)
            );
        }
        let order = self.graph.topo_order(&targets);
        // The old versions an in-place write may store into (see `donations`):
        // known before the cache and the passes, which keep those writes.
        let writes = order
            .iter()
            .any(|&n| matches!(self.graph.node(n).op, Op::WriteView(_)));
        let donatable = if writes {
            self.donations(&order, &targets)
        } else {
            Vec::new()
        };
        // The realize cache: a structure realized before runs its recorded schedule
        // without the passes' copies (see `super::cache`; only schedules that
        // donated nothing are recorded, so a hit never writes in place). Dumps
        // take the full path.
        let mut probe = None;
        if !dump
            && settings.realize_cache
            && (settings.on_gpu() || settings.compiler == Some(KernelCompiler::Cranelift))
        {
            // what the full path could take now (`take_donations`)
            let takeable: Vec<InputId> = donatable
                .iter()
                .copied()
                .filter(|id| held_alone(&self.buffers, id) || held_alone(&self.device_arrays, id))
                .collect();
            match cache::lookup(
                &self.graph,
                &order,
                &targets,
                Flags::of(&settings),
                &takeable,
            ) {
                Ok(hit) => {
                    if hit.used.iter().any(|id| self.in_flight.contains(id)) {
                        return Planned::Busy;
                    }
                    let (inputs, arrays) = if device == Device::CPU {
                        (renumbered(&self.buffers, &hit.used), Some(HashMap::new()))
                    } else {
                        (
                            Some(HashMap::new()),
                            renumbered(&self.device_arrays, &hit.used),
                        )
                    };
                    // A missing buffer is the full path's error to report.
                    if let (Some(inputs), Some(arrays)) = (inputs, arrays) {
                        for &t in &targets {
                            self.graph.pin(t);
                        }
                        return Planned::Run(Box::new(Plan {
                            graph: Graph::new(),
                            targets: Vec::new(),
                            store_targets: targets,
                            settings,
                            arrays,
                            inputs,
                            donated: HashMap::new(),
                            donated_arrays: HashMap::new(),
                            donated_ids: Vec::new(),
                            cached: Cached::Hit(hit),
                        }));
                    }
                }
                Err(p) => probe = Some(p),
            }
        }
        // The graph passes, then the device's own (see `passes`).
        let (graph, copy_targets) = passes(&self.graph, &targets, &donatable, &settings);
        let read: Vec<InputId> = graph
            .topo_order(&copy_targets)
            .into_iter()
            .filter_map(|n| match graph.node(n).op {
                Op::Input(id) => Some(id),
                _ => None,
            })
            .collect();
        if read.iter().any(|id| self.in_flight.contains(id)) {
            return Planned::Busy;
        }
        // Every buffer the graph reads lives on its device (the ops moved zero-dim CPU
        // tensors there); a buffer of another device is the ops' mismatch error.
        if let Err(e) = self.check_devices(&read, device) {
            return Planned::Failed(e);
        }
        // In-place writes take the buffers nobody else needs (the donations).
        let donations: Vec<InputId> = donatable
            .into_iter()
            .filter(|id| read.contains(id))
            .collect();
        let (donated, inputs, donated_arrays, arrays) = match device.ordinal() {
            None => {
                let donated = take_donations(&mut self.buffers, &mut self.in_flight, &donations);
                let inputs = shared(&self.buffers, &read);
                (donated, inputs, HashMap::new(), HashMap::new())
            }
            Some(_) => {
                let donated =
                    take_donations(&mut self.device_arrays, &mut self.in_flight, &donations);
                let arrays = shared(&self.device_arrays, &read);
                (HashMap::new(), HashMap::new(), donated, arrays)
            }
        };
        for &t in &targets {
            self.graph.pin(t);
        }
        Planned::Run(Box::new(Plan {
            graph,
            targets: copy_targets,
            store_targets: targets,
            settings,
            arrays,
            inputs,
            donated_ids: donated
                .keys()
                .chain(donated_arrays.keys())
                .copied()
                .collect(),
            donated,
            donated_arrays,
            cached: match probe {
                Some(p) => Cached::Miss(p),
                None => Cached::Off,
            },
        }))
    }

    /// Checks that every buffer in `read` lives on `device` (a device array of its
    /// ordinal, or a host buffer for the CPU); a missing one is the executor's to
    /// report.
    pub(super) fn check_devices(&self, read: &[InputId], device: Device) -> Result<()> {
        for id in read {
            let found = match (self.buffers.contains_key(id), self.device_arrays.get(id)) {
                (true, _) => Device::CPU,
                (false, Some(a)) => Device::cuda(a.ordinal()),
                (false, None) => continue,
            };
            if found != device {
                return Err(Error::device_mismatch("realize", device, found));
            }
        }
        Ok(())
    }

    /// The old versions this realize (the nodes `order`, computing `targets`) may
    /// overwrite in place: the input nodes that are the base of a `write_view` of
    /// `order`, that no storage pins, and that nothing outside `order` reads,
    /// directly or through other nodes, except through a target (a target becomes
    /// an input of its own when the realize installs it, so what it read is not
    /// needed after). A pinned node on the way that is not a target still needs the
    /// old version after the realize (a live tensor computed from it, read later):
    /// no donation then. After the realize, nothing reaches a donated node: the
    /// graph collects it.
    pub(super) fn donations(&self, order: &[NodeId], targets: &[NodeId]) -> Vec<InputId> {
        let mut users: HashMap<NodeId, Vec<NodeId>> = HashMap::new();
        for &n in order {
            for &i in self.graph.inputs(n) {
                users.entry(i).or_default().push(n);
            }
        }
        let mut out = Vec::new();
        let target_set: HashSet<NodeId> = targets.iter().copied().collect();
        for &w in order {
            if !matches!(self.graph.node(w).op, Op::WriteView(_)) {
                continue;
            }
            let base = self.graph.inputs(w)[0];
            let Op::Input(id) = self.graph.node(base).op else {
                continue;
            };
            if self.graph.is_pinned(base) || out.contains(&id) {
                continue;
            }
            let mut stack = vec![base];
            let mut seen = HashSet::new();
            let mut closed = true;
            while let Some(m) = stack.pop() {
                if !seen.insert(m) {
                    continue;
                }
                let here = users.get(&m).map_or(&[][..], |u| &u[..]);
                if here.len() != self.graph.consumer_count(m)
                    || (m != base && self.graph.is_pinned(m) && !target_set.contains(&m))
                {
                    closed = false;
                    break;
                }
                stack.extend(here.iter().filter(|c| !target_set.contains(c)));
            }
            if closed {
                out.push(id);
            }
        }
        out
    }

    /// Turns each planned target that is not an input yet (another thread may have
    /// realized it meanwhile) into an input node holding its result, and releases
    /// the plan's pins.
    pub(super) fn install(&mut self, mut plan: Box<Plan>, outputs: Vec<Realized>) {
        // Donated buffers the schedule did not write go back first (the targets'
        // replacement below may collect their nodes, which frees them).
        self.take_back(&mut plan);
        // In any order: replacing a node releases its producers, but a target
        // installed later in this loop is pinned (by its storage and by the plan)
        // and stays.
        for (&target, buffer) in plan.store_targets.iter().zip(outputs) {
            if matches!(self.graph.node(target).op, Op::Input(_)) {
                continue;
            }
            let id = InputId(self.next_input);
            self.next_input += 1;
            match buffer {
                Realized::Host(b) => self.buffers.insert(id, b).map(drop),
                Realized::Device(a) => self.device_arrays.insert(id, a).map(drop),
            };
            for freed in self.graph.replace_with_input(target, id) {
                self.free(freed);
            }
            let mut released = Vec::new();
            self.drop_records(&mut released);
            for n in released {
                self.unpin(n);
            }
        }
        self.abandon(plan);
    }

    /// Releases a plan's pins (after installing it, or after it failed). A donated
    /// buffer that a failed realize had written is gone: its old version has no
    /// buffer any more, and a later realize that needs it is an `Err` rather than
    /// a read of half-written values (the scheduler donates only where nothing can
    /// fail after the first write, so this takes an allocation failure).
    pub(super) fn abandon(&mut self, mut plan: Box<Plan>) {
        self.take_back(&mut plan);
        for t in plan.store_targets {
            self.unpin(t);
        }
    }

    /// Puts the plan's untouched donated buffers back and ends their flight.
    pub(super) fn take_back(&mut self, plan: &mut Plan) {
        for (id, buf) in plan.donated.drain() {
            self.buffers.insert(id, buf);
        }
        for (id, a) in plan.donated_arrays.drain() {
            self.device_arrays.insert(id, a);
        }
        for id in plan.donated_ids.drain(..) {
            self.in_flight.remove(&id);
        }
    }
}

/// Takes out of `map` the buffers of `ids` that the store holds alone (a reader
/// elsewhere, a plan in flight or a caller's `Arc`, keeps one shared and in the map),
/// marking them in flight: an in-place write may store into them.
pub(super) fn take_donations<B>(
    map: &mut HashMap<InputId, Arc<B>>,
    in_flight: &mut HashSet<InputId>,
    ids: &[InputId],
) -> HashMap<InputId, Arc<B>> {
    let mut taken = HashMap::new();
    for &id in ids {
        if held_alone(map, &id) {
            if let Some(b) = map.remove(&id) {
                in_flight.insert(id);
                taken.insert(id, b);
            }
        }
    }
    taken
}

/// Whether `map` holds the buffer of `id` and nobody else does (no other `Arc`,
/// strong or weak): what an in-place write may take.
fn held_alone<B>(map: &HashMap<InputId, Arc<B>>, id: &InputId) -> bool {
    map.get(id)
        .is_some_and(|b| Arc::strong_count(b) == 1 && Arc::weak_count(b) == 0)
}

/// The buffers of `ids` that `map` holds, shared with the plan.
pub(super) fn shared<B>(
    map: &HashMap<InputId, Arc<B>>,
    ids: &[InputId],
) -> HashMap<InputId, Arc<B>> {
    ids.iter()
        .filter_map(|id| map.get(id).map(|b| (*id, b.clone())))
        .collect()
}

/// The buffers of `used` numbered as a cached schedule names them (`used[k]` is its
/// input `k`); `None` when one is missing.
pub(super) fn renumbered<B>(
    map: &HashMap<InputId, Arc<B>>,
    used: &[InputId],
) -> Option<HashMap<InputId, Arc<B>>> {
    let mut out = HashMap::with_capacity(used.len());
    for (k, id) in used.iter().enumerate() {
        out.insert(InputId(k as u64), map.get(id)?.clone());
    }
    Some(out)
}

/// A realize prepared under the store's lock and run outside it.
pub(super) struct Plan {
    pub(super) graph: Graph,
    pub(super) targets: Vec<NodeId>,
    pub(super) store_targets: Vec<NodeId>,
    /// what it runs with, `device` included (the device of the storages realized)
    pub(super) settings: Settings,
    /// the device arrays it reads (a realize on a CUDA device)
    pub(super) arrays: HashMap<InputId, Arc<DeviceArray>>,
    /// the host buffers it reads (a realize on the CPU)
    pub(super) inputs: HashMap<InputId, Arc<Buffer>>,
    /// buffers given up to in-place writes (the executor takes the ones it writes)
    pub(super) donated: HashMap<InputId, Arc<Buffer>>,
    /// device arrays given up to in-place writes (a realize on a CUDA device)
    pub(super) donated_arrays: HashMap<InputId, Arc<DeviceArray>>,
    /// every input donated, in flight until the plan is installed or abandoned
    pub(super) donated_ids: Vec<InputId>,
    /// what the realize cache said
    pub(super) cached: Cached,
}

/// The realize cache's part in a plan.
pub(super) enum Cached {
    /// not used (dumps, in-place writes, the interpreter)
    Off,
    /// a structure seen before: run its schedule (`Plan::inputs` in its numbering)
    Hit(cache::Hit),
    /// a new structure: record what the realize ran
    Miss(cache::Probe),
}

/// What [`Store::plan`] found.
pub(super) enum Planned {
    /// the storage's node is an input already
    Done,
    /// the realize reads a buffer another realize is writing in place: retry
    Busy,
    /// the graph reads buffers of another device than the one it runs on, or a
    /// setting is malformed (`Settings::current`)
    Failed(Error),
    /// run this
    Run(Box<Plan>),
}

/// The passes stage: a copy of what `targets` need, through the graph passes
/// (`lazyfuse_ir::passes::optimize_keeping`, keeping the `write_view`s of the
/// `donatable` inputs) unless the settings turn them off (then dead nodes alone go),
/// then through the device's own pass (long reductions with few outputs split,
/// `passes::split_reductions`, with the GPU's or the CPU JIT's policy; a GPU's
/// schedule needs it whether or not the graph passes run). Input nodes name the
/// same buffers; the targets come back in the same order. Prints each graph when
/// the settings ask for dumps.
pub(crate) fn passes(
    graph: &Graph,
    targets: &[NodeId],
    donatable: &[InputId],
    settings: &Settings,
) -> (Graph, Vec<NodeId>) {
    let dump = settings.dump;
    let (graph, targets) = if settings.passes {
        let opt = lazyfuse_ir::passes::optimize_keeping(graph, targets, donatable);
        if settings.verify {
            if let Err(broken) = opt.graph.verify() {
                panic!("lazyfuse bug: a graph pass broke an invariant: {broken}");
            }
        }
        if dump {
            eprintln!(
                "== lazyfuse: graph after passes ({}) ==\n{}",
                opt.report,
                opt.graph.dump(&opt.targets)
            );
        }
        (opt.graph, opt.targets)
    } else {
        if dump {
            eprintln!("== lazyfuse: graph after passes (passes off: unchanged) ==");
        }
        lazyfuse_ir::passes::remove_dead(graph, targets)
    };
    // Few outputs over a long extent would leave most of a GPU, or all but one of
    // a CPU's threads, idle: split them. The interpreter runs node by node, in the
    // graph's own order.
    let policy = if settings.on_gpu() {
        SplitPolicy::GPU
    } else if settings.compiler.is_some() {
        SplitPolicy::CPU
    } else {
        return (graph, targets);
    };
    let (graph, targets, split) =
        lazyfuse_ir::passes::split_reductions(&graph, &targets, settings.math, policy);
    if dump && split > 0 {
        eprintln!(
            "== lazyfuse: graph after the device pass ({split} reductions split) ==\n{}",
            graph.dump(&targets)
        );
    }
    (graph, targets)
}
