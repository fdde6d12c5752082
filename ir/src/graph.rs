//! The lazy graph: typed nodes at stable indices, which a `petgraph::StableGraph`
//! gives out (the nodes themselves in a vector beside it, see [`Graph`]'s fields).
//!
//! Every node carries its op, dtype and shape, fixed when the node is created, its
//! inputs in slot order and the number of its consumers (the graph's edges, kept in
//! the nodes: petgraph's edge lists make removing one of a node's `n` edges cost
//! `O(n)`, so releasing `n` consumers of one tensor was quadratic). Nodes are kept
//! alive by *pins* (one per tensor storage that currently refers to the node) and by
//! consumers; [`Graph::unpin`] removes every node that neither a pin nor a live
//! consumer reaches, so a program that builds and realizes graphs in a loop runs in
//! bounded memory.
//!
//! # Invariants (checked by [`Graph::verify`])
//! - every node's inputs occupy slots `0..n` exactly once, with `n` fixed by the op;
//! - `Binary` inputs have one dtype and the node's shape; predicates output `bool`;
//! - `View` layouts stay inside the input's element count;
//! - `WriteView`'s value input has the layout's shape and the node's dtype.

use crate::dtype::DType;
use crate::layout::Dims;
use crate::op::{InputId, Op, ReduceOp, ScanOp};
use crate::shape::{fmt_shape, numel};
use hashbrown::HashMap;
use petgraph::stable_graph::{NodeIndex, StableGraph};
use std::fmt;

mod producers;
use producers::Producers;

/// Handle of a graph node. Its `Display` is the raw index (`%12`); dumps renumber
/// nodes in topological order so that their text is deterministic.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct NodeId(NodeIndex<u32>);

impl NodeId {
    /// The raw index (stable while the node lives; reused after removal).
    pub fn index(self) -> usize {
        self.0.index()
    }

    /// The handle whose raw index is `index` (what [`NodeId::index`] gave).
    ///
    /// ```
    /// use lazyfuse_ir::{DType, Graph, NodeId, Op, Scalar};
    /// let mut g = Graph::new();
    /// let a = g.add(Op::Full(Scalar::Int(1)), DType::I64, vec![2], &[]);
    /// assert_eq!(NodeId::from_index(a.index()), a);
    /// ```
    pub fn from_index(index: usize) -> NodeId {
        NodeId(NodeIndex::new(index))
    }
}

impl fmt::Display for NodeId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "%{}", self.0.index())
    }
}

/// One node: what it computes and the type of its output.
#[derive(Clone, Debug, PartialEq)]
pub struct Node {
    /// The operation.
    pub op: Op,
    /// Output dtype.
    pub dtype: DType,
    /// Output shape (the output is contiguous row-major).
    pub shape: Dims,
    /// Number of tensor storages that refer to this node.
    pins: u32,
    /// Producers in slot order.
    inputs: Producers,
    /// Number of input slots (of live nodes) that read this node.
    consumers: usize,
}

impl Node {
    /// Number of output elements.
    pub fn numel(&self) -> usize {
        numel(&self.shape)
    }
}

/// The graph of recorded operations.
///
/// ```
/// use lazyfuse_ir::{DType, Graph, Op, Scalar};
/// let mut g = Graph::new();
/// let a = g.add(Op::Full(Scalar::Int(1)), DType::I64, vec![2], &[]);
/// g.pin(a);
/// assert_eq!(g.len(), 1);
/// g.unpin(a);
/// assert_eq!(g.len(), 0);
/// ```
#[derive(Default)]
pub struct Graph {
    /// The node indices: petgraph keeps them stable across removals and
    /// reuses a removed node's index for the next node added. Its weights are
    /// empty, and the edges are kept in the nodes themselves (see the module
    /// doc).
    graph: StableGraph<(), ()>,
    /// The nodes, by index (`None`: removed, or an index never used). Here
    /// rather than as petgraph's weights, because its `remove_node` moves the
    /// removed weight out through its return value, every node's 128 bytes
    /// copied twice with loads that wait for the narrow stores before them.
    /// Here a collected node is taken out once and dropped.
    nodes: Vec<Option<Node>>,
    /// Nodes visited by collection and replacement since the graph was made: a
    /// measure of bookkeeping work that tests bound (see [`Graph::work`]).
    work: u64,
    /// The nodes collection removed since the last [`Graph::drain_removed`], kept only
    /// after [`Graph::log_removals`] asked (an owner with side tables keyed by node
    /// drops their entries before the ids are reused).
    removed: Option<Vec<NodeId>>,
    /// Collection's work list, kept between calls (every dropped tensor's
    /// release collects, and a fresh list each time was an allocation).
    stack: Vec<NodeId>,
}

