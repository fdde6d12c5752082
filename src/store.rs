//! The process-wide graph store: one lazy graph, the realized buffers its `input`
//! nodes name, and the storages that tensor handles share.
//!
//! Every tensor handle points at a [`Storage`]; a storage names the graph node whose
//! output is its current contents (its newest *version*: an in-place write makes a new
//! node and moves the storage to it). A storage pins its node; dropping the last
//! handle releases the pin. Releases are queued and applied the next time the store is
//! locked, so a `Drop` never has to take the store's lock (no re-entrancy, no
//! deadlock), and the graph stays bounded in a build-and-realize loop.

use crate::autograd::record::{differentiable, Custom, GradRecord, LeafCell, Records, Rule};
use crate::error::{Error, Result};
use crate::Device;
use lazyfuse_ir::{DType, Graph, InputId, Layout, NodeId, Op};
use lazyfuse_runtime::resident::DeviceArray;
use lazyfuse_runtime::Buffer;
use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, LazyLock, Mutex, MutexGuard, Weak};

/// The graph and the buffers of its input nodes.
///
/// # Devices
/// Every node has a device: the CPU unless [`Store::cuda_nodes`] names it. An input
/// node's device is where its buffer lives (`buffers` on the CPU, `device_arrays` on
/// a GPU); an op's node is on the device of its inputs (the ops check that they
/// agree, see `Tensor::align_devices`); a constant is on the CPU unless its op puts
/// it elsewhere ([`Store::set_device`], `full_like` of a CUDA tensor). A realize runs
/// on the device of the storage it realizes.
pub(crate) struct Store {
    pub(crate) graph: Graph,
    pub(crate) buffers: HashMap<InputId, Arc<Buffer>>,
    /// the buffers of input nodes on a CUDA device
    pub(crate) device_arrays: HashMap<InputId, Arc<DeviceArray>>,
    /// the nodes on a CUDA device, by ordinal (every other node is on the CPU); an
    /// entry is written when its node is added, so a reused node id never keeps a
    /// stale one
    cuda_nodes: HashMap<NodeId, usize>,
    next_input: u64,
    /// Inputs whose buffers a realize in flight took (donated, see [`Store::plan`]):
    /// a plan that reads one waits until that realize is installed or abandoned.
    in_flight: HashSet<InputId>,
    /// The gradient history of the nodes that require grad (see `autograd::record`).
    pub(crate) records: Records,
    /// Old versions of storages written in place while history existed: the
    /// storage and the version the node was (see `Store::move_storage`).
    pub(crate) overwritten: HashMap<NodeId, Overwrite>,
}

static STORE: LazyLock<Mutex<Store>> = LazyLock::new(|| {
    let mut graph = Graph::new();
    // records are keyed by node: they go when their node goes
    graph.log_removals();
    Mutex::new(Store {
        graph,
        buffers: HashMap::new(),
        device_arrays: HashMap::new(),
        cuda_nodes: HashMap::new(),
        next_input: 0,
        in_flight: HashSet::new(),
        records: Records::default(),
        overwritten: HashMap::new(),
    })
});

/// Pins released by dropped storages, applied at the next lock of the store.
static RELEASED: Mutex<Vec<NodeId>> = Mutex::new(Vec::new());

static NEXT_STORAGE: AtomicU64 = AtomicU64::new(0);

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // A panic while holding the lock cannot leave the graph half-edited in a way later
    // calls depend on (every edit is a complete node insertion), so poisoning is ignored.
    m.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// Runs `f` with the store locked, after applying queued releases.
pub(crate) fn with_store<R>(f: impl FnOnce(&mut Store) -> R) -> R {
    let mut store = lock(&STORE);
    let released = std::mem::take(&mut *lock(&RELEASED));
    for node in released {
        store.unpin(node);
    }
    f(&mut store)
}

/// Number of live graph nodes (after applying queued releases).
///
/// A diagnostic: a program that keeps no tensor alive between iterations sees this
/// stay bounded.
///
/// ```
/// let n = lazyfuse::live_graph_nodes();
/// assert!(n < usize::MAX);
/// ```
pub fn live_graph_nodes() -> usize {
    with_store(|s| s.graph.len())
}

