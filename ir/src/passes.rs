//! Graph passes: pure rewrites of a graph for a set of targets, run before execution.
//!
//! Every pass reads a graph and the ids of the nodes wanted, and returns a fresh copy
//! that holds only what those targets need, plus the targets' ids in the copy. The
//! input graph is never edited (the store keeps its own graph for later realizes).
//! Each pass keeps every surviving node's dtype and shape, and its result passes
//! [`Graph::verify_node`] on every node.
//!
//! The passes, in the order [`optimize`] runs them:
//! 1. [`remove_dead`]: only nodes reachable from the targets are copied;
//! 2. [`remove_same_dtype_casts`]: a `cast` to the dtype its input already has is
//!    the input;
//! 3. [`compose_views`]: a `view` of a `view` becomes one `view` when the composition
//!    is itself a strided layout, and a `view` that is the identity of its input is
//!    the input;
//! 4. [`fold_full_views`]: a `view` of a `full` is a `full` of the view's shape;
//! 5. [`eliminate_common_subexpressions`]: structurally equal nodes become one.
//!
//! Casts of a `full` to another dtype are *not* folded: the interpreter's conversion
//! of a scalar (float → integer saturation, float16 rounding, complex → real) would
//! have to be repeated here bit for bit, and a wrong fold would be a silent wrong
//! value. A later stage (the kernel IR's constants) is the place for it.

use crate::dtype::DType;
use crate::graph::{Graph, Node, NodeId};
use crate::layout::Layout;
use crate::op::{InputId, Op};
use hashbrown::HashMap;
use std::fmt;

mod split_reductions;
pub use split_reductions::{split_reductions, SplitPolicy};

/// What each pass of [`optimize`] did, for the IR dump and for tests.
///
/// ```
/// use lazyfuse_ir::passes::PassReport;
/// let r = PassReport { nodes_in: 5, nodes_out: 3, cse_merged: 2, ..PassReport::default() };
/// assert_eq!(
///     r.to_string(),
///     "nodes 5 -> 3: casts=0 views_composed=0 identity_views=0 fulls_folded=0 cse=2 dead=0"
/// );
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PassReport {
    /// Nodes of the input graph that the targets need (the nodes it holds for other
    /// targets are never copied, and not counted).
    pub nodes_in: usize,
    /// Nodes of the optimized copy.
    pub nodes_out: usize,
    /// Casts to the dtype their input already had.
    pub casts_removed: usize,
    /// Views of views replaced by one view.
    pub views_composed: usize,
    /// Views that were (or, once composed, became) the identity of their input.
    pub identity_views_removed: usize,
    /// Views of `full` nodes turned into `full` nodes.
    pub fulls_folded: usize,
    /// Nodes merged into a structurally equal node.
    pub cse_merged: usize,
    /// Nodes that the rewrites left without a consumer (the inner view of a
    /// composed chain, the `full` under a folded view), removed.
    pub dead_removed: usize,
}

impl fmt::Display for PassReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "nodes {} -> {}: casts={} views_composed={} identity_views={} fulls_folded={} \
             cse={} dead={}",
            self.nodes_in,
            self.nodes_out,
            self.casts_removed,
            self.views_composed,
            self.identity_views_removed,
            self.fulls_folded,
            self.cse_merged,
            self.dead_removed
        )
    }
}

/// The result of [`optimize`]: the optimized copy, the targets' ids in it (in the
/// order given; two targets may share one id after CSE) and what the passes did.
pub struct Optimized {
    /// The optimized copy; it holds only what the targets need.
    pub graph: Graph,
    /// The id in `graph` of each target, in the order of the targets given.
    pub targets: Vec<NodeId>,
    /// What each pass did.
    pub report: PassReport,
}

/// Runs every pass (see the module doc for the order) on the part of `graph` that
/// `targets` need, and returns the optimized copy.
///
/// ```
/// use lazyfuse_ir::{passes, BinaryOp, DType, Graph, InputId, Op};
/// let mut g = Graph::new();
/// let x = g.add(Op::Input(InputId(0)), DType::F32, vec![3], &[]);
/// let c = g.add(Op::Cast, DType::F32, vec![3], &[x]); // a cast to float32 of float32
/// let e1 = g.add(Op::Binary(BinaryOp::Add), DType::F32, vec![3], &[c, x]);
/// let e2 = g.add(Op::Binary(BinaryOp::Add), DType::F32, vec![3], &[x, x]);
/// let y = g.add(Op::Binary(BinaryOp::Mul), DType::F32, vec![3], &[e1, e2]);
/// let opt = passes::optimize(&g, &[y]);
/// assert_eq!(opt.report.casts_removed, 1);
/// assert_eq!(opt.report.cse_merged, 1); // e1 and e2 are both x + x
/// assert_eq!(opt.graph.len(), 3);
/// ```
pub fn optimize(graph: &Graph, targets: &[NodeId]) -> Optimized {
    optimize_keeping(graph, targets, &[])
}

