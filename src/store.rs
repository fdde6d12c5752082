//! The process-wide graph store: one lazy graph, the realized buffers its `input`
//! nodes name, and the storages that tensor handles share.
//!
//! Every tensor handle points at a [`Storage`]; a storage names the graph node whose
//! output is its current contents (its newest *version*: an in-place write makes a new
//! node and moves the storage to it). A storage pins its node; dropping the last
//! handle releases the pin: at once where the store's lock is free (a `try_lock`, which
//! never waits), else queued and applied the next time the store is locked. So a `Drop`
//! never waits for the store's lock (a handle dropped inside `with_store` cannot
//! deadlock, nor one dropped while another thread plans), and the graph stays bounded
//! in a build-and-realize loop.

use crate::autograd::record::{differentiable, Custom, GradRecord, LeafCell, Records, Rule};
use crate::constant_pool::ConstantPool;
use crate::settings::VERIFY;
use crate::Device;
use lazyfuse_ir::shape::same_shape;
use lazyfuse_ir::{DType, Graph, InputId, Layout, NodeId, Op};
use lazyfuse_runtime::resident::DeviceArray;
use lazyfuse_runtime::Buffer;
use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, LazyLock, Mutex, MutexGuard, TryLockError, Weak};

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
    pub(crate) cuda_nodes: HashMap<NodeId, usize>,
    pub(crate) next_input: u64,
    /// Inputs whose buffers a realize in flight took (donated, see [`Store::plan`]):
    /// a plan that reads one waits until that realize is installed or abandoned.
    pub(crate) in_flight: HashSet<InputId>,
    /// The gradient history of the nodes that require grad (see `autograd::record`).
    pub(crate) records: Records,
    /// Old versions of storages written in place while history existed: the
    /// storage and the version the node was (see `Store::move_storage`).
    pub(crate) overwritten: HashMap<NodeId, Overwrite>,
    /// An empty vector that [`with_store`] trades for the queue of released pins.
    pub(crate) spare_released: Vec<NodeId>,
    /// The constant nodes of host-scalar operands, kept for reuse (see
    /// `constant_pool`).
    pub(crate) constants: ConstantPool,
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
        spare_released: Vec::new(),
        constants: ConstantPool::default(),
    })
});

/// Pins released by dropped storages, applied at the next lock of the store.
static RELEASED: Mutex<Vec<NodeId>> = Mutex::new(Vec::new());

/// Whether [`RELEASED`] may hold pins: set after a push, cleared by the
/// [`with_store`] that takes them. Recording an op locks the store; without
/// this it locked the queue too, two more atomic operations per op where
/// nothing was dropped. A push that lands after the clearing sets it again,
/// one that lands between the clearing and the take is taken early: none is
/// left behind.
static RELEASES_QUEUED: AtomicBool = AtomicBool::new(false);

static NEXT_STORAGE: AtomicU64 = AtomicU64::new(0);

/// Storage ids a thread takes from [`NEXT_STORAGE`] at once.
const ID_BLOCK: u64 = 1024;

thread_local! {
    /// This thread's next storage id and the end of its block: every op makes a
    /// storage, and a shared counter's increment is an atomic operation each.
    static STORAGE_IDS: std::cell::Cell<(u64, u64)> = const { std::cell::Cell::new((0, 0)) };
}