/// Number of graph nodes whose gradient history autograd keeps (after applying
/// queued releases).
///
/// A diagnostic: a training loop that keeps no output of an earlier step alive sees
/// this stay bounded.
///
/// ```
/// use lazyfuse::{DType, Tensor};
/// let w = Tensor::ones(&[2], DType::F32).requires_grad_(true).unwrap();
/// let before = lazyfuse::live_grad_records();
/// let loss = w.mul(2.0).unwrap().sum(&[], false).unwrap();
/// assert!(lazyfuse::live_grad_records() > before);
/// drop(loss);
/// assert_eq!(lazyfuse::live_grad_records(), before);
/// ```
pub fn live_grad_records() -> usize {
    with_store(|s| s.records.len())
}

/// Number of realized buffers the store holds (host buffers and device arrays,
/// after applying queued releases).
///
/// A diagnostic: a loop that keeps no earlier result alive sees this stay bounded.
///
/// ```
/// use lazyfuse::Tensor;
/// let before = lazyfuse::live_buffers();
/// let t = Tensor::from_vec(vec![1.0f32, 2.0], &[2]).unwrap().mul(2.0).unwrap();
/// t.realize().unwrap();
/// assert!(lazyfuse::live_buffers() > before);
/// drop(t);
/// assert!(lazyfuse::live_buffers() <= before + 1);
/// ```
pub fn live_buffers() -> usize {
    with_store(|s| s.buffers.len() + s.device_arrays.len())
}

/// Whether `LAZYFUSE_DUMP_IR` (or [`set_dump_ir`]) asks for IR dumps.
static DUMP_IR: LazyLock<AtomicBool> = LazyLock::new(|| {
    AtomicBool::new(std::env::var_os("LAZYFUSE_DUMP_IR").is_some_and(|v| v != "0"))
});

/// Turns printing of the IR at every realize on or off (to standard error); the
/// environment variable `LAZYFUSE_DUMP_IR` sets the initial value.
///
/// ```
/// lazyfuse::set_dump_ir(true); // the next realize prints its graph to stderr
/// let t = lazyfuse::Tensor::scalar(2).mul(3).unwrap();
/// assert_eq!(t.to_vec::<i64>().unwrap(), vec![6]);
/// lazyfuse::set_dump_ir(false);
/// ```
pub fn set_dump_ir(on: bool) {
    DUMP_IR.store(on, Ordering::Relaxed);
}

pub(crate) fn dump_ir_enabled() -> bool {
    DUMP_IR.load(Ordering::Relaxed)
}

/// Whether `realize` runs the graph passes (`lazyfuse_ir::passes`) before executing;
/// `LAZYFUSE_PASSES=0` (or [`set_passes`]) turns them off.
static PASSES: LazyLock<AtomicBool> =
    LazyLock::new(|| AtomicBool::new(std::env::var_os("LAZYFUSE_PASSES").is_none_or(|v| v != "0")));

/// Turns the graph passes (dead-node removal, common-subexpression elimination,
/// removal of same-dtype casts, folding of view chains and of views of constants)
/// on or off for every realize from now on. They are on by default;
/// `LAZYFUSE_PASSES=0` sets the initial value to off. Turning them off is for
/// bisecting a wrong result: the values are the same either way.
///
/// ```
/// use lazyfuse::{DType, Tensor};
/// let x = Tensor::arange(0.0, 4.0, 1.0, DType::F32).unwrap();
/// lazyfuse::set_passes(false);
/// let off = x.exp().unwrap().add(&x.exp().unwrap()).unwrap().to_vec::<f32>().unwrap();
/// lazyfuse::set_passes(true);
/// let on = x.exp().unwrap().add(&x.exp().unwrap()).unwrap().to_vec::<f32>().unwrap();
/// assert_eq!(off, on);
/// ```
pub fn set_passes(on: bool) {
    PASSES.store(on, Ordering::Relaxed);
}

pub(crate) fn passes_enabled() -> bool {
    PASSES.load(Ordering::Relaxed)
}