/// [`optimize`], except that a `write_view` of a whole input buffer named in
/// `in_place` stays a write (the realize may store it into that buffer, donated,
/// rather than into a new one).
pub fn optimize_keeping(graph: &Graph, targets: &[NodeId], in_place: &[InputId]) -> Optimized {
    let mut report = PassReport::default();
    let (g, t) = remove_dead(graph, targets);
    report.nodes_in = g.len();
    let (g, t, n) = remove_same_dtype_casts(&g, &t);
    report.casts_removed = n;
    let (g, t, composed, identities) = compose_views_keeping(&g, &t, in_place);
    report.views_composed = composed;
    report.identity_views_removed = identities;
    let (g, t, n) = fold_full_views(&g, &t);
    report.fulls_folded = n;
    let (g, t, n) = eliminate_common_subexpressions(&g, &t);
    report.cse_merged = n;
    report.nodes_out = g.len();
    // Every other node that went missing was orphaned by a rewrite (a composed view
    // or a folded full replaces a node by a new one: no net change of its own).
    report.dead_removed = report.nodes_in.saturating_sub(
        report.nodes_out + report.casts_removed + report.identity_views_removed + report.cse_merged,
    );
    Optimized {
        graph: g,
        targets: t,
        report,
    }
}

/// Copies the nodes of `graph` that `targets` need, producers first, asking `rule`
/// for each node (given the copy so far, the old node and its inputs' ids in the
/// copy) whether it is replaced by a node of the copy (`Some`) or copied (`None`).
/// Returns the copy without the nodes the replacements orphaned, the targets' ids
/// in it and the number of replacements.
fn rebuild(
    graph: &Graph,
    targets: &[NodeId],
    mut rule: impl FnMut(&mut Graph, &Node, &[NodeId]) -> Option<NodeId>,
) -> (Graph, Vec<NodeId>, usize) {
    let mut out = Graph::new();
    let mut map: HashMap<NodeId, NodeId> = HashMap::new();
    let mut replaced = 0;
    for id in graph.topo_order(targets) {
        let node = graph.node(id);
        // Producers come first in a topological order, so every input is mapped.
        let inputs: Vec<NodeId> = graph.inputs(id).iter().map(|i| map[i]).collect();
        let new = match rule(&mut out, node, &inputs) {
            Some(n) => {
                replaced += 1;
                n
            }
            None => out.add(node.op.clone(), node.dtype, node.shape.clone(), &inputs),
        };
        map.insert(id, new);
    }
    let new_targets: Vec<NodeId> = targets.iter().map(|t| map[t]).collect();
    if replaced > 0 && out.topo_order(&new_targets).len() < out.len() {
        let (out, new_targets) = remove_dead(&out, &new_targets);
        return (out, new_targets, replaced);
    }
    (out, new_targets, replaced)
}

/// Dead-node removal: a copy holding exactly the nodes `targets` reach (targets
/// included), with the targets' ids in it.
///
/// ```
/// use lazyfuse_ir::{passes, DType, Graph, Op, Scalar, UnaryOp};
/// let mut g = Graph::new();
/// let a = g.add(Op::Full(Scalar::Int(1)), DType::F32, vec![2], &[]);
/// let _dead = g.add(Op::Unary(UnaryOp::Exp), DType::F32, vec![2], &[a]);
/// let b = g.add(Op::Unary(UnaryOp::Neg), DType::F32, vec![2], &[a]);
/// let (copy, targets) = passes::remove_dead(&g, &[b]);
/// assert_eq!(copy.len(), 2);
/// assert_eq!(copy.node(targets[0]).op, Op::Unary(UnaryOp::Neg));
/// ```
pub fn remove_dead(graph: &Graph, targets: &[NodeId]) -> (Graph, Vec<NodeId>) {
    let (out, targets, _) = rebuild(graph, targets, |_, _, _| None);
    (out, targets)
}

/// Removal of casts to the same dtype: a `cast` whose input already has the node's
/// dtype is its input. Returns the copy, the targets' ids and the number removed.
///
/// ```
/// use lazyfuse_ir::{passes, DType, Graph, InputId, Op};
/// let mut g = Graph::new();
/// let x = g.add(Op::Input(InputId(0)), DType::I32, vec![2], &[]);
/// let c = g.add(Op::Cast, DType::I32, vec![2], &[x]);
/// let (copy, t, removed) = passes::remove_same_dtype_casts(&g, &[c]);
/// assert_eq!((copy.len(), removed), (1, 1));
/// assert_eq!(copy.node(t[0]).op, Op::Input(InputId(0)));
/// ```
pub fn remove_same_dtype_casts(graph: &Graph, targets: &[NodeId]) -> (Graph, Vec<NodeId>, usize) {
    rebuild(graph, targets, |out, node, inputs| match node.op {
        Op::Cast if out.node(inputs[0]).dtype == node.dtype => Some(inputs[0]),
        _ => None,
    })
}