impl Graph {
    /// An empty graph.
    pub fn new() -> Self {
        Self::default()
    }

    /// Starts keeping the ids of removed nodes for [`Graph::drain_removed`].
    ///
    /// ```
    /// use lazyfuse_ir::{DType, Graph, Op, Scalar};
    /// let mut g = Graph::new();
    /// let a = g.add(Op::Full(Scalar::Int(1)), DType::I64, vec![2], &[]);
    /// g.pin(a);
    /// g.unpin(a);
    /// // Not logged before `log_removals`.
    /// assert_eq!(g.drain_removed().count(), 0);
    /// g.log_removals();
    /// let b = g.add(Op::Full(Scalar::Int(1)), DType::I64, vec![2], &[]);
    /// g.pin(b);
    /// g.unpin(b);
    /// assert_eq!(g.drain_removed().collect::<Vec<_>>(), vec![b]);
    /// ```
    pub fn log_removals(&mut self) {
        self.removed.get_or_insert_with(Vec::new);
    }

    /// The nodes removed since the last call (none unless [`Graph::log_removals`]
    /// asked), drained from the log, which keeps its capacity (the store drains it
    /// at every release): their ids may be given to new nodes from now on.
    ///
    /// ```
    /// use lazyfuse_ir::{DType, Graph, Op, Scalar};
    /// let mut g = Graph::new();
    /// g.log_removals();
    /// let a = g.add(Op::Full(Scalar::Float(1.0)), DType::F32, vec![2], &[]);
    /// g.pin(a);
    /// g.unpin(a);
    /// assert_eq!(g.drain_removed().collect::<Vec<_>>(), vec![a]);
    /// assert_eq!(g.drain_removed().count(), 0);
    /// ```
    pub fn drain_removed(&mut self) -> impl Iterator<Item = NodeId> + '_ {
        self.removed.iter_mut().flat_map(|log| log.drain(..))
    }

    /// Empties the log of removed nodes without reading it: for an owner that
    /// keeps nothing by node at the moment.
    ///
    /// ```
    /// use lazyfuse_ir::{DType, Graph, Op, Scalar};
    /// let mut g = Graph::new();
    /// g.log_removals();
    /// let a = g.add(Op::Full(Scalar::Float(1.0)), DType::F32, vec![2], &[]);
    /// g.pin(a);
    /// g.unpin(a);
    /// g.forget_removed();
    /// assert_eq!(g.drain_removed().count(), 0);
    /// ```
    pub fn forget_removed(&mut self) {
        if let Some(log) = &mut self.removed {
            log.clear();
        }
    }

    /// Number of live nodes.
    pub fn len(&self) -> usize {
        self.graph.node_count()
    }

    /// True when no node lives.
    pub fn is_empty(&self) -> bool {
        self.graph.node_count() == 0
    }

    /// Adds a node whose inputs are `inputs` in slot order. The node starts unpinned:
    /// pin it, or consume it, before the next [`Graph::unpin`] can collect it.
    pub fn add(
        &mut self,
        op: Op,
        dtype: DType,
        shape: impl AsRef<[usize]>,
        inputs: &[NodeId],
    ) -> NodeId {
        for &input in inputs {
            self.at_mut(input).consumers += 1;
        }
        let id = self.graph.add_node(());
        let node = Node {
            op,
            dtype,
            shape: crate::layout::dims_of(shape.as_ref()),
            pins: 0,
            inputs: Producers::of(inputs),
            consumers: 0,
        };
        match self.nodes.get_mut(id.index()) {
            Some(slot) => *slot = Some(node),
            None => self.nodes.push(Some(node)),
        }
        NodeId(id)
    }

    /// The node behind a handle. Panics on a removed node, which only a bug in the
    /// pinning discipline can produce (handles keep their nodes alive).
    pub fn node(&self, id: NodeId) -> &Node {
        match self.nodes.get(id.index()) {
            Some(Some(node)) => node,
            _ => panic!("{id} is not a node of the graph"),
        }
    }

    /// The node behind a handle, to update its counts (panics as
    /// [`Graph::node`]).
    fn at_mut(&mut self, id: NodeId) -> &mut Node {
        match self.nodes.get_mut(id.index()) {
            Some(Some(node)) => node,
            _ => panic!("{id} is not a node of the graph"),
        }
    }

    /// True when the handle names a live node.
    pub fn contains(&self, id: NodeId) -> bool {
        matches!(self.nodes.get(id.index()), Some(Some(_)))
    }

    /// Inputs of a node in slot order (borrowed: the realize path reads them for
    /// every node of a graph, and a copy each time was a heap allocation).
    pub fn inputs(&self, id: NodeId) -> &[NodeId] {
        &self.node(id).inputs
    }

    /// Number of consumers of a node (input slots of live nodes that read it), in
    /// constant time.
    pub fn consumer_count(&self, id: NodeId) -> usize {
        self.node(id).consumers
    }

    /// Nodes visited by collection and input replacement so far: releasing or
    /// realizing `k` nodes visits `O(k + their inputs)`, whatever the number of other
    /// consumers their producers have (tests bound it to catch quadratic
    /// bookkeeping).
    ///
    /// ```
    /// use lazyfuse_ir::{DType, Graph, Op, Scalar};
    /// let mut g = Graph::new();
    /// let a = g.add(Op::Full(Scalar::Int(1)), DType::I64, vec![2], &[]);
    /// g.pin(a);
    /// let before = g.work();
    /// g.unpin(a);
    /// assert_eq!(g.work() - before, 1);
    /// ```
    pub fn work(&self) -> u64 {
        self.work
    }

    /// Records one more storage referring to the node.
    pub fn pin(&mut self, id: NodeId) {
        self.at_mut(id).pins += 1;
    }

    /// True when some storage refers to the node.
    pub fn is_pinned(&self, id: NodeId) -> bool {
        self.node(id).pins > 0
    }

    /// Drops one reference to the node and removes every node that is no longer
    /// reachable from a pinned node. Returns the input buffers those nodes held, so the
    /// owner can free them.
    pub fn unpin(&mut self, id: NodeId) -> Vec<InputId> {
        let node = self.at_mut(id);
        debug_assert!(node.pins > 0, "unpin of an unpinned node {id}");
        node.pins = node.pins.saturating_sub(1);
        if node.pins > 0 || node.consumers > 0 {
            // (still held: nothing to collect, and no work list to allocate)
            return Vec::new();
        }
        self.collect(&[id])
    }

    /// Turns a computed node into an input node holding its result: its consumers now
    /// read the buffer, and its producers are released (and collected when nothing
    /// else reaches them). Returns the input buffers collected nodes held.
    pub fn replace_with_input(&mut self, id: NodeId, input: InputId) -> Vec<InputId> {
        let node = self.at_mut(id);
        let producers = std::mem::take(&mut node.inputs);
        node.op = Op::Input(input);
        self.work += 1;
        crate::work::add(1);
        for &p in producers.iter() {
            self.at_mut(p).consumers -= 1;
        }
        self.collect(&producers)
    }

    /// Removes the candidates that neither a pin nor a consumer keeps alive, and then
    /// their producers in turn.
    fn collect(&mut self, start: &[NodeId]) -> Vec<InputId> {
        let mut stack = std::mem::take(&mut self.stack);
        stack.clear();
        stack.extend_from_slice(start);
        let mut freed = Vec::new();
        while let Some(n) = stack.pop() {
            self.work += 1;
            crate::work::add(1);
            // (a node reached twice is gone the second time)
            let Some(Some(node)) = self.nodes.get(n.index()) else {
                continue;
            };
            if node.pins > 0 || node.consumers > 0 {
                continue;
            }
            // (the producers go onto the work list read in place, and the node
            // is not written before it is taken out, with wide loads that
            // would wait for such a write to land)
            let pushed = stack.len();
            stack.extend_from_slice(&node.inputs);
            if let Op::Input(buf) = node.op {
                freed.push(buf);
            }
            self.graph.remove_node(n.0);
            drop(self.nodes[n.index()].take());
            if let Some(log) = &mut self.removed {
                log.push(n);
            }
            for &p in &stack[pushed..] {
                self.at_mut(p).consumers -= 1;
            }
        }
        self.stack = stack;
        freed
    }

    /// Every node the targets depend on (targets included), producers first. Each
    /// node appears once; the order is deterministic for a given graph.
    pub fn topo_order(&self, targets: &[NodeId]) -> Vec<NodeId> {
        // Whether each node was seen, by index: a realize orders its graph on
        // every call, and a flag per slot of the graph costs less than hashing
        // every node it reaches.
        // (the order and the work list start with room for a typical
        // realize's nodes rather than growing through every power of two)
        let bound = petgraph::visit::NodeIndexable::node_bound(&self.graph);
        let mut seen = crate::shape::filled(false, bound);
        let mut order = Vec::with_capacity(64);
        let mut stack = Vec::with_capacity(64);
        for &t in targets {
            stack.push((t, false));
            while let Some((n, expanded)) = stack.pop() {
                crate::work::add(1);
                if expanded {
                    order.push(n);
                    continue;
                }
                if std::mem::replace(&mut seen[n.0.index()], true) {
                    continue;
                }
                stack.push((n, true));
                for &input in self.inputs(n).iter().rev() {
                    if !seen[input.0.index()] {
                        stack.push((input, false));
                    }
                }
            }
        }
        order
    }

    /// The deterministic text form of everything the targets depend on. Nodes are
    /// renumbered `%0, %1, …` in topological order and input buffers `buf0, buf1, …` in
    /// order of appearance; targets are marked with `->`.
    ///
    /// ```text
    /// %0 = input(buf3) : float32[2, 3]
    /// %1 = full(value=2) : float32[]
    /// %2 = view(%1; shape=[2, 3], strides=[0, 0], offset=0) : float32[2, 3]
    /// %3 = mul(%0, %2) : float32[2, 3]  -> t0
    /// ```
    pub fn dump(&self, targets: &[NodeId]) -> String {
        let order = self.topo_order(targets);
        let names: HashMap<NodeId, usize> =
            order.iter().enumerate().map(|(i, n)| (*n, i)).collect();
        let mut buffers: HashMap<InputId, usize> = HashMap::new();
        // the target numbers of each node, looked up once per node
        let mut marks_of: HashMap<NodeId, Vec<usize>> = HashMap::new();
        for (i, t) in targets.iter().enumerate() {
            marks_of.entry(*t).or_default().push(i);
        }
        let mut out = String::new();
        for n in &order {
            crate::work::add(1);
            let node = self.node(*n);
            let args: Vec<String> = self
                .inputs(*n)
                .iter()
                .map(|i| format!("%{}", names[i]))
                .collect();
            // Buffers are numbered by first appearance too, so that the text does not
            // depend on what else the process has allocated.
            let attrs = match node.op {
                Op::Input(id) => {
                    let next = buffers.len();
                    format!("buf{}", buffers.entry(id).or_insert(next))
                }
                _ => node.op.attributes(),
            };
            let inner = match (args.is_empty(), attrs.is_empty()) {
                (true, _) => attrs,
                (false, true) => args.join(", "),
                (false, false) => format!("{}; {}", args.join(", "), attrs),
            };
            out.push_str(&format!(
                "%{} = {}({}) : {}{}",
                names[n],
                node.op.name(),
                inner,
                node.dtype,
                fmt_shape(&node.shape)
            ));
            let marks: Vec<String> = marks_of
                .get(n)
                .map_or(&[][..], |m| &m[..])
                .iter()
                .map(|i| format!("t{i}"))
                .collect();
            if !marks.is_empty() {
                out.push_str(&format!("  -> {}", marks.join(", ")));
            }
            out.push('\n');
        }
        out
    }

    /// Checks the invariants listed in the module doc for every live node.
    pub fn verify(&self) -> Result<(), String> {
        self.graph
            .node_indices()
            .try_for_each(|idx| self.verify_node(NodeId(idx)))
    }

    /// Checks the module doc's invariants for one node (the builder runs this on
    /// every node it adds, in debug builds).
    pub fn verify_node(&self, id: NodeId) -> Result<(), String> {
        let node = self.node(id);
        let inputs = self.inputs(id);
        let arity_ok = match &node.op {
            Op::Input(_) | Op::Full(_) | Op::Arange { .. } => inputs.is_empty(),
            Op::View(_) | Op::Cast | Op::Unary(_) | Op::Reduce { .. } => inputs.len() == 1,
            Op::ArgReduce { .. } | Op::Cumsum { .. } | Op::Softmax { .. } => inputs.len() == 1,
            Op::Binary(_) | Op::Matmul | Op::WriteView(_) => inputs.len() == 2,
            Op::Where => inputs.len() == 3,
            Op::Cat { .. } => !inputs.is_empty(),
            Op::Flip { .. } => inputs.len() == 1,
            Op::Gather { .. } | Op::IndexSelect { .. } | Op::Take => inputs.len() == 2,
            Op::Scatter { .. } => inputs.len() == 3,
            Op::Scan { .. } => inputs.len() == 1,
            Op::UnaryParam(_) => inputs.len() == 1,
            Op::Random { .. } | Op::Linspace { .. } => inputs.is_empty(),
            Op::Bitcast => inputs.len() == 1,
        };
        if !arity_ok {
            return Err(format!(
                "{id}: {} has {} inputs",
                node.op.name(),
                inputs.len()
            ));
        }
        match &node.op {
            Op::Binary(b) => {
                let (x, y) = (self.node(inputs[0]), self.node(inputs[1]));
                if x.dtype != y.dtype || x.shape != node.shape || y.shape != node.shape {
                    return Err(format!("{id}: binary inputs not promoted/broadcast"));
                }
                if b.is_predicate() && node.dtype != DType::Bool {
                    return Err(format!("{id}: predicate output is not bool"));
                }
                if *b == crate::op::BinaryOp::ComplexOf && x.dtype.to_complex() != Some(node.dtype)
                {
                    return Err(format!(
                        "{id}: complex of {} parts is not {}",
                        x.dtype, node.dtype
                    ));
                }
                if !b.accepts(x.dtype) {
                    return Err(format!(
                        "{id}: {} is not defined for {}",
                        node.op.name(),
                        x.dtype
                    ));
                }
            }
            Op::View(l)
                if l.required_storage() > self.node(inputs[0]).numel() || l.shape != node.shape =>
            {
                return Err(format!("{id}: view {l} out of its input's bounds"));
            }
            Op::Scan { op, axis } => {
                let x = self.node(inputs[0]);
                let ndim = x.shape.len().max(1);
                let indices = matches!(op, ScanOp::CummaxIndices | ScanOp::CumminIndices);
                if x.shape != node.shape || *axis >= ndim {
                    return Err(format!(
                        "{id}: scan shape or axis {axis} does not match its input"
                    ));
                }
                if (indices && node.dtype != DType::I64) || (!indices && node.dtype != x.dtype) {
                    return Err(format!("{id}: scan output dtype {}", node.dtype));
                }
            }
            Op::Reduce { op, .. } => {
                let x = self.node(inputs[0]);
                let expected = match op {
                    ReduceOp::Any | ReduceOp::All if x.dtype == DType::U8 => Some(DType::U8),
                    ReduceOp::Any | ReduceOp::All => Some(DType::Bool),
                    ReduceOp::CountNonzero => Some(DType::I64),
                    ReduceOp::Norm { .. } => Some(x.dtype.to_real()),
                    ReduceOp::NanSum
                    | ReduceOp::NanMean
                    | ReduceOp::LogSumExp
                    | ReduceOp::RunningMean => Some(x.dtype),
                    _ => None,
                };
                if expected.is_some_and(|d| d != node.dtype) {
                    return Err(format!(
                        "{id}: {} output dtype {}",
                        node.op.name(),
                        node.dtype
                    ));
                }
            }
            Op::Unary(u) => {
                if self.node(inputs[0]).shape != node.shape {
                    return Err(format!("{id}: unary input shape differs from the node's"));
                }
                if u.is_predicate() && node.dtype != DType::Bool {
                    return Err(format!("{id}: predicate output is not bool"));
                }
                let x = self.node(inputs[0]).dtype;
                if !u.accepts(x) {
                    return Err(format!("{id}: {} is not defined for {x}", node.op.name()));
                }
                let part = matches!(
                    u,
                    crate::op::UnaryOp::RealPart | crate::op::UnaryOp::ImagPart
                );
                if part && node.dtype != x.to_real() {
                    return Err(format!("{id}: a part of {x} is not {}", node.dtype));
                }
            }
            Op::UnaryParam(p) => {
                let x = self.node(inputs[0]);
                if x.shape != node.shape || x.dtype != node.dtype {
                    return Err(format!("{id}: {} input does not match the node", p.name()));
                }
            }
            Op::WriteView(l) => {
                let value = self.node(inputs[1]);
                if value.shape != l.shape || value.dtype != node.dtype {
                    return Err(format!("{id}: write_view value does not match {l}"));
                }
                if l.required_storage() > self.node(inputs[0]).numel() {
                    return Err(format!("{id}: write_view {l} out of bounds"));
                }
            }
            Op::Gather { .. }
            | Op::IndexSelect { .. }
            | Op::Take
            | Op::Scatter { .. }
            | Op::Flip { .. } => self.verify_indexing(id)?,
            Op::Linspace { .. } if node.shape.len() != 1 => {
                return Err(format!("{id}: linspace is not 1-D"));
            }
            Op::Bitcast => {
                let x = self.node(inputs[0]);
                let bytes = |n: &Node| n.numel() as u128 * n.dtype.size_in_bytes() as u128;
                if node.shape.len() != 1 || bytes(x) != bytes(node) {
                    return Err(format!(
                        "{id}: bitcast of {} bytes is not flat and equal",
                        bytes(x)
                    ));
                }
            }
            Op::Random { distribution, .. } => {
                let ok = match distribution {
                    crate::philox::Distribution::Integer { low, high } => {
                        low < high && !node.dtype.is_complex() && !node.dtype.is_float8()
                    }
                    _ => {
                        (node.dtype.is_floating_point() && !node.dtype.is_float8())
                            || node.dtype.is_complex()
                    }
                };
                if !ok {
                    return Err(format!("{id}: random {distribution:?} of {}", node.dtype));
                }
            }
            _ => {}
        }
        Ok(())
    }

    /// The invariants of the indexing nodes: `int64` indices, shapes that keep every
    /// position an index names (once its value is checked) inside the input, dtypes.
    fn verify_indexing(&self, id: NodeId) -> Result<(), String> {
        let node = self.node(id);
        let inputs = self.inputs(id);
        let one = |s: &[usize]| if s.is_empty() { vec![1] } else { s.to_vec() };
        let x = self.node(inputs[0]);
        if x.dtype != node.dtype {
            return Err(format!("{id}: {} changes the dtype", node.op.name()));
        }
        let index = inputs.get(1).map(|&i| self.node(i));
        if index.is_some_and(|i| i.dtype != DType::I64) {
            return Err(format!("{id}: {} index is not int64", node.op.name()));
        }
        let ok = match (&node.op, index) {
            (Op::Gather { axis }, Some(i)) => {
                let (xs, is) = (one(&x.shape), one(&i.shape));
                i.shape == node.shape
                    && xs.len() == is.len()
                    && *axis < xs.len()
                    && (0..xs.len()).all(|d| d == *axis || is[d] <= xs[d] || i.numel() == 0)
            }
            (Op::IndexSelect { axis }, Some(i)) => {
                let mut expected = one(&x.shape);
                *axis < expected.len() && i.shape.len() == 1 && {
                    expected[*axis] = i.shape[0];
                    if x.shape.is_empty() {
                        node.shape.is_empty() && i.shape[0] == 1
                    } else {
                        *expected == *node.shape
                    }
                }
            }
            (Op::Take, Some(i)) => i.shape == node.shape,
            (Op::Scatter { axis, .. }, Some(i)) => {
                let src = self.node(inputs[2]);
                let (xs, is) = (one(&x.shape), one(&i.shape));
                x.shape == node.shape
                    && src.shape == i.shape
                    && src.dtype == node.dtype
                    && xs.len() == is.len()
                    && *axis < xs.len()
                    && (0..xs.len()).all(|d| d == *axis || is[d] <= xs[d] || i.numel() == 0)
            }
            (Op::Flip { axes }, None) => {
                x.shape == node.shape
                    && axes.windows(2).all(|w| w[0] < w[1])
                    && axes.iter().all(|&a| a < one(&x.shape).len())
            }
            _ => false,
        };
        if ok {
            Ok(())
        } else {
            Err(format!(
                "{id}: {}({}) does not fit its inputs",
                node.op.name(),
                node.op.attributes()
            ))
        }
    }
}

