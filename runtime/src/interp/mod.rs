//! The reference interpreter: executes a [`Graph`] node by node on host buffers with
//! PyTorch's CPU numerics. It is the oracle every compiled backend is compared with,
//! so it favours clarity over speed (but every op is linear in its data, or
//! `B·M·K·N` for matmul).
//!
//! [`execute`] walks [`Graph::topo_order`] of the targets, memoizing each node's
//! output as a contiguous row-major [`Buffer`] of the node's dtype and element count,
//! and frees an intermediate as soon as its last consumer in that order has run.
//! The node's dtype and shape are trusted as the builder recorded them (promotion and
//! broadcasting are already explicit as `Cast` and `View` nodes); a node that
//! contradicts them is reported as [`Error::Malformed`], never a panic.
//!
//! Submodules: `cast` (`.to(dtype)`, `full`, `arange`), [`float8`] (the float8
//! codecs `cast` uses, public so that printing decodes with the same rules),
//! `elementwise` (unary, binary, where; `binary_math`: the binary math functions `fmax` … `lcm`),
//! `pointwise` (unary math, predicates, activations and `UnaryParam`
//! nodes), `reduce` (reductions, arg-reductions, cumsum, softmax; `reduce_special`:
//! nansum, any, logsumexp, norm …), `scan` (cumprod, cummax/cummin, logcumsumexp),
//! `matmul`, `index` (gather, scatter, take, flip), `creation` (random and
//! linspace), and `num` (the numeric traits the kernels are generic over).

pub(crate) mod binary_math;
mod cast;
mod creation;
pub(crate) mod elementwise;
pub mod float8;
mod index;
mod map;
pub(crate) mod matmul;
pub(crate) mod num;
pub(crate) mod pointwise;
mod reduce;
mod reduce_special;
mod rows;
mod scan;

pub use pointwise::nan_to_num_defaults;

use crate::buffer::{Buffer, Element};
use crate::error::{Error, Result};
use hashbrown::{HashMap as Map, HashSet};
use lazyfuse_ir::{Graph, InputId, Layout, Node, NodeId, Op};
use std::collections::HashMap;
use std::sync::Arc;

/// What one execution did, for tests and diagnostics.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ExecStats {
    /// Number of nodes evaluated (the length of the topological order).
    pub nodes: usize,
    /// The largest number of node outputs held at once (targets included).
    pub peak_live_buffers: usize,
}

/// Executes the graph for `targets`, returning one buffer per target (in order;
/// a repeated target gives the same buffer twice). `inputs` holds the buffer of
/// every `Input` node the targets depend on.
///
/// ```
/// use lazyfuse_ir::{BinaryOp, DType, Graph, InputId, Op, Scalar};
/// use lazyfuse_runtime::{interp::execute, Buffer};
/// use std::{collections::HashMap, sync::Arc};
///
/// let mut g = Graph::new();
/// let x = g.add(Op::Input(InputId(0)), DType::I32, vec![3], &[]);
/// let two = g.add(Op::Full(Scalar::Int(2)), DType::I32, vec![3], &[]);
/// let y = g.add(Op::Binary(BinaryOp::Mul), DType::I32, vec![3], &[x, two]);
/// let inputs = HashMap::from([(InputId(0), Arc::new(Buffer::from_vec(vec![1i32, -2, 3])))]);
/// let out = execute(&g, &inputs, &[y]).unwrap();
/// assert_eq!(*out[0], Buffer::from_vec(vec![2i32, -4, 6]));
/// ```
pub fn execute(
    graph: &Graph,
    inputs: &HashMap<InputId, Arc<Buffer>>,
    targets: &[NodeId],
) -> Result<Vec<Arc<Buffer>>> {
    execute_with_stats(graph, inputs, targets).map(|(out, _)| out)
}