/// Folding of views of scalar constants: a `view` of a `full` node is a `full` of
/// the view's shape (every element of a `full` is the same value). Folded only when
/// the `full` has no more elements than the view, so that the allocations (and so
/// the out-of-memory errors) of the folded graph are never larger nor different
/// than the original's. Returns the copy, the targets' ids and the number folded.
///
/// ```
/// use lazyfuse_ir::{passes, DType, Graph, Layout, Op, Scalar};
/// let mut g = Graph::new();
/// let two = g.add(Op::Full(Scalar::Int(2)), DType::F32, vec![], &[]);
/// let l = Layout { shape: vec![2, 3].into(), strides: vec![0, 0].into(), offset: 0 };
/// let v = g.add(Op::view(l), DType::F32, vec![2, 3], &[two]);
/// let (copy, t, folded) = passes::fold_full_views(&g, &[v]);
/// assert_eq!((copy.len(), folded), (1, 1));
/// assert_eq!(copy.node(t[0]).op, Op::Full(Scalar::Int(2)));
/// assert_eq!(copy.node(t[0]).shape[..], [2, 3]);
/// ```
pub fn fold_full_views(graph: &Graph, targets: &[NodeId]) -> (Graph, Vec<NodeId>, usize) {
    rebuild(graph, targets, |out, node, inputs| {
        let Op::View(l) = &node.op else {
            return None;
        };
        let x = out.node(inputs[0]);
        match x.op {
            Op::Full(v) if x.numel() <= l.numel() => {
                Some(out.add(Op::Full(v), node.dtype, node.shape.clone(), &[]))
            }
            _ => None,
        }
    })
}

/// Folding of view chains: a `view(l2)` of a `view(l1)` of `x` becomes one `view` of
/// `x` when [`compose_layouts`] finds a layout for the composition (else both
/// stay), a `view` whose layout is the identity of its input (same shape,
/// row-major, offset 0) is its input, and a `write_view` whose layout is the
/// identity of its base is its value (an optimizer's `p.sub_(…)` replaces the whole
/// storage: no copy of the old version is needed). Chains of any length fold in one sweep, since
/// producers are rewritten first. Returns the copy, the targets' ids, the number of
/// views composed and the number of views removed as identities (a composition
/// that is the identity counts in both).
///
/// ```
/// use lazyfuse_ir::{passes, DType, Graph, InputId, Layout, Op};
/// let mut g = Graph::new();
/// let x = g.add(Op::Input(InputId(0)), DType::F32, vec![2, 3], &[]);
/// let t = Layout { shape: vec![3, 2].into(), strides: vec![1, 3].into(), offset: 0 };
/// let xt = g.add(Op::view(t), DType::F32, vec![3, 2], &[x]);
/// let back = Layout { shape: vec![2, 3].into(), strides: vec![1, 2].into(), offset: 0 };
/// let y = g.add(Op::view(back), DType::F32, vec![2, 3], &[xt]); // .t() of .t()
/// let (copy, targets, composed, identities) = passes::compose_views(&g, &[y]);
/// assert_eq!((composed, identities), (1, 1));
/// assert_eq!(copy.len(), 1); // the composition was the identity: x itself
/// assert_eq!(copy.node(targets[0]).op, Op::Input(InputId(0)));
/// ```
pub fn compose_views(graph: &Graph, targets: &[NodeId]) -> (Graph, Vec<NodeId>, usize, usize) {
    compose_views_keeping(graph, targets, &[])
}

/// [`compose_views`], keeping the whole writes into the input buffers `in_place`.
fn compose_views_keeping(
    graph: &Graph,
    targets: &[NodeId],
    in_place: &[InputId],
) -> (Graph, Vec<NodeId>, usize, usize) {
    let (mut composed, mut identities) = (0, 0);
    let (out, targets, _) = rebuild(graph, targets, |out, node, inputs| {
        if let Op::WriteView(l) = &node.op {
            let base = out.node(inputs[0]);
            // a write that covers its whole base, row-major, is its value, when the
            // base is a value already (a lazy base still runs, and may fail, as it
            // does with the passes off)
            let settled = match base.op {
                Op::Input(id) => !in_place.contains(&id),
                Op::Full(_) => true,
                _ => false,
            };
            if settled && is_identity_view(l, base) {
                identities += 1;
                return Some(inputs[1]);
            }
            return None;
        }
        let Op::View(l2) = &node.op else {
            return None;
        };
        let x = out.node(inputs[0]);
        if is_identity_view(l2, x) {
            identities += 1;
            return Some(inputs[0]);
        }
        let Op::View(l1) = &x.op else {
            return None;
        };
        let source = out.inputs(inputs[0])[0];
        let l = compose_layouts(l1, l2)?;
        composed += 1;
        if is_identity_view(&l, out.node(source)) {
            identities += 1;
            return Some(source);
        }
        Some(out.add(Op::view(l), node.dtype, node.shape.clone(), &[source]))
    });
    (out, targets, composed, identities)
}

/// True when reading `node`'s output through `l` reads exactly that output.
fn is_identity_view(l: &Layout, node: &Node) -> bool {
    l.shape == node.shape && l.is_identity_of(node.numel())
}