/// A storage id no other storage of the process has.
fn next_storage_id() -> u64 {
    STORAGE_IDS.with(|ids| {
        let (mut next, mut end) = ids.get();
        if next == end {
            next = NEXT_STORAGE.fetch_add(ID_BLOCK, Ordering::Relaxed);
            end = next + ID_BLOCK;
        }
        ids.set((next + 1, end));
        next
    })
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // A panic while holding the lock cannot leave the graph half-edited in a way later
    // calls depend on (every edit is a complete node insertion), so poisoning is ignored.
    m.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// Runs `f` with the store locked, after applying queued releases.
pub(crate) fn with_store<R>(f: impl FnOnce(&mut Store) -> R) -> R {
    let mut store = lock(&STORE);
    // The queue and the store's spare vector trade places, so neither is
    // allocated again once both have grown.
    // (a plain load first: the exchange is an atomic operation of its own)
    if RELEASES_QUEUED.load(Ordering::Acquire) && RELEASES_QUEUED.swap(false, Ordering::Acquire) {
        let mut released = std::mem::take(&mut store.spare_released);
        std::mem::swap(&mut released, &mut *lock(&RELEASED));
        for node in released.drain(..) {
            store.unpin(node);
        }
        store.spare_released = released;
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

impl Store {
    /// Adds a node (see [`Graph::add`]), with gradient history when its inputs have
    /// some (see `autograd::record`).
    pub(crate) fn add(
        &mut self,
        op: Op,
        dtype: DType,
        shape: impl AsRef<[usize]>,
        inputs: &[NodeId],
    ) -> NodeId {
        self.add_node(op, dtype, shape, inputs, true)
    }

    /// Adds a node without gradient history, whatever its inputs have.
    pub(crate) fn add_unrecorded(
        &mut self,
        op: Op,
        dtype: DType,
        shape: impl AsRef<[usize]>,
        inputs: &[NodeId],
    ) -> NodeId {
        self.add_node(op, dtype, shape, inputs, false)
    }

    fn add_node(
        &mut self,
        op: Op,
        dtype: DType,
        shape: impl AsRef<[usize]>,
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
                    self.add_node(Op::View(layout), dtype, &shape, &[o], false)
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
        let id = self.add_unrecorded(Op::view(layout), dtype, &shape, &[base]);
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
        self.add_unrecorded(Op::view(Layout::contiguous(&shape)), dtype, &shape, &[base])
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
        // (equal shapes hold equal counts: the identity is then offset 0 and
        // row-major strides, with no count to take)
        if same_shape(&n.shape, &layout.shape) && layout.offset == 0 && layout.is_contiguous() {
            return node;
        }
        let dtype = n.dtype;
        self.add(Op::view(layout.clone()), dtype, &layout.shape, &[node])
    }

    /// A node converting `node` to `dtype` (the node itself when it has that dtype).
    pub(crate) fn cast_node(&mut self, node: NodeId, dtype: DType) -> NodeId {
        let n = self.graph.node(node);
        if n.dtype == dtype {
            return node;
        }
        let shape = n.shape.clone();
        self.add(Op::Cast, dtype, &shape, &[node])
    }

    pub(crate) fn unpin(&mut self, node: NodeId) {
        // (the stack grows only where collected records release more pins)
        let mut stack = Vec::new();
        let mut next = Some(node);
        while let Some(n) = next.take().or_else(|| stack.pop()) {
            for freed in self.graph.unpin(n) {
                self.free(freed);
            }
            self.drop_records(&mut stack);
        }
    }

    /// Drops the records of the nodes the graph collected, putting their pinned
    /// inputs on `stack` to unpin.
    pub(crate) fn drop_records(&mut self, stack: &mut Vec<NodeId>) {
        // (without gradient history nothing is kept by node: the log is only
        // emptied, not read)
        if self.records.is_empty() && self.overwritten.is_empty() {
            self.graph.forget_removed();
            return;
        }
        for gone in self.graph.drain_removed() {
            // (nothing is overwritten without gradient history: skip the hashing)
            if !self.overwritten.is_empty() {
                self.overwritten.remove(&gone);
            }
            if let Some(record) = self.records.remove(gone) {
                stack.extend(record.inputs);
                stack.extend(record.sources);
            }
        }
    }

    /// Drops the buffer of a collected input; large ones go back to the runtime's
    /// buffer cache (`lazyfuse_runtime::buffer_cache`) when nobody else holds them,
    /// so that the next realize of the same size reuses mapped memory.
    pub(crate) fn free(&mut self, id: InputId) {
        if let Some(buf) = self.buffers.remove(&id) {
            lazyfuse_runtime::buffer_cache::recycle(buf);
        }
        // A device array's memory goes back to its device's allocator when the last
        // holder drops it.
        self.device_arrays.remove(&id);
    }

    /// Points the storage at a new version node. While gradient history exists,
    /// the old version is remembered as overwritten (with the storage and the
    /// version it was), so that a backward needing it fails as PyTorch's does.
    pub(crate) fn move_storage(&mut self, storage: &Arc<Storage>, node: NodeId) {
        self.graph.pin(node);
        let old = word_node(storage.node.swap(node_word(node), Ordering::Relaxed));
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
    /// The current version's node ([`NodeId::index`]): moved only with the
    /// store locked, read with it locked, so a plain atomic word suffices (a
    /// lock per read cost two atomic operations on every op's operands).
    node: AtomicU32,
}

/// A node's index as a storage keeps it (lossless: graph indices are `u32`).
fn node_word(node: NodeId) -> u32 {
    node.index() as u32
}

/// The node a storage's word names (see [`node_word`]).
fn word_node(word: u32) -> NodeId {
    NodeId::from_index(word as usize)
}

impl Storage {
    /// A storage whose contents are `node`'s output; pins the node.
    pub(crate) fn new(store: &mut Store, node: NodeId) -> Arc<Storage> {
        store.graph.pin(node);
        Arc::new(Storage {
            id: next_storage_id(),
            numel: store.graph.node(node).numel(),
            device: store.device_of(node),
            version: AtomicU64::new(0),
            node: AtomicU32::new(node_word(node)),
        })
    }

    /// The current version's node. Read it only with the store locked: the store
    /// is what moves it.
    pub(crate) fn node(&self) -> NodeId {
        word_node(self.node.load(Ordering::Relaxed))
    }
}

impl Drop for Storage {
    /// Unpins the node, queueing the release where the store's lock is taken
    /// (by this thread, inside `with_store`, or by another): a queued release
    /// costs two more lock round trips, each an atomic operation, and every
    /// temporary of a built chain ends here.
    fn drop(&mut self) {
        let node = word_node(*self.node.get_mut());
        match STORE.try_lock() {
            Ok(mut store) => store.unpin(node),
            Err(TryLockError::Poisoned(poisoned)) => poisoned.into_inner().unpin(node),
            Err(TryLockError::WouldBlock) => {
                lock(&RELEASED).push(node);
                RELEASES_QUEUED.store(true, Ordering::Release);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{lock, with_store, RELEASED};
    use crate::Tensor;

    /// A handle dropped while the store is locked (here by this thread) does not
    /// wait for the lock: its release is queued, and the next lock applies it.
    #[test]
    fn a_drop_under_the_lock_queues_its_release() {
        let t = Tensor::from_vec(vec![1.0f32, 2.0], &[2])
            .unwrap()
            .exp()
            .unwrap();
        let node = t.0.storage.node();
        with_store(|s| {
            drop(t);
            assert!(lock(&RELEASED).contains(&node));
            assert!(s.graph.contains(node), "the node waits for the queue");
        });
        with_store(|_| ());
        assert!(!lock(&RELEASED).contains(&node), "the next lock applied it");
    }
}