/// [`execute`], also reporting [`ExecStats`] (how many buffers were alive at most,
/// which shows that intermediates are freed).
pub fn execute_with_stats(
    graph: &Graph,
    inputs: &HashMap<InputId, Arc<Buffer>>,
    targets: &[NodeId],
) -> Result<(Vec<Arc<Buffer>>, ExecStats)> {
    if let Some(t) = targets.iter().find(|t| !graph.contains(**t)) {
        return Err(Error::Malformed(format!("target {t} is not in the graph")));
    }
    let order = graph.topo_order(targets);
    let node_inputs: Vec<&[NodeId]> = order.iter().map(|&n| graph.inputs(n)).collect();
    // Remaining uses of each node inside this order (one per input slot).
    let mut uses: Map<NodeId, usize> = Map::new();
    for &ins in &node_inputs {
        for &i in ins {
            *uses.entry(i).or_default() += 1;
        }
    }
    let keep: HashSet<NodeId> = targets.iter().copied().collect();
    let mut memo: Map<NodeId, Arc<Buffer>> = Map::new();
    let mut stats = ExecStats {
        nodes: order.len(),
        peak_live_buffers: 0,
    };
    for (&id, ins) in order.iter().zip(&node_inputs) {
        let node = graph.node(id);
        let args = ins
            .iter()
            .map(|i| {
                memo.get(i)
                    .cloned()
                    .ok_or_else(|| Error::Malformed(format!("{id} reads {i} before it ran")))
            })
            .collect::<Result<Vec<_>>>()?;
        let arg_nodes: Vec<&Node> = ins.iter().map(|&i| graph.node(i)).collect();
        // Sizes that overflow or that the allocator refuses are errors, not aborts.
        if !matches!(node.op, Op::Input(_)) {
            let creation = matches!(
                node.op,
                Op::Full(_) | Op::Arange { .. } | Op::Random { .. } | Op::Linspace { .. }
            );
            crate::buffer::check_allocation(&node.shape, node.dtype, creation)?;
        }
        let out = eval(node, &args, &arg_nodes, inputs)?;
        if out.dtype() != node.dtype || out.len() != node.numel() {
            return Err(Error::Malformed(format!(
                "{id} = {}({}) produced {} x {} elements, the node says {}{:?}",
                node.op.name(),
                node.op.attributes(),
                out.dtype(),
                out.len(),
                node.dtype,
                node.shape
            )));
        }
        drop(args);
        memo.insert(id, out);
        stats.peak_live_buffers = stats.peak_live_buffers.max(memo.len());
        for i in *ins {
            if let Some(n) = uses.get_mut(i) {
                *n -= 1;
                if *n == 0 && !keep.contains(i) {
                    memo.remove(i);
                }
            }
        }
    }
    let outs = targets
        .iter()
        .map(|t| {
            memo.get(t)
                .cloned()
                .ok_or_else(|| Error::Malformed(format!("target {t} was not computed")))
        })
        .collect::<Result<Vec<_>>>()?;
    Ok((outs, stats))
}

/// The shape an axis-wise op sees: a zero-dim tensor acts as a one-element vector
/// (PyTorch accepts `dim=0`/`-1` on it).
fn axis_shape(shape: &[usize]) -> Vec<usize> {
    if shape.is_empty() {
        vec![1]
    } else {
        shape.to_vec()
    }
}

fn check_axis(axis: usize, shape: &[usize], op: &Op) -> Result<()> {
    if axis < shape.len() {
        Ok(())
    } else {
        Err(Error::Malformed(format!(
            "{} axis {axis} out of range for shape {shape:?}",
            op.name()
        )))
    }
}

fn check_len(op: &Op, buffers: &[Arc<Buffer>], n: usize) -> Result<()> {
    if buffers.iter().all(|b| b.len() == n) {
        Ok(())
    } else {
        Err(Error::Malformed(format!(
            "{} inputs do not have the node's {n} elements",
            op.name()
        )))
    }
}