/// The layout of `view(l2)` of `view(l1)` of a tensor `x`, as one layout over `x`,
/// or `None` when the composition is not a strided layout (or not proven to be).
///
/// `l1`'s output is numbered row-major over `l1.shape`; `l2` addresses that numbering.
/// `l1` is first coalesced (size-1 dims dropped, neighbours `a, b` with
/// `stride_a == stride_b * size_b` merged), which keeps its numbering and its
/// addresses. Then `l2`'s offset and each of its strides (dims of size > 1) are
/// split into digits of that mixed radix, and the composition exists when, for every
/// index, every digit stays below its dim's size: no carry ever happens, the digits
/// of every element are exactly `offset digits + Σ j_k * stride digits of k`, and
/// the address in `x` is affine in the index. That is exact: whenever this returns a layout, it addresses the same
/// elements of `x` as the chain, for every index.
///
/// ```
/// use lazyfuse_ir::{passes::compose_layouts, Layout};
/// let x = Layout::contiguous(&[4, 5]);
/// let l1 = x.t().unwrap(); // [5, 4], strides [1, 5]
/// let over_l1 = Layout::contiguous(&[5, 4]).select(0, 2).unwrap(); // row 2 of l1
/// let l = compose_layouts(&l1, &over_l1).unwrap();
/// assert_eq!(l, l1.select(0, 2).unwrap()); // column 2 of x
/// // A flatten of a transpose is no layout:
/// let flat = Layout::contiguous(&[5, 4]).view(&[20]).unwrap();
/// assert_eq!(compose_layouts(&l1, &flat), None);
/// ```
pub fn compose_layouts(l1: &Layout, l2: &Layout) -> Option<Layout> {
    if l2.numel() == 0 || l1.strides.iter().any(|&s| s < 0) {
        return None;
    }
    // Coalesce l1: (size, stride) of each dim of size > 1, neighbours merged.
    let mut dims: Vec<(usize, isize)> = Vec::new();
    for (&size, &stride) in l1.shape.iter().zip(&l1.strides) {
        if size == 1 {
            continue;
        }
        if let Some(last) = dims.last_mut() {
            let merged = isize::try_from(size)
                .ok()
                .and_then(|s| stride.checked_mul(s));
            if merged == Some(last.1) {
                *last = (last.0.checked_mul(size)?, stride);
                continue;
            }
        }
        dims.push((size, stride));
    }
    // Row-major strides of the coalesced numbering.
    let mut rowmajor = vec![1usize; dims.len()];
    for d in (0..dims.len().saturating_sub(1)).rev() {
        rowmajor[d] = rowmajor[d + 1].checked_mul(dims[d + 1].0)?;
    }
    let total = match dims.first() {
        Some(&(size, _)) => rowmajor[0].checked_mul(size)?,
        None => 1,
    };
    if l2.offset >= total {
        return None;
    }
    let digits: Vec<usize> = (0..dims.len())
        .map(|d| (l2.offset / rowmajor[d]) % dims[d].0)
        .collect();
    let mut reach = digits.clone();
    let mut strides = Vec::with_capacity(l2.ndim());
    for (&n, &v) in l2.shape.iter().zip(&l2.strides) {
        if n == 1 || v == 0 {
            strides.push(0);
            continue;
        }
        // The step's digits in the mixed radix: `v = Σ c_d * rowmajor[d]` with
        // `c_d < size_d` below the outermost dim. It is the only way to write the step
        // without a carry (any other way has some `c_d >= size_d`), and the step adds
        // `c_d` to digit `d` (a diagonal steps in two dims at once).
        let mut rest = usize::try_from(v).ok()?;
        if dims.is_empty() {
            return None;
        }
        let mut stride: isize = 0;
        for d in 0..dims.len() {
            let c = rest / rowmajor[d];
            rest %= rowmajor[d];
            if c == 0 {
                continue;
            }
            reach[d] = reach[d].checked_add(c.checked_mul(n - 1)?)?;
            let step = isize::try_from(c).ok()?.checked_mul(dims[d].1)?;
            stride = stride.checked_add(step)?;
        }
        strides.push(stride);
    }
    if reach.iter().zip(&dims).any(|(&r, &(size, _))| r >= size) {
        return None;
    }
    let mut offset = l1.offset;
    for (&digit, &(_, stride)) in digits.iter().zip(&dims) {
        let step = digit.checked_mul(usize::try_from(stride).ok()?)?;
        offset = offset.checked_add(step)?;
    }
    Some(Layout {
        shape: l2.shape.clone(),
        strides: strides.into(),
        offset,
    })
}