/// Whether every recorded node is checked by the graph verifier: always in debug
/// builds; in release builds when `LAZYFUSE_VERIFY` is set or [`set_verify`] asks.
static VERIFY: LazyLock<AtomicBool> = LazyLock::new(|| {
    AtomicBool::new(
        cfg!(debug_assertions) || std::env::var_os("LAZYFUSE_VERIFY").is_some_and(|v| v != "0"),
    )
});

/// Turns the graph verifier on or off for every node recorded from now on (the test
/// suites turn it on in release builds). A node that breaks an invariant of
/// `lazyfuse_ir::graph` is a lazyfuse bug, reported by a panic naming the invariant.
///
/// ```
/// lazyfuse::set_verify(true);
/// let t = lazyfuse::Tensor::zeros(&[2], lazyfuse::DType::F32).exp().unwrap();
/// assert_eq!(t.numel(), 2);
/// ```
pub fn set_verify(on: bool) {
    VERIFY.store(on, Ordering::Relaxed);
}

impl Store {
    /// Adds a node (see [`Graph::add`]), with gradient history when its inputs have
    /// some (see `autograd::record`).
    pub(crate) fn add(
        &mut self,
        op: Op,
        dtype: DType,
        shape: Vec<usize>,
        inputs: &[NodeId],
    ) -> NodeId {
        self.add_node(op, dtype, shape, inputs, true)
    }

    /// Adds a node without gradient history, whatever its inputs have.
    pub(crate) fn add_unrecorded(
        &mut self,
        op: Op,
        dtype: DType,
        shape: Vec<usize>,
        inputs: &[NodeId],
    ) -> NodeId {
        self.add_node(op, dtype, shape, inputs, false)
    }

    fn add_node(
        &mut self,
        op: Op,
        dtype: DType,
        shape: Vec<usize>,
        inputs: &[NodeId],
        history: bool,
    ) -> NodeId {
        let id = self.graph.add(op, dtype, shape, inputs);
        // A CPU-only program never fills the table: nothing to look up.
        if !self.cuda_nodes.is_empty() {
            match inputs.iter().find_map(|i| self.cuda_nodes.get(i).copied()) {
                Some(ordinal) => self.cuda_nodes.insert(id, ordinal),
                None => self.cuda_nodes.remove(&id),
            };
        }
        if VERIFY.load(Ordering::Relaxed) {
            if let Err(broken) = self.graph.verify_node(id) {
                panic!("lazyfuse bug: the graph builder broke an invariant: {broken}");
            }
        }
        // Gradient history, in one place for every op (see `autograd::record`).
        if history
            && !self.records.is_empty()
            && differentiable(dtype)
            && inputs.iter().any(|&i| self.records.contains(i))
            && crate::autograd::is_grad_enabled()
        {
            let op = self.graph.node(id).op.clone();
            let sources = match op {
                Op::Binary(_) => self.promoted_sources(inputs),
                _ => Vec::new(),
            };
            self.record(id, Rule::Op(op), inputs.to_vec());
            if !sources.is_empty() {
                for &n in &sources {
                    self.graph.pin(n);
                }
                if let Some(r) = self.records.get_mut(id) {
                    r.sources = sources;
                }
            }
        }
        id
    }

    /// Records `node`'s history (replacing one it had), pinning its inputs.
    pub(crate) fn record(&mut self, node: NodeId, rule: Rule, inputs: Vec<NodeId>) {
        for &i in &inputs {
            self.graph.pin(i);
        }
        let record = GradRecord {
            rule,
            inputs,
            sources: Vec::new(),
            seq: crate::autograd::record::next_seq(),
        };
        if let Some(old) = self.records.insert(node, record) {
            for i in old.inputs.into_iter().chain(old.sources) {
                self.unpin(i);
            }
        }
    }