/// Evaluates one node from its input buffers (`args`) and input nodes.
fn eval(
    node: &Node,
    args: &[Arc<Buffer>],
    arg_nodes: &[&Node],
    inputs: &HashMap<InputId, Arc<Buffer>>,
) -> Result<Arc<Buffer>> {
    let op = &node.op;
    let arity = match op {
        Op::Input(_) | Op::Full(_) | Op::Arange { .. } => 0,
        Op::View(_) | Op::Cast | Op::Unary(_) | Op::Reduce { .. } => 1,
        Op::UnaryParam(_) => 1,
        Op::ArgReduce { .. } | Op::Cumsum { .. } | Op::Softmax { .. } => 1,
        Op::Binary(_) | Op::Matmul | Op::WriteView(_) => 2,
        Op::Where => 3,
        Op::Cat { .. } => args.len().max(1),
        Op::Flip { .. } => 1,
        Op::Gather { .. } | Op::IndexSelect { .. } | Op::Take => 2,
        Op::Scatter { .. } => 3,
        Op::Scan { .. } => 1,
        Op::Random { .. } | Op::Linspace { .. } => 0,
        Op::Bitcast => 1,
    };
    if args.len() != arity {
        return Err(Error::Malformed(format!(
            "{} has {} inputs, expected {arity}",
            op.name(),
            args.len()
        )));
    }
    let n = node.numel();
    let new = |b: Buffer| Ok(Arc::new(b));
    match op {
        Op::Input(id) => inputs
            .get(id)
            .cloned()
            .ok_or_else(|| Error::Malformed(format!("input {id} was not provided"))),
        Op::Full(value) => new(cast::full(*value, node.dtype, n)?),
        Op::Arange { start, step } => new(cast::arange(*start, *step, node.dtype, n)?),
        Op::View(layout) => {
            if layout.required_storage() > args[0].len() || layout.numel() != n {
                return Err(Error::Malformed(format!(
                    "view {layout} does not fit a storage of {} elements",
                    args[0].len()
                )));
            }
            if layout.is_identity_of(args[0].len()) {
                Ok(args[0].clone())
            } else {
                new(args[0].gather(layout))
            }
        }
        Op::Cast => {
            if args[0].dtype() == node.dtype {
                Ok(args[0].clone())
            } else {
                new(cast::cast(&args[0], node.dtype)?)
            }
        }
        Op::Unary(u) => {
            check_len(op, args, n)?;
            new(elementwise::unary(*u, &args[0])?)
        }
        Op::Binary(b) => {
            check_len(op, args, n)?;
            new(elementwise::binary(*b, &args[0], &args[1])?)
        }
        Op::Where => {
            check_len(op, args, n)?;
            new(elementwise::where_(&args[0], &args[1], &args[2])?)
        }
        Op::Reduce { op: r, axes, .. } => {
            let shape = axis_shape(&arg_nodes[0].shape);
            for (i, &a) in axes.iter().enumerate() {
                check_axis(a, &shape, op)?;
                if i > 0 && axes[i - 1] >= a {
                    return Err(Error::Malformed(format!("reduce axes {axes:?} not sorted")));
                }
            }
            new(reduce::reduce(*r, &args[0], &shape, axes)?)
        }
        Op::ArgReduce { op: a, axis, .. } => {
            let shape = axis_shape(&arg_nodes[0].shape);
            if let Some(axis) = axis {
                check_axis(*axis, &shape, op)?;
            }
            new(reduce::arg_reduce(*a, &args[0], &shape, *axis)?)
        }
        Op::Cumsum { axis } => {
            let shape = axis_shape(&arg_nodes[0].shape);
            check_axis(*axis, &shape, op)?;
            new(reduce::cumsum(&args[0], &shape, *axis)?)
        }
        Op::Softmax { axis, log } => {
            let shape = axis_shape(&arg_nodes[0].shape);
            check_axis(*axis, &shape, op)?;
            new(reduce::softmax(&args[0], &shape, *axis, *log)?)
        }
        Op::Matmul => {
            let (a, b) = (&arg_nodes[0].shape, &arg_nodes[1].shape);
            if a.len() != 3 || b.len() != 3 || a[0] != b[0] || a[2] != b[1] {
                return Err(Error::Malformed(format!("matmul of {a:?} and {b:?}")));
            }
            let d = matmul::Dims {
                b: a[0],
                m: a[1],
                k: a[2],
                n: b[2],
            };
            new(matmul::matmul(&args[0], &args[1], d)?)
        }
        Op::Cat { axis } => {
            let shapes: Vec<&[usize]> = arg_nodes.iter().map(|n| n.shape.as_slice()).collect();
            new(cat(args, &shapes, *axis)?)
        }
        Op::WriteView(layout) => new(write_view(&args[0], layout, &args[1])?),
        Op::Gather { .. }
        | Op::IndexSelect { .. }
        | Op::Take
        | Op::Scatter { .. }
        | Op::Flip { .. } => new(index::eval(node, args, arg_nodes)?),
        Op::Scan { op: s, axis } => {
            let shape = axis_shape(&arg_nodes[0].shape);
            check_axis(*axis, &shape, op)?;
            new(scan::scan(*s, &args[0], &shape, *axis)?)
        }
        Op::UnaryParam(p) => {
            check_len(op, args, n)?;
            new(pointwise::unary_param(*p, &args[0])?)
        }
        Op::Random {
            seed,
            offset,
            distribution,
        } => new(creation::random(
            *distribution,
            *seed,
            *offset,
            node.dtype,
            n,
        )?),
        Op::Linspace { start, end } => new(creation::linspace(*start, *end, node.dtype, n)?),
        Op::Bitcast => new(args[0].bitcast(node.dtype)?),
    }
}