/// Common-subexpression elimination: nodes with the same op (attributes included),
/// dtype, shape and inputs (after merging) become one. Every node is a pure function
/// of its inputs (writes are `write_view` versions, random nodes are fixed by their
/// seed and offset), so this is sound; two `input` nodes merge only when they name
/// the same buffer. Ops are keyed by their `Debug` text, which tells every f64 apart
/// (`-0.0` from `0.0`, unlike `==`); ops whose text holds a NaN never merge, as NaN
/// payloads are not in the text. Returns the copy, the targets' ids and the number
/// of nodes merged.
///
/// ```
/// use lazyfuse_ir::{passes, DType, Graph, Op, Scalar};
/// let mut g = Graph::new();
/// let a = g.add(Op::Full(Scalar::Float(0.0)), DType::F32, vec![2], &[]);
/// let b = g.add(Op::Full(Scalar::Float(0.0)), DType::F32, vec![2], &[]);
/// let c = g.add(Op::Full(Scalar::Float(-0.0)), DType::F32, vec![2], &[]);
/// let (copy, t, merged) = passes::eliminate_common_subexpressions(&g, &[a, b, c]);
/// assert_eq!(merged, 1);
/// assert_eq!(t[0], t[1]);
/// assert_ne!(t[0], t[2]);
/// assert_eq!(copy.len(), 2);
/// ```
pub fn eliminate_common_subexpressions(
    graph: &Graph,
    targets: &[NodeId],
) -> (Graph, Vec<NodeId>, usize) {
    type Key = (String, DType, crate::layout::Dims, Vec<NodeId>);
    let mut seen: HashMap<Key, NodeId> = HashMap::new();
    // The rule adds every node itself (it needs the new id for the table), so
    // `rebuild`'s count of replacements is not the number merged: that is the
    // number of nodes that did not get a node of their own.
    let (out, new_targets, _) = rebuild(graph, targets, |out, node, inputs| {
        let text = format!("{:?}", node.op);
        let mergeable = !text.contains("NaN");
        let key = (text, node.dtype, node.shape.clone(), inputs.to_vec());
        if mergeable {
            if let Some(&existing) = seen.get(&key) {
                // The text decided; `==` confirms (it can only be stricter here).
                if out.node(existing).op == node.op {
                    return Some(existing);
                }
            }
        }
        let new = out.add(node.op.clone(), node.dtype, node.shape.clone(), inputs);
        if mergeable {
            seen.insert(key, new);
        }
        Some(new)
    });
    let merged = graph.topo_order(targets).len() - out.len();
    (out, new_targets, merged)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::op::{BinaryOp, InputId, UnaryOp};
    use crate::scalar::Scalar;

    fn input(g: &mut Graph, id: u64, shape: &[usize]) -> NodeId {
        g.add(Op::Input(InputId(id)), DType::F32, shape, &[])
    }

    fn view(g: &mut Graph, x: NodeId, l: Layout) -> NodeId {
        let dtype = g.node(x).dtype;
        let shape = l.shape.clone();
        g.add(Op::view(l), dtype, shape, &[x])
    }

    fn unary(g: &mut Graph, op: UnaryOp, x: NodeId) -> NodeId {
        let (dtype, shape) = (g.node(x).dtype, g.node(x).shape.clone());
        g.add(Op::Unary(op), dtype, shape, &[x])
    }

    fn binary(g: &mut Graph, op: BinaryOp, x: NodeId, y: NodeId) -> NodeId {
        let (dtype, shape) = (g.node(x).dtype, g.node(x).shape.clone());
        g.add(Op::Binary(op), dtype, shape, &[x, y])
    }

    fn verified(g: &Graph) {
        g.verify().expect("every node of a pass's result verifies");
    }

    /// Every element address of `l` over its storage, row-major.
    fn addresses(l: &Layout) -> Vec<usize> {
        l.offsets().collect()
    }

    /// The addresses the chain `l2` over `l1` reads from `l1`'s storage.
    fn chain_addresses(l1: &Layout, l2: &Layout) -> Vec<usize> {
        let first = addresses(l1);
        addresses(l2).into_iter().map(|p| first[p]).collect()
    }

    #[test]
    fn dead_branches_vanish() {
        let mut g = Graph::new();
        let x = input(&mut g, 0, &[4]);
        let y = input(&mut g, 1, &[4]);
        let live = unary(&mut g, UnaryOp::Exp, x);
        let dead = binary(&mut g, BinaryOp::Add, live, y);
        let _dead2 = unary(&mut g, UnaryOp::Neg, dead);
        let (copy, t) = remove_dead(&g, &[live]);
        verified(&copy);
        assert_eq!(copy.len(), 2);
        assert_eq!(copy.dump(&t), g.dump(&[live]));
        let opt = optimize(&g, &[live]);
        assert_eq!((opt.report.nodes_in, opt.report.nodes_out), (2, 2));
        assert_eq!(opt.report.dead_removed, 0);
    }

    #[test]
    fn a_diamond_reused_twice_is_merged() {
        // Two copies of the diamond d = exp(x) * neg(exp(x)) combined: one survives.
        let mut g = Graph::new();
        let x = input(&mut g, 0, &[3]);
        let diamond = |g: &mut Graph| {
            let e = unary(g, UnaryOp::Exp, x);
            let e2 = unary(g, UnaryOp::Exp, x);
            let n = unary(g, UnaryOp::Neg, e2);
            binary(g, BinaryOp::Mul, e, n)
        };
        let d1 = diamond(&mut g);
        let d2 = diamond(&mut g);
        let y = binary(&mut g, BinaryOp::Add, d1, d2);
        let (copy, t, merged) = eliminate_common_subexpressions(&g, &[y, d1, d2]);
        verified(&copy);
        assert_eq!(merged, 5);
        assert_eq!(copy.len(), 5); // x, exp, neg, mul, add
        assert_eq!(t[1], t[2]);
        assert_eq!(copy.inputs(t[0]), vec![t[1], t[1]]);
    }

    #[test]
    fn cse_keeps_different_inputs_attributes_and_types_apart() {
        let mut g = Graph::new();
        let a = input(&mut g, 0, &[2]);
        let b = input(&mut g, 1, &[2]);
        let a2 = input(&mut g, 0, &[2]);
        let ea = unary(&mut g, UnaryOp::Exp, a);
        let eb = unary(&mut g, UnaryOp::Exp, b);
        let ea2 = unary(&mut g, UnaryOp::Exp, a2);
        let f64_full = g.add(Op::Full(Scalar::Int(1)), DType::F64, vec![2], &[]);
        let f32_full = g.add(Op::Full(Scalar::Int(1)), DType::F32, vec![2], &[]);
        let wide = g.add(Op::Full(Scalar::Int(1)), DType::F32, vec![3], &[]);
        let nan1 = g.add(Op::Full(Scalar::Float(f64::NAN)), DType::F32, vec![], &[]);
        let nan2 = g.add(Op::Full(Scalar::Float(f64::NAN)), DType::F32, vec![], &[]);
        let sum_keep = g.add(
            Op::Reduce {
                op: crate::op::ReduceOp::Sum,
                axes: vec![0],
                keepdim: true,
            },
            DType::F32,
            vec![1],
            &[ea],
        );
        let sum = g.add(
            Op::Reduce {
                op: crate::op::ReduceOp::Sum,
                axes: vec![0],
                keepdim: false,
            },
            DType::F32,
            vec![],
            &[ea],
        );
        let targets = [
            ea, eb, ea2, f64_full, f32_full, wide, nan1, nan2, sum_keep, sum,
        ];
        let (copy, t, merged) = eliminate_common_subexpressions(&g, &targets);
        verified(&copy);
        assert_eq!(merged, 2); // the second input(buf0), then exp of it
        assert_eq!(t[0], t[2]);
        let distinct: std::collections::HashSet<_> = t.iter().collect();
        assert_eq!(distinct.len(), targets.len() - 1);
    }

    #[test]
    fn casts_to_the_same_dtype_are_removed_and_others_kept() {
        let mut g = Graph::new();
        let x = input(&mut g, 0, &[2]);
        let same = g.add(Op::Cast, DType::F32, vec![2], &[x]);
        let wide = g.add(Op::Cast, DType::F64, vec![2], &[same]);
        let back = g.add(Op::Cast, DType::F64, vec![2], &[wide]);
        let (copy, t, removed) = remove_same_dtype_casts(&g, &[back]);
        verified(&copy);
        assert_eq!(removed, 2);
        assert_eq!(
            copy.dump(&t),
            "%0 = input(buf0) : float32[2]\n%1 = cast(%0) : float64[2]  -> t0\n"
        );
    }

    #[test]
    fn views_of_full_are_folded_when_no_larger() {
        let mut g = Graph::new();
        let one = g.add(Op::Full(Scalar::Float(1.5)), DType::F32, vec![], &[]);
        let big = g.add(Op::Full(Scalar::Float(1.5)), DType::F32, vec![10], &[]);
        let expanded = view(
            &mut g,
            one,
            Layout {
                shape: vec![2, 3].into(),
                strides: vec![0, 0].into(),
                offset: 0,
            },
        );
        // A slice of a larger full is kept: folding it would skip the larger
        // allocation the unoptimized graph makes (and its out-of-memory error).
        let sliced = view(&mut g, big, Layout::contiguous(&[4]));
        let (copy, t, folded) = fold_full_views(&g, &[expanded, sliced]);
        verified(&copy);
        assert_eq!(folded, 1);
        assert_eq!(
            copy.dump(&t),
            "%0 = full(value=1.5) : float32[2, 3]  -> t0\n\
             %1 = full(value=1.5) : float32[10]\n\
             %2 = view(%1; shape=[4], strides=[1], offset=0) : float32[4]  -> t1\n"
        );
    }

    #[test]
    fn identity_views_are_removed() {
        let mut g = Graph::new();
        let x = input(&mut g, 0, &[2, 3]);
        let same = view(&mut g, x, Layout::contiguous(&[2, 3]));
        let reshaped = view(&mut g, same, Layout::contiguous(&[3, 2]));
        let (copy, t, composed, identities) = compose_views(&g, &[same, reshaped]);
        verified(&copy);
        assert_eq!((composed, identities), (0, 1));
        assert_eq!(
            copy.dump(&t),
            "%0 = input(buf0) : float32[2, 3]  -> t0\n\
             %1 = view(%0; shape=[3, 2], strides=[2, 1], offset=0) : float32[3, 2]  -> t1\n"
        );
    }

    #[test]
    fn a_whole_write_is_its_value_unless_its_base_is_written_in_place() {
        let mut g = Graph::new();
        let x = input(&mut g, 0, &[2, 3]);
        let v = input(&mut g, 1, &[2, 3]);
        let whole = Layout::contiguous(&[2, 3]);
        let w = g.add(Op::write_view(whole), DType::F32, vec![2, 3], &[x, v]);
        let (copy, t, _, identities) = compose_views(&g, &[w]);
        verified(&copy);
        assert_eq!(identities, 1);
        assert_eq!(copy.dump(&t), "%0 = input(buf0) : float32[2, 3]  -> t0\n");
        let (copy, t, _, identities) = compose_views_keeping(&g, &[w], &[InputId(0)]);
        assert_eq!(identities, 0);
        assert!(matches!(copy.node(t[0]).op, Op::WriteView(_)));
        // a write of part of the base stays
        let row = Layout::contiguous(&[2, 3]).select(0, 1).unwrap();
        let r = input(&mut g, 2, &[3]);
        let part = g.add(Op::write_view(row), DType::F32, vec![2, 3], &[x, r]);
        let (copy, t, _, identities) = compose_views(&g, &[part]);
        assert_eq!(identities, 0);
        assert!(matches!(copy.node(t[0]).op, Op::WriteView(_)));
    }

    #[test]
    fn select_of_a_transpose_is_one_view() {
        let mut g = Graph::new();
        let x = input(&mut g, 0, &[4, 5]);
        let l1 = Layout::contiguous(&[4, 5]).t().unwrap();
        let l2 = Layout::contiguous(&[5, 4]).select(1, 3).unwrap();
        let xt = view(&mut g, x, l1.clone());
        let y = view(&mut g, xt, l2.clone());
        let (copy, t, composed, _) = compose_views(&g, &[y]);
        verified(&copy);
        assert_eq!(composed, 1);
        assert_eq!(copy.len(), 2);
        let Op::View(l) = &copy.node(t[0]).op else {
            panic!("a view")
        };
        assert_eq!(**l, l1.select(1, 3).unwrap());
        assert_eq!(addresses(l), chain_addresses(&l1, &l2));
    }

    #[test]
    fn expand_of_a_slice_is_one_view() {
        let mut g = Graph::new();
        let x = input(&mut g, 0, &[6, 4]);
        let l1 = Layout::contiguous(&[6, 4])
            .slice(0, Some(1), Some(5), 2)
            .unwrap()
            .narrow(1, 1, 1)
            .unwrap(); // [2, 1]
        let l2 = Layout::contiguous(&[2, 1]).expand(&[3, 2, 5]).unwrap();
        let xs = view(&mut g, x, l1.clone());
        let y = view(&mut g, xs, l2.clone());
        let (copy, t, composed, _) = compose_views(&g, &[y]);
        verified(&copy);
        assert_eq!(composed, 1);
        let Op::View(l) = &copy.node(t[0]).op else {
            panic!("a view")
        };
        assert_eq!(addresses(l), chain_addresses(&l1, &l2));
        assert_eq!(l.strides, crate::layout::Steps::from_slice(&[0, 8, 0]));
    }

    #[test]
    fn permute_of_a_permute_is_one_view_or_the_input() {
        let mut g = Graph::new();
        let x = input(&mut g, 0, &[2, 3, 4]);
        let l1 = Layout::contiguous(&[2, 3, 4]).permute(&[2, 0, 1]).unwrap();
        let l2 = Layout::contiguous(&l1.shape).permute(&[2, 0, 1]).unwrap();
        let l3 = Layout::contiguous(&l2.shape).permute(&[2, 0, 1]).unwrap();
        let a = view(&mut g, x, l1.clone());
        let b = view(&mut g, a, l2.clone());
        let c = view(&mut g, b, l3);
        let (copy, t, composed, _) = compose_views(&g, &[b, c]);
        verified(&copy);
        assert_eq!(composed, 2);
        let Op::View(l) = &copy.node(t[0]).op else {
            panic!("a view")
        };
        assert_eq!(**l, l1.permute(&[2, 0, 1]).unwrap());
        assert_eq!(addresses(l), chain_addresses(&l1, &l2));
        // Three rotations of three dims are the identity: x itself.
        assert_eq!(copy.node(t[1]).op, Op::Input(InputId(0)));
        assert_eq!(copy.len(), 2);
    }

    #[test]
    fn chains_that_are_no_layout_are_kept() {
        let mut g = Graph::new();
        let x = input(&mut g, 0, &[3, 4]);
        let l1 = Layout::contiguous(&[3, 4]).t().unwrap();
        // Flattening a transpose needs a copy: no single layout reads it.
        let l2 = Layout::contiguous(&[4, 3]).view(&[12]).unwrap();
        let xt = view(&mut g, x, l1.clone());
        let y = view(&mut g, xt, l2.clone());
        let (copy, t, composed, _) = compose_views(&g, &[y]);
        verified(&copy);
        assert_eq!(composed, 0);
        assert_eq!(copy.dump(&t), g.dump(&[y]));
        // A slice that crosses rows of a sliced matrix neither.
        let l1 = Layout::contiguous(&[3, 4]).narrow(1, 0, 2).unwrap(); // [3, 2]
        let l2 = Layout {
            shape: vec![3].into(),
            strides: vec![1].into(),
            offset: 1,
        };
        assert_eq!(compose_layouts(&l1, &l2), None);
    }

    #[test]
    fn diagonal_of_an_unfold_steps_in_two_dims() {
        // The diagonal's stride over l1's numbering (3 = 2 + 1) is a step in two dims
        // of l1 at once; over x it is the sum of their strides.
        let l1 = Layout {
            shape: vec![1, 4, 2].into(),
            strides: vec![4, 1, 4].into(),
            offset: 0,
        };
        let l2 = Layout::contiguous(&[1, 4, 2]).diagonal(0, 1, 2).unwrap();
        let l = compose_layouts(&l1, &l2).unwrap();
        assert_eq!(addresses(&l), chain_addresses(&l1, &l2));
        assert_eq!(l.strides, crate::layout::Steps::from_slice(&[0, 5]));
    }

    #[test]
    fn flatten_of_a_contiguous_slice_composes() {
        // x[1:] of a [4, 3] matrix is contiguous rows: flattening it is one view.
        let l1 = Layout::contiguous(&[4, 3]).narrow(0, 1, 3).unwrap();
        let l2 = Layout::contiguous(&[3, 3]).view(&[9]).unwrap();
        let l = compose_layouts(&l1, &l2).unwrap();
        assert_eq!(addresses(&l), chain_addresses(&l1, &l2));
        assert_eq!(
            (l.strides.clone(), l.offset),
            (crate::layout::Steps::from_slice(&[1]), 3)
        );
    }

    #[test]
    fn composition_matches_the_chain_on_every_small_case() {
        // Exhaustive over a family of view pairs: whenever a layout comes back, it
        // reads exactly what the chain reads.
        let base = Layout::contiguous(&[3, 4, 2]);
        let firsts: Vec<Layout> = vec![
            base.clone(),
            base.permute(&[2, 0, 1]).unwrap(),
            base.narrow(1, 1, 2).unwrap(),
            base.slice(1, Some(0), Some(4), 2).unwrap(),
            base.select(2, 1).unwrap(),
            base.unsqueeze(1).unwrap().expand(&[3, 2, 4, 2]).unwrap(),
            base.diagonal(0, 0, 1).unwrap(),
            base.unfold(1, 2, 1).unwrap(),
        ];
        let mut composed = 0;
        for l1 in &firsts {
            let c = Layout::contiguous(&l1.shape);
            let nd = c.ndim() as isize;
            let mut seconds = vec![c.t().ok(), c.squeeze().into(), c.unsqueeze(0).ok()];
            for d in 0..nd {
                seconds.push(c.select(d, 0).ok());
                seconds.push(c.narrow(d, 1, 1).ok());
                seconds.push(c.slice(d, Some(0), None, 2).ok());
                seconds.push(c.transpose(d, 0).ok());
            }
            seconds.push(c.view(&[-1]).ok());
            seconds.push(c.diagonal(0, 0, -1).ok());
            for l2 in seconds.into_iter().flatten() {
                if let Some(l) = compose_layouts(l1, &l2) {
                    composed += 1;
                    assert_eq!(
                        addresses(&l),
                        chain_addresses(l1, &l2),
                        "{l1} then {l2} gave {l}"
                    );
                }
            }
        }
        assert!(composed > 40, "only {composed} pairs composed");
    }

    #[test]
    fn optimize_runs_every_pass_and_verifies() {
        let mut g = Graph::new();
        let x = input(&mut g, 0, &[2, 3]);
        let s = g.add(Op::Full(Scalar::Int(2)), DType::F32, vec![], &[]);
        let bcast = Layout {
            shape: vec![2, 3].into(),
            strides: vec![0, 0].into(),
            offset: 0,
        };
        let s1 = view(&mut g, s, bcast.clone());
        let s2 = view(&mut g, s, bcast);
        let c = g.add(Op::Cast, DType::F32, vec![2, 3], &[x]);
        let m1 = binary(&mut g, BinaryOp::Mul, c, s1);
        let m2 = binary(&mut g, BinaryOp::Mul, x, s2);
        let y = binary(&mut g, BinaryOp::Add, m1, m2);
        let xt = view(&mut g, y, Layout::contiguous(&[2, 3]).t().unwrap());
        let back = view(&mut g, xt, Layout::contiguous(&[3, 2]).t().unwrap());
        let _dead = unary(&mut g, UnaryOp::Exp, back);
        let opt = optimize(&g, &[back]);
        verified(&opt.graph);
        assert_eq!(
            opt.graph.dump(&opt.targets),
            "%0 = input(buf0) : float32[2, 3]\n\
             %1 = full(value=2) : float32[2, 3]\n\
             %2 = mul(%0, %1) : float32[2, 3]\n\
             %3 = add(%2, %2) : float32[2, 3]  -> t0\n"
        );
        assert_eq!(
            opt.report,
            PassReport {
                nodes_in: 10,
                nodes_out: 4,
                casts_removed: 1,
                views_composed: 1,
                identity_views_removed: 1,
                fulls_folded: 2,
                cse_merged: 2,
                dead_removed: 2,
            }
        );
    }
}