#[cfg(test)]
mod work_tests {
    use super::*;
    use crate::scalar::Scalar;

    /// Releasing and replacing consumers of one shared node visits a bounded number
    /// of nodes per consumer, however many consumers there are (the bookkeeping was
    /// quadratic in that number).
    #[test]
    fn releasing_many_consumers_is_linear() {
        for n in [1_000usize, 10_000] {
            let mut g = Graph::new();
            let x = g.add(Op::Full(Scalar::Int(1)), DType::F32, vec![4], &[]);
            g.pin(x);
            let ys: Vec<NodeId> = (0..n)
                .map(|_| {
                    let y = g.add(
                        Op::Unary(crate::op::UnaryOp::Neg),
                        DType::F32,
                        vec![4],
                        &[x],
                    );
                    g.pin(y);
                    y
                })
                .collect();
            assert_eq!(g.consumer_count(x), n);
            let before = g.work();
            // Realize half (replace with inputs), drop the other half, oldest first.
            for (i, &y) in ys.iter().enumerate() {
                if i % 2 == 0 {
                    g.replace_with_input(y, InputId(i as u64));
                } else {
                    g.unpin(y);
                }
            }
            assert_eq!(g.consumer_count(x), 0);
            for (i, &y) in ys.iter().enumerate() {
                if i % 2 == 0 {
                    g.unpin(y);
                }
            }
            g.unpin(x);
            assert!(g.is_empty());
            let work = g.work() - before;
            assert!(work <= 4 * n as u64 + 4, "{n} consumers: {work} visits");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Scalar;

    fn full(g: &mut Graph, v: i64) -> NodeId {
        let id = g.add(Op::Full(Scalar::Int(v)), DType::I64, [2], &[]);
        g.pin(id);
        id
    }

    /// A collected node leaves its slot, and its index is the next one given
    /// out (the last removed first, petgraph's free list), holding the new
    /// node; the live nodes keep theirs.
    #[test]
    fn removed_indices_are_reused_last_first() {
        let mut g = Graph::new();
        let (a, b, c) = (full(&mut g, 1), full(&mut g, 2), full(&mut g, 3));
        let cast = g.add(Op::Cast, DType::F32, [2], &[a]);
        g.pin(cast);
        g.unpin(a);
        assert!(g.contains(a), "a consumer keeps its producer");
        g.unpin(b);
        g.unpin(c);
        assert!(!g.contains(b) && !g.contains(c));
        assert_eq!(g.len(), 2);
        let (d, e, f) = (full(&mut g, 4), full(&mut g, 5), full(&mut g, 6));
        assert_eq!((d.index(), e.index()), (c.index(), b.index()));
        assert_eq!(f.index(), 4);
        assert_eq!(g.node(d).op, Op::Full(Scalar::Int(4)));
        assert_eq!(g.node(e).op, Op::Full(Scalar::Int(5)));
        assert_eq!(g.node(a).op, Op::Full(Scalar::Int(1)));
        g.unpin(cast);
        assert!(!g.contains(a) && !g.contains(cast));
        assert_eq!(g.len(), 3);
        g.verify().unwrap();
    }

    #[test]
    #[should_panic(expected = "is not a node of the graph")]
    fn a_removed_node_is_not_read() {
        let mut g = Graph::new();
        let a = full(&mut g, 1);
        g.unpin(a);
        g.node(a);
    }
}