    /// The values a binary node's inputs had before a float-to-float promotion (a
    /// `cast`, or a broadcast `view` of one, which is read from the uncast value);
    /// empty when no input was promoted.
    fn promoted_sources(&mut self, inputs: &[NodeId]) -> Vec<NodeId> {
        let float = |d: DType| d.is_floating_point();
        let uncast = |g: &Graph, n: NodeId| -> Option<NodeId> {
            let node = g.node(n);
            match (&node.op, g.inputs(n)) {
                (Op::Cast, &[o]) if float(node.dtype) && float(g.node(o).dtype) => Some(o),
                _ => None,
            }
        };
        let mut sources = Vec::with_capacity(inputs.len());
        let mut any = false;
        for &i in inputs {
            let source = if let Some(o) = uncast(&self.graph, i) {
                Some(o)
            } else if let (Op::View(layout), &[c]) = (&self.graph.node(i).op, self.graph.inputs(i))
            {
                let layout = layout.clone();
                uncast(&self.graph, c).map(|o| {
                    let dtype = self.graph.node(o).dtype;
                    let shape = layout.shape.clone();
                    self.add_node(Op::View(layout), dtype, shape, &[o], false)
                })
            } else {
                None
            };
            any |= source.is_some();
            sources.push(source.unwrap_or(i));
        }
        if any {
            sources
        } else {
            Vec::new()
        }
    }

    /// Gives `node` the derivative of the API op that built it (see
    /// `autograd::rules::custom`), when it has history.
    pub(crate) fn custom_rule(&mut self, node: NodeId, custom: Custom, inputs: Vec<NodeId>) {
        if self.records.contains(node) {
            self.record(node, Rule::Custom(custom), inputs);
        }
    }

    /// A fresh identity view of `base` whose gradient goes to the leaf `cell`: one
    /// per read of a leaf, so that no two reads share a node (see
    /// `autograd::record`).
    pub(crate) fn leaf_anchor(&mut self, base: NodeId, cell: &Arc<LeafCell>) -> NodeId {
        let n = self.graph.node(base);
        let (dtype, shape) = (n.dtype, n.shape.clone());
        let layout = Layout::contiguous(&shape);
        let id = self.add_unrecorded(Op::View(layout), dtype, shape, &[base]);
        self.record(id, Rule::Leaf(Arc::clone(cell)), Vec::new());
        id
    }

    /// `base` cut from its gradient history: a fresh identity view without a record
    /// when `base` has one (a detached read), else `base` itself.
    pub(crate) fn cut_history(&mut self, base: NodeId) -> NodeId {
        if !self.records.contains(base) {
            return base;
        }
        let n = self.graph.node(base);
        let (dtype, shape) = (n.dtype, n.shape.clone());
        self.add_unrecorded(Op::View(Layout::contiguous(&shape)), dtype, shape, &[base])
    }

    /// Adds an input node holding `buffer`.
    pub(crate) fn add_input(&mut self, buffer: Buffer, shape: Vec<usize>) -> NodeId {
        let id = InputId(self.next_input);
        self.next_input += 1;
        let dtype = buffer.dtype();
        self.buffers.insert(id, Arc::new(buffer));
        let node = self.graph.add(Op::Input(id), dtype, shape, &[]);
        self.cuda_nodes.remove(&node);
        node
    }

    /// Adds an input node holding `array`, on its CUDA device.
    pub(crate) fn add_device_input(&mut self, array: DeviceArray, shape: Vec<usize>) -> NodeId {
        let id = InputId(self.next_input);
        self.next_input += 1;
        let (dtype, ordinal) = (array.dtype(), array.ordinal());
        self.device_arrays.insert(id, Arc::new(array));
        let node = self.graph.add(Op::Input(id), dtype, shape, &[]);
        self.cuda_nodes.insert(node, ordinal);
        node
    }

    /// The device of `node`'s output.
    pub(crate) fn device_of(&self, node: NodeId) -> Device {
        match self.cuda_nodes.get(&node) {
            Some(&ordinal) => Device::cuda(ordinal),
            None => Device::CPU,
        }
    }

    /// Puts a node on `device`: a constant an op makes for a tensor of that device.
    pub(crate) fn set_device(&mut self, node: NodeId, device: Device) {
        match device.ordinal() {
            Some(ordinal) => self.cuda_nodes.insert(node, ordinal),
            None => self.cuda_nodes.remove(&node),
        };
    }

