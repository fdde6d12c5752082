//! The process-wide graph store: one lazy graph, the realized buffers its `input`
//! nodes name, and the storages that tensor handles share.
//!
//! Every tensor handle points at a [`Storage`]; a storage names the graph node whose
//! output is its current contents (its newest *version*: an in-place write makes a new
//! node and moves the storage to it). A storage pins its node; dropping the last
//! handle releases the pin. Releases are queued and applied the next time the store is
//! locked, so a `Drop` never has to take the store's lock (no re-entrancy, no
//! deadlock), and the graph stays bounded in a build-and-realize loop.

use crate::error::Result;
use lazyfuse_ir::{DType, Graph, InputId, Layout, NodeId, Op};
use lazyfuse_runtime::Buffer;
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, LazyLock, Mutex, MutexGuard};

/// The graph and the buffers of its input nodes.
pub(crate) struct Store {
    pub(crate) graph: Graph,
    pub(crate) buffers: HashMap<InputId, Arc<Buffer>>,
    next_input: u64,
}

static STORE: LazyLock<Mutex<Store>> = LazyLock::new(|| {
    Mutex::new(Store {
        graph: Graph::new(),
        buffers: HashMap::new(),
        next_input: 0,
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
    /// Adds a node (see [`Graph::add`]).
    pub(crate) fn add(
        &mut self,
        op: Op,
        dtype: DType,
        shape: Vec<usize>,
        inputs: &[NodeId],
    ) -> NodeId {
        let id = self.graph.add(op, dtype, shape, inputs);
        if VERIFY.load(Ordering::Relaxed) {
            if let Err(broken) = self.graph.verify_node(id) {
                panic!("lazyfuse bug: the graph builder broke an invariant: {broken}");
            }
        }
        id
    }

    /// Adds an input node holding `buffer`.
    pub(crate) fn add_input(&mut self, buffer: Buffer, shape: Vec<usize>) -> NodeId {
        let id = InputId(self.next_input);
        self.next_input += 1;
        let dtype = buffer.dtype();
        self.buffers.insert(id, Arc::new(buffer));
        self.graph.add(Op::Input(id), dtype, shape, &[])
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
        for freed in self.graph.unpin(node) {
            self.buffers.remove(&freed);
        }
    }

    /// What realizing `storage` takes, or `None` when its node is an input already:
    /// the graph copy to run (after the passes), its targets, the buffers it reads,
    /// and the store's target nodes, pinned until [`Store::install`] or
    /// [`Store::abandon`] so that no other thread's edit removes them meanwhile.
    /// Every other node of the graph that a live tensor still names is a target too,
    /// so that nothing computed now is computed again by a later realize.
    fn plan(&mut self, storage: &Storage) -> Option<Plan> {
        let node = storage.node();
        if matches!(self.graph.node(node).op, Op::Input(_)) {
            return None;
        }
        let dump = dump_ir_enabled();
        if dump {
            eprintln!(
                "== lazyfuse: graph as built ==\n{}",
                self.graph.dump(&[node])
            );
        }
        let targets: Vec<NodeId> = self
            .graph
            .topo_order(&[node])
            .into_iter()
            .filter(|&n| {
                n == node
                    || (self.graph.is_pinned(n) && !matches!(self.graph.node(n).op, Op::Input(_)))
            })
            .collect();
        let (graph, copy_targets) = if passes_enabled() {
            // The passes make a copy holding what the targets need; its input nodes
            // name the same buffers, and its targets come back in the same order.
            let opt = lazyfuse_ir::passes::optimize(&self.graph, &targets);
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
        let inputs = graph
            .topo_order(&copy_targets)
            .into_iter()
            .filter_map(|n| match graph.node(n).op {
                Op::Input(id) => self.buffers.get(&id).map(|b| (id, b.clone())),
                _ => None,
            })
            .collect();
        for &t in &targets {
            self.graph.pin(t);
        }
        Some(Plan {
            graph,
            targets: copy_targets,
            store_targets: targets,
            inputs,
            dump,
        })
    }

    /// Turns each planned target that is not an input yet (another thread may have
    /// realized it meanwhile) into an input node holding its result, and releases
    /// the plan's pins.
    fn install(&mut self, plan: Plan, outputs: Vec<Arc<Buffer>>) {
        // Producers first: replacing a node releases its producers, which are
        // never targets installed later in this loop.
        for (&target, buffer) in plan.store_targets.iter().zip(outputs) {
            if matches!(self.graph.node(target).op, Op::Input(_)) {
                continue;
            }
            let id = InputId(self.next_input);
            self.next_input += 1;
            self.buffers.insert(id, buffer);
            for freed in self.graph.replace_with_input(target, id) {
                self.buffers.remove(&freed);
            }
        }
        self.abandon(plan);
    }

    /// Releases a plan's pins (after installing it, or after it failed).
    fn abandon(&mut self, plan: Plan) {
        for t in plan.store_targets {
            self.unpin(t);
        }
    }

    /// Points the storage at a new version node.
    pub(crate) fn move_storage(&mut self, storage: &Storage, node: NodeId) {
        self.graph.pin(node);
        let old = std::mem::replace(&mut *lock(&storage.node), node);
        self.unpin(old);
    }

    /// The realized buffer behind a storage whose node is an input.
    pub(crate) fn buffer_of(&self, storage: &Storage) -> Option<Arc<Buffer>> {
        match self.graph.node(storage.node()).op {
            Op::Input(id) => self.buffers.get(&id).cloned(),
            _ => None,
        }
    }
}

/// A realize prepared under the store's lock and run outside it.
struct Plan {
    graph: Graph,
    targets: Vec<NodeId>,
    store_targets: Vec<NodeId>,
    inputs: HashMap<InputId, Arc<Buffer>>,
    dump: bool,
}

/// Executes the storage's current node, unless it is an input already, and turns
/// it into an input node holding the result. The store is locked to plan (passes,
/// pins) and to install the results, not while kernels run: two threads realize at
/// once.
pub(crate) fn realize(storage: &Storage) -> Result<()> {
    let Some(plan) = with_store(|s| s.plan(storage)) else {
        return Ok(());
    };
    match crate::backend::execute(&plan.graph, &plan.inputs, &plan.targets, plan.dump) {
        Ok(outputs) => {
            with_store(|s| s.install(plan, outputs));
            Ok(())
        }
        Err(e) => {
            with_store(|s| s.abandon(plan));
            Err(e)
        }
    }
}

/// The realized buffer of a storage: realizes it, then reads its buffer (again, if
/// another thread wrote a new version in between).
pub(crate) fn realized_buffer(storage: &Storage) -> Result<Arc<Buffer>> {
    loop {
        realize(storage)?;
        if let Some(b) = with_store(|s| s.buffer_of(storage)) {
            return Ok(b);
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
    node: Mutex<NodeId>,
}

impl Storage {
    /// A storage whose contents are `node`'s output; pins the node.
    pub(crate) fn new(store: &mut Store, node: NodeId) -> Arc<Storage> {
        store.graph.pin(node);
        Arc::new(Storage {
            id: NEXT_STORAGE.fetch_add(1, Ordering::Relaxed),
            numel: store.graph.node(node).numel(),
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