/// Concatenation along `axis`: for every index of the dims before `axis`, each
/// input contributes one contiguous chunk in turn.
fn cat(args: &[Arc<Buffer>], shapes: &[&[usize]], axis: usize) -> Result<Buffer> {
    let first = &args[0];
    for (b, s) in args.iter().zip(shapes) {
        if axis >= s.len() || s.len() != shapes[0].len() || b.dtype() != first.dtype() {
            return Err(Error::Malformed(format!("cat of {shapes:?} along {axis}")));
        }
    }
    let outer: usize = shapes[0][..axis].iter().product();
    // element count of one chunk of each input
    let chunks: Vec<usize> = shapes.iter().map(|s| s[axis..].iter().product()).collect();
    fn typed<T: Element>(args: &[Arc<Buffer>], outer: usize, chunks: &[usize]) -> Result<Buffer> {
        let slices = args
            .iter()
            .map(|b| b.as_slice::<T>())
            .collect::<Option<Vec<&[T]>>>()
            .ok_or_else(|| Error::Malformed("cat of mixed dtypes".into()))?;
        let mut out = Vec::with_capacity(chunks.iter().sum::<usize>() * outer);
        for o in 0..outer {
            for (s, &c) in slices.iter().zip(chunks) {
                out.extend_from_slice(&s[o * c..(o + 1) * c]);
            }
        }
        Ok(Buffer::from_vec(out))
    }
    match &**first {
        Buffer::Raw { dtype, .. } => {
            let size = dtype.size_in_bytes();
            let mut out = Vec::new();
            for o in 0..outer {
                for (b, &c) in args.iter().zip(&chunks) {
                    if let Buffer::Raw { bytes, .. } = &**b {
                        out.extend_from_slice(&bytes[o * c * size..(o + 1) * c * size]);
                    }
                }
            }
            Ok(Buffer::Raw {
                dtype: *dtype,
                bytes: out,
            })
        }
        other => crate::with_buffer!(other, v => {
            fn of<T: Element>(_: &[T], args: &[Arc<Buffer>], outer: usize, chunks: &[usize]) -> Result<Buffer> {
                typed::<T>(args, outer, chunks)
            }
            of(v, args, outer, &chunks)
        }, raw => Err(Error::Malformed("cat of raw buffers".into()))),
    }
}