    /// A node whose output is `layout` read from `node`'s output: `node` itself when
    /// the layout is the identity of the node's shape, else a `view` node.
    pub(crate) fn view_node(&mut self, node: NodeId, layout: &Layout) -> NodeId {
        let n = self.graph.node(node);
        if n.shape == layout.shape && layout.is_identity_of(n.numel()) {
            return node;
        }
        let dtype = n.dtype;
        self.add(
            Op::View(layout.clone()),
            dtype,
            layout.shape.clone(),
            &[node],
        )
    }

    /// A node converting `node` to `dtype` (the node itself when it has that dtype).
    pub(crate) fn cast_node(&mut self, node: NodeId, dtype: DType) -> NodeId {
        let n = self.graph.node(node);
        if n.dtype == dtype {
            return node;
        }
        let shape = n.shape.clone();
        self.add(Op::Cast, dtype, shape, &[node])
    }

    fn unpin(&mut self, node: NodeId) {
        let mut stack = vec![node];
        while let Some(n) = stack.pop() {
            for freed in self.graph.unpin(n) {
                self.free(freed);
            }
            self.drop_records(&mut stack);
        }
    }

    /// Drops the records of the nodes the graph collected, putting their pinned
    /// inputs on `stack` to unpin.
    fn drop_records(&mut self, stack: &mut Vec<NodeId>) {
        for gone in self.graph.take_removed() {
            self.overwritten.remove(&gone);
            if let Some(record) = self.records.remove(gone) {
                stack.extend(record.inputs);
                stack.extend(record.sources);
            }
        }
    }

    /// Drops the buffer of a collected input; large ones go back to the runtime's
    /// buffer cache (`lazyfuse_runtime::buffer_cache`) when nobody else holds them,
    /// so that the next realize of the same size reuses mapped memory.
    fn free(&mut self, id: InputId) {
        if let Some(buf) = self.buffers.remove(&id) {
            lazyfuse_runtime::buffer_cache::recycle(buf);
        }
        // A device array's memory goes back to its device's allocator when the last
        // holder drops it.
        self.device_arrays.remove(&id);
    }

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
    fn plan(&mut self, storages: &[&Storage], device: Device) -> Planned {
        let mut targets: Vec<NodeId> = Vec::with_capacity(storages.len());
        let mut seen = HashSet::with_capacity(storages.len());
        for storage in storages {
            let node = storage.node();
            if !matches!(self.graph.node(node).op, Op::Input(_)) && seen.insert(node) {
                targets.push(node);
            }
        }
        if targets.is_empty() {
            return Planned::Done;
        }
        let dump = dump_ir_enabled();
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
        // without the passes' copies (see `crate::realize_cache`). In-place writes
        // of part of a storage (donations depend on the store's state) and dumps
        // take the full path.
        let mut probe = None;
        if !dump
            && crate::realize_cache::enabled()
            && (device != Device::CPU
                || matches!(crate::backend::cpu_backend(), Ok(crate::CpuBackend::Jit)))
            && !order.iter().any(|&n| self.writes_in_place(n, &donatable))
        {
            if let Ok(flags) = crate::realize_cache::current_flags(device) {
                match crate::realize_cache::lookup(&self.graph, &order, &targets, flags) {
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
                                device,
                                arrays,
                                inputs,
                                donated: HashMap::new(),
                                donated_arrays: HashMap::new(),
                                donated_ids: Vec::new(),
                                dump,
                                cached: Cached::Hit(hit),
                            }));
                        }
                    }
                    Err(p) => probe = Some(p),
                }
            }
        }
        let (graph, copy_targets) = if passes_enabled() {
            // The passes make a copy holding what the targets need; its input nodes
            // name the same buffers, and its targets come back in the same order.
            let opt = lazyfuse_ir::passes::optimize_keeping(&self.graph, &targets, &donatable);
            if VERIFY.load(Ordering::Relaxed) {
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
            lazyfuse_ir::passes::remove_dead(&self.graph, &targets)
        };
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
            device,
            arrays,
            inputs,
            donated_ids: donated
                .keys()
                .chain(donated_arrays.keys())
                .copied()
                .collect(),
            donated,
            donated_arrays,
            dump,
            cached: match probe {
                Some(p) => Cached::Miss(p),
                None => Cached::Off,
            },
        }))
    }

    /// Whether `n` is a `write_view` that the realize may run in place (a donation
    /// then depends on the store's state, which the realize cache does not key):
    /// every one, except a write of a whole storage whose old version is a value
    /// that cannot be donated, which the graph passes fold into the written value.
    fn writes_in_place(&self, n: NodeId, donatable: &[InputId]) -> bool {
        let Op::WriteView(layout) = &self.graph.node(n).op else {
            return false;
        };
        let base = self.graph.node(self.graph.inputs(n)[0]);
        let whole = layout.shape == base.shape && layout.is_identity_of(base.numel());
        let folded = match base.op {
            Op::Input(id) => !donatable.contains(&id),
            Op::Full(_) => true,
            _ => false,
        };
        !(whole && folded && passes_enabled())
    }

    /// Checks that every buffer in `read` lives on `device` (a device array of its
    /// ordinal, or a host buffer for the CPU); a missing one is the executor's to
    /// report.
    fn check_devices(&self, read: &[InputId], device: Device) -> Result<()> {
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
    fn donations(&self, order: &[NodeId], targets: &[NodeId]) -> Vec<InputId> {
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
    fn install(&mut self, mut plan: Box<Plan>, outputs: Vec<Realized>) {
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
    fn abandon(&mut self, mut plan: Box<Plan>) {
        self.take_back(&mut plan);
        for t in plan.store_targets {
            self.unpin(t);
        }
    }

    /// Puts the plan's untouched donated buffers back and ends their flight.
    fn take_back(&mut self, plan: &mut Plan) {
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

    /// Points the storage at a new version node. While gradient history exists,
    /// the old version is remembered as overwritten (with the storage and the
    /// version it was), so that a backward needing it fails as PyTorch's does.
    pub(crate) fn move_storage(&mut self, storage: &Arc<Storage>, node: NodeId) {
        self.graph.pin(node);
        let old = std::mem::replace(&mut *lock(&storage.node), node);
        let version = storage.version.fetch_add(1, Ordering::Relaxed);
        let since = crate::autograd::record::end_write(storage.id);
        if !self.records.is_empty() {
            let overwrite = Overwrite {
                storage: Arc::downgrade(storage),
                version,
                since,
            };
            self.overwritten.insert(old, overwrite);
        }
        self.unpin(old);
    }

    /// The realized buffer behind a storage whose node is an input.
    pub(crate) fn buffer_of(&self, storage: &Storage) -> Option<Realized> {
        match self.graph.node(storage.node()).op {
            Op::Input(id) => self
                .buffers
                .get(&id)
                .cloned()
                .map(Realized::Host)
                .or_else(|| self.device_arrays.get(&id).cloned().map(Realized::Device)),
            _ => None,
        }
    }
}

/// An old version replaced by an in-place write while gradient history existed.
pub(crate) struct Overwrite {
    /// the storage written
    pub(crate) storage: Weak<Storage>,
    /// the version the old node was
    pub(crate) version: u64,
    /// the first record the writing op made (its own records read the old version
    /// legitimately, as PyTorch's in-place ops save their original input)
    pub(crate) since: u64,
}

/// A realized storage's elements: host memory, or a CUDA device's.
pub(crate) enum Realized {
    /// on the CPU
    Host(Arc<Buffer>),
    /// on a GPU
    Device(Arc<DeviceArray>),
}

/// Takes out of `map` the buffers of `ids` that the store holds alone (a reader
/// elsewhere, a plan in flight or a caller's `Arc`, keeps one shared and in the map),
/// marking them in flight: an in-place write may store into them.
fn take_donations<B>(
    map: &mut HashMap<InputId, Arc<B>>,
    in_flight: &mut HashSet<InputId>,
    ids: &[InputId],
) -> HashMap<InputId, Arc<B>> {
    let mut taken = HashMap::new();
    for &id in ids {
        if let Some(mut b) = map.remove(&id) {
            if Arc::get_mut(&mut b).is_some() {
                in_flight.insert(id);
                taken.insert(id, b);
            } else {
                map.insert(id, b);
            }
        }
    }
    taken
}

/// The buffers of `ids` that `map` holds, shared with the plan.
fn shared<B>(map: &HashMap<InputId, Arc<B>>, ids: &[InputId]) -> HashMap<InputId, Arc<B>> {
    ids.iter()
        .filter_map(|id| map.get(id).map(|b| (*id, b.clone())))
        .collect()
}

/// The buffers of `used` numbered as a cached schedule names them (`used[k]` is its
/// input `k`); `None` when one is missing.
fn renumbered<B>(
    map: &HashMap<InputId, Arc<B>>,
    used: &[InputId],
) -> Option<HashMap<InputId, Arc<B>>> {
    used.iter()
        .enumerate()
        .map(|(k, id)| map.get(id).map(|b| (InputId(k as u64), b.clone())))
        .collect()
}

/// A realize prepared under the store's lock and run outside it.
struct Plan {
    graph: Graph,
    targets: Vec<NodeId>,
    store_targets: Vec<NodeId>,
    /// where it runs: the device of the storage realized
    device: Device,
    /// the device arrays it reads (a realize on a CUDA device)
    arrays: HashMap<InputId, Arc<DeviceArray>>,
    /// the host buffers it reads (a realize on the CPU)
    inputs: HashMap<InputId, Arc<Buffer>>,
    /// buffers given up to in-place writes (the executor takes the ones it writes)
    donated: HashMap<InputId, Arc<Buffer>>,
    /// device arrays given up to in-place writes (a realize on a CUDA device)
    donated_arrays: HashMap<InputId, Arc<DeviceArray>>,
    /// every input donated, in flight until the plan is installed or abandoned
    donated_ids: Vec<InputId>,
    dump: bool,
    /// what the realize cache said
    cached: Cached,
}

/// The realize cache's part in a plan.
enum Cached {
    /// not used (dumps, in-place writes, the interpreter)
    Off,
    /// a structure seen before: run its schedule (`Plan::inputs` in its numbering)
    Hit(crate::realize_cache::Hit),
    /// a new structure: record what the realize ran
    Miss(crate::realize_cache::Probe),
}

/// What [`Store::plan`] found.
enum Planned {
    /// the storage's node is an input already
    Done,
    /// the realize reads a buffer another realize is writing in place: retry
    Busy,
    /// the graph reads buffers of another device than the one it runs on
    Failed(Error),
    /// run this
    Run(Box<Plan>),
}

/// Executes the storage's current node, unless it is an input already, and turns
/// it into an input node holding the result. The store is locked to plan (passes,
/// pins) and to install the results, not while kernels run: two threads realize at
/// once.
pub(crate) fn realize(storage: &Storage) -> Result<()> {
    realize_on(&[storage], storage.device)
}

/// Realizes several storages in one pass per device: one schedule computes the
/// work they share once and stores each of them.
pub(crate) fn realize_all(storages: &[&Storage]) -> Result<()> {
    let mut devices: Vec<Device> = Vec::new();
    for s in storages {
        if !devices.contains(&s.device) {
            devices.push(s.device);
        }
    }
    for device in devices {
        let group: Vec<&Storage> = storages
            .iter()
            .copied()
            .filter(|s| s.device == device)
            .collect();
        realize_on(&group, device)?;
    }
    Ok(())
}

/// Realizes `storages`, every one on `device`, in one plan.
fn realize_on(storages: &[&Storage], device: Device) -> Result<()> {
    let mut plan = loop {
        match with_store(|s| s.plan(storages, device)) {
            Planned::Done => return Ok(()),
            Planned::Failed(e) => return Err(e),
            Planned::Run(plan) => break plan,
            // Another thread writes an input of this realize in place; its install
            // makes that input's consumers read the new version (or gives the
            // buffer back), soon.
            Planned::Busy => std::thread::sleep(std::time::Duration::from_micros(50)),
        }
    };
    // A panic while running (a lazyfuse bug) must still release the plan's pins and
    // its in-flight marks, or other threads would wait on them forever.
    let host = |outs: Vec<Arc<Buffer>>| outs.into_iter().map(Realized::Host).collect::<Vec<_>>();
    let run = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        match (&plan.cached, plan.device.ordinal()) {
            (Cached::Hit(hit), None) => {
                crate::backend::execute_hit(&hit.schedule, &hit.compiled, &plan.inputs)
                    .map(|outs| (host(outs), None))
            }
            (Cached::Hit(hit), Some(ordinal)) => crate::backend::execute_hit_on_device(
                &hit.schedule,
                &hit.compiled,
                &plan.arrays,
                ordinal,
            )
            .map(|outs| (outs.into_iter().map(Realized::Device).collect(), None)),
            (_, Some(ordinal)) => crate::backend::execute_on_device(
                &plan.graph,
                &plan.arrays,
                &mut plan.donated_arrays,
                &plan.targets,
                ordinal,
                plan.dump,
            )
            .map(|(outs, ran)| (outs.into_iter().map(Realized::Device).collect(), ran)),
            (Cached::Off | Cached::Miss(_), None) => crate::backend::execute(
                &plan.graph,
                &plan.inputs,
                &mut plan.donated,
                &plan.targets,
                plan.dump,
            )
            .map(|(outs, ran)| (host(outs), ran)),
        }
    }));
    let run = match run {
        Ok(run) => run,
        Err(panic) => {
            with_store(|s| s.abandon(plan));
            std::panic::resume_unwind(panic);
        }
    };
    match run {
        Ok((outputs, ran)) => {
            if let (Some(ran), Cached::Miss(probe)) =
                (ran, std::mem::replace(&mut plan.cached, Cached::Off))
            {
                crate::realize_cache::insert(probe, ran);
            }
            with_store(|s| s.install(plan, outputs));
            Ok(())
        }
        Err(e) => {
            with_store(|s| s.abandon(plan));
            Err(e)
        }
    }
}