/// `base` with the positions `layout` addresses overwritten by `values` (row-major);
/// when positions repeat, the last write wins.
fn write_view(base: &Buffer, layout: &Layout, values: &Buffer) -> Result<Buffer> {
    if layout.required_storage() > base.len()
        || values.len() != layout.numel()
        || values.dtype() != base.dtype()
    {
        return Err(Error::Malformed(format!(
            "write_view {layout} of {} x {} into {} x {}",
            values.dtype(),
            values.len(),
            base.dtype(),
            base.len()
        )));
    }
    match (base, values) {
        (Buffer::Raw { dtype, bytes }, Buffer::Raw { bytes: vals, .. }) => {
            let size = dtype.size_in_bytes();
            let mut out = bytes.clone();
            for (i, o) in layout.offsets().enumerate() {
                out[o * size..(o + 1) * size].copy_from_slice(&vals[i * size..(i + 1) * size]);
            }
            Ok(Buffer::Raw {
                dtype: *dtype,
                bytes: out,
            })
        }
        _ => crate::with_buffer!(base, v => {
            let mut out = v.clone();
            let vals = values
                .as_slice()
                .ok_or_else(|| Error::Malformed("write_view dtypes".into()))?;
            for (o, &x) in layout.offsets().zip(vals) {
                out[o] = x;
            }
            Ok(Buffer::from_vec(out))
        }, raw => Err(Error::Malformed("write_view of mixed raw buffers".into()))),
    }
}

// ---------------------------------------------------------------------------
// Single-node evaluation for extern steps (the executor and
// `crate::kernel_eval`), and the interpreter's buffer kernels for the kernel-IR
// reference evaluator, so that both compute with exactly these numerics.

/// Evaluates one node from its input buffers, as [`execute`] does for every node
/// (including its allocation checks): the routine of an extern step.
///
/// ```
/// use lazyfuse_ir::{DType, Graph, Op, Scalar};
/// use lazyfuse_runtime::{interp::eval_node, Buffer};
/// use std::collections::HashMap;
/// let mut g = Graph::new();
/// let a = g.add(Op::Full(Scalar::Int(3)), DType::I32, vec![2], &[]);
/// let out = eval_node(g.node(a), &[], &[], &HashMap::new()).unwrap();
/// assert_eq!(*out, Buffer::from_vec(vec![3i32, 3]));
/// ```
pub fn eval_node(
    node: &Node,
    args: &[Arc<Buffer>],
    arg_nodes: &[&Node],
    inputs: &HashMap<InputId, Arc<Buffer>>,
) -> Result<Arc<Buffer>> {
    if !matches!(node.op, Op::Input(_)) {
        let creation = matches!(
            node.op,
            Op::Full(_) | Op::Arange { .. } | Op::Random { .. } | Op::Linspace { .. }
        );
        crate::buffer::check_allocation(&node.shape, node.dtype, creation)?;
    }
    let out = eval(node, args, arg_nodes, inputs)?;
    if out.dtype() != node.dtype || out.len() != node.numel() {
        return Err(Error::Malformed(format!(
            "{}({}) produced {} x {} elements, the node says {}{:?}",
            node.op.name(),
            node.op.attributes(),
            out.dtype(),
            out.len(),
            node.dtype,
            node.shape
        )));
    }
    Ok(out)
}

/// The interpreter's whole-buffer kernels, for `crate::kernel_eval`.
pub(crate) mod kernels {
    pub(crate) use super::cast::cast;
    pub(crate) use super::elementwise::{binary, unary, where_};
    pub(crate) use super::pointwise::unary_param;
    pub(crate) use super::reduce::{arg_reduce, cumsum, reduce};
    pub(crate) use super::scan::{log_add_exp, scan};
}