/// The realized buffer of a storage, in host memory: realizes it, then reads its
/// buffer (again, if another thread wrote a new version in between); a storage on a
/// CUDA device is copied to the host.
pub(crate) fn realized_buffer(storage: &Storage) -> Result<Arc<Buffer>> {
    loop {
        realize(storage)?;
        match with_store(|s| s.buffer_of(storage)) {
            Some(Realized::Host(b)) => return Ok(b),
            // Copied outside the store's lock: other threads build graphs meanwhile.
            Some(Realized::Device(a)) => return Ok(Arc::new(a.to_host()?)),
            None => {}
        }
    }
}

/// A storage: the memory that a tensor and all its views share. Its contents are the
/// output of one graph node, its current version.
pub(crate) struct Storage {
    /// Unique for the life of the process (aliasing checks compare it).
    pub(crate) id: u64,
    /// Number of elements.
    pub(crate) numel: usize,
    /// Where its buffer lives (every version on the same device).
    pub(crate) device: Device,
    /// In-place writes so far (PyTorch's version counter).
    pub(crate) version: AtomicU64,
    node: Mutex<NodeId>,
}

impl Storage {
    /// A storage whose contents are `node`'s output; pins the node.
    pub(crate) fn new(store: &mut Store, node: NodeId) -> Arc<Storage> {
        store.graph.pin(node);
        Arc::new(Storage {
            id: NEXT_STORAGE.fetch_add(1, Ordering::Relaxed),
            numel: store.graph.node(node).numel(),
            device: store.device_of(node),
            version: AtomicU64::new(0),
            node: Mutex::new(node),
        })
    }

    /// The current version's node. Read it only with the store locked: the store
    /// is what moves it.
    pub(crate) fn node(&self) -> NodeId {
        *lock(&self.node)
    }
}

impl Drop for Storage {
    fn drop(&mut self) {
        let node = *lock(&self.node);
        lock(&RELEASED).push(node);
    }
}
