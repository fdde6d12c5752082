//! Extern steps: which nodes run outside loop kernels (matmul, large `cat`, the
//! ops without a loop form), and the strided operand views a host matmul reads in
//! place.

use super::view_chain::StridedRead;
use super::{arith_dtype, ScheduleOptions, MAX_CAT_KERNELS};
use crate::dtype::DType;
use crate::graph::{Graph, Node, NodeId};
use crate::kernel::{EpilogueOp, ExternView, MathMode, ZeroPadded};
use crate::layout::Layout;
use crate::op::{BinaryOp, Op, ReduceOp, UnaryOp};
use crate::scalar::Scalar;

/// How the float matmul `n` reads its operand view `l` in place (a transposed or
/// batch-broadcast operand), or `None` where the view is stored first: a matmul of
/// float32/float64 in Fast math that runs on the host (`gemm` takes any strides;
/// the interpreter's routine of Exact math gathers the view first, which costs
/// what storing it would).
pub(super) fn strided_operand(
    graph: &Graph,
    n: NodeId,
    l: &crate::layout::Layout,
    opts: &ScheduleOptions,
) -> Option<ExternView> {
    let strides = unsigned_strides(l)?;
    (host_float_matmul(graph, n, opts) && l.shape.len() == 3).then_some(ExternView {
        offset: l.offset,
        strides,
        dims: None,
        padded: None,
    })
}

/// Whether `n` is a float32/float64 matmul of Fast math that runs on the host
/// (`gemm` and `tiled_gemm` read its operands through their strides).
fn host_float_matmul(graph: &Graph, n: NodeId, opts: &ScheduleOptions) -> bool {
    let node = graph.node(n);
    matches!(node.op, Op::Matmul)
        && !opts.matmul_kernels
        && opts.math == MathMode::Fast
        && matches!(node.dtype, DType::F32 | DType::F64)
}

/// The strides of `l` as buffer steps, or `None` where one is negative.
fn unsigned_strides(l: &crate::layout::Layout) -> Option<Vec<usize>> {
    l.strides.iter().map(|&s| usize::try_from(s).ok()).collect()
}

/// How the float matmul `n` reads its operand `i` in place where `i` is a chain
/// of views over a stored node: a strided view `p` (a convolution's windows
/// `[N, C, kh, kw, OH, OW]`), then reshapes and permutes of its row-major value
/// (the windows read as `[N, C·kh·kw, OH·OW]`, or as the weight gradient's
/// `[C·kh·kw, N·OH·OW]`) composed into one strided read ([`StridedRead`]): the
/// product gathers the operand tile by tile instead of storing the copy. Where
/// the stored node is a zero padding of another ([`zero_padding`]) read by
/// nothing else, the view reads the unpadded one and the padded buffer is never
/// stored. Returns the node read, the view, and the padding node skipped; `None`
/// for other operands, where `sole` (read by one node alone, and not a target)
/// fails for a view of the chain, or where the read's dims do not group into
/// the operand's.
pub(super) fn windows_operand(
    graph: &Graph,
    n: NodeId,
    i: NodeId,
    opts: &ScheduleOptions,
    sole: impl Fn(NodeId) -> bool,
) -> Option<(NodeId, ExternView, Option<NodeId>)> {
    if !host_float_matmul(graph, n, opts) {
        return None;
    }
    // the views from `i` down to the one over a stored node
    let mut chain = Vec::new();
    let mut q = i;
    while let Op::View(_) = graph.node(q).op {
        chain.push(q);
        q = graph.inputs(q)[0];
    }
    let (&p, above) = chain.split_last()?;
    let Op::View(l) = &graph.node(p).op else {
        return None;
    };
    if above.is_empty() || l.is_contiguous() || !chain.iter().all(|&c| sole(c)) {
        return None;
    }
    let mut read = StridedRead::of(l)?;
    for &c in above.iter().rev() {
        let Op::View(lc) = &graph.node(c).op else {
            return None;
        };
        read = read.then(lc)?;
    }
    let mut v = ExternView {
        offset: read.offset,
        strides: read.strides,
        dims: Some(read.dims),
        padded: None,
    };
    let shape = &graph.node(i).shape;
    let large = shape.len() == 3 && shape[1].saturating_mul(shape[2]) >= TILED_OPERAND_MIN;
    if !large || v.groups(shape).is_none() {
        return None;
    }
    if let Some((source, padded)) = zero_padding(graph, q).filter(|_| sole(q)) {
        let dims = v.dims.as_deref().unwrap_or(shape);
        if padded.holds_view(v.offset, &v.strides, dims) {
            v.padded = Some(padded);
            return Some((source, v, Some(q)));
        }
    }
    Some((q, v, None))
}

/// Where `q` is a zero padding of a stored node (`Tensor::pad` with zeros: a
/// `write_view` of a box of a zero fill), that node and the padding as the
/// padded buffer's map onto it.
fn zero_padding(graph: &Graph, q: NodeId) -> Option<(NodeId, ZeroPadded)> {
    let Op::WriteView(target) = &graph.node(q).op else {
        return None;
    };
    let (base, inner) = (graph.inputs(q)[0], graph.inputs(q)[1]);
    let shape = &graph.node(q).shape;
    let box_of_shape = target.strides == Layout::contiguous(shape).strides;
    if !matches!(graph.node(base).op, Op::Full(v) if v.is_zero()) || !box_of_shape {
        return None;
    }
    let (source, source_offset, source_strides) = match &graph.node(inner).op {
        Op::View(lv) => {
            let r = graph.inputs(inner)[0];
            if matches!(graph.node(r).op, Op::View(_)) {
                return None;
            }
            (r, lv.offset, unsigned_strides(lv)?)
        }
        _ => (
            inner,
            0,
            unsigned_strides(&Layout::contiguous(&graph.node(inner).shape))?,
        ),
    };
    let mut padded = ZeroPadded {
        shape: shape.to_vec(),
        before: vec![0; shape.len()],
        interior: target.shape.to_vec(),
        source_offset,
        source_strides,
    };
    padded.before = padded.coords(target.offset)?;
    padded.is_consistent().then_some((source, padded))
}

/// The elementwise readers a host float matmul `n` takes into its epilogue: each
/// next node the one reader of the last (the product first), none a target, of
/// the product's dtype, while it is a reshape that keeps the elements' order, a
/// ReLU, or adds a strided stored operand (a bias) whose index is affine in the
/// product's `(b, m, n)`. The last ReLU or add is the step's result; `None`
/// where there is none.
pub(super) fn epilogue_chain(
    graph: &Graph,
    n: NodeId,
    opts: &ScheduleOptions,
    sole_reader: impl Fn(NodeId) -> Option<NodeId>,
) -> Option<Epilogue> {
    let node = graph.node(n);
    let shape = <[usize; 3]>::try_from(node.shape.as_slice()).ok()?;
    if !host_float_matmul(graph, n, opts) || opts.library_float_matmul {
        return None;
    }
    let mut chain = Epilogue {
        result: n,
        ops: Vec::new(),
        operands: Vec::new(),
    };
    // the last node the chain ends on where it takes an op (not a reshape)
    let mut last = None;
    for _ in 0..2 * MAX_EPILOGUE {
        if chain.ops.len() == MAX_EPILOGUE {
            break;
        }
        let Some(r) = sole_reader(chain.result) else {
            break;
        };
        let reader = graph.node(r);
        if reader.dtype != node.dtype {
            break;
        }
        match &reader.op {
            // a reshape of the result keeps its elements in order
            Op::View(l) if l.is_identity_of(node.numel()) => {}
            Op::Unary(UnaryOp::Relu) => chain.ops.push(EpilogueOp::Relu),
            Op::Binary(BinaryOp::Add) => {
                let ins = graph.inputs(r);
                let other = if ins[0] == chain.result {
                    ins[1]
                } else {
                    ins[0]
                };
                if other == chain.result || graph.node(other).shape != reader.shape {
                    break;
                }
                let Some((source, offset, strides)) = affine_operand(graph, other, &shape) else {
                    break;
                };
                if source == n || graph.node(source).dtype != node.dtype {
                    break;
                }
                chain.ops.push(EpilogueOp::Add {
                    slot: 2 + chain.operands.len(),
                    offset,
                    strides,
                });
                chain.operands.push(source);
            }
            _ => break,
        }
        chain.result = r;
        if !matches!(reader.op, Op::View(_)) {
            last = Some(r);
        }
    }
    chain.result = last?;
    Some(chain)
}

/// Elementwise readers a product takes at most.
const MAX_EPILOGUE: usize = 4;

/// What [`epilogue_chain`] found: the node whose value the step stores, the
/// epilogue, and the stored node each `Add` reads (in slot order).
pub(super) struct Epilogue {
    pub(super) result: NodeId,
    pub(super) ops: Vec<EpilogueOp>,
    pub(super) operands: Vec<NodeId>,
}

/// Where `w` (of a product's shape reshaped) is a strided view of a stored node
/// (or the node itself) whose index is affine in the product's `(b, m, n)`: the
/// node, and the index's offset and strides. Each of the product's dims is a run
/// of `w`'s dims (row-major) whose strides step as one dim would.
fn affine_operand(
    graph: &Graph,
    w: NodeId,
    shape: &[usize; 3],
) -> Option<(NodeId, usize, [usize; 3])> {
    let (source, layout) = match &graph.node(w).op {
        Op::View(l) => (graph.inputs(w)[0], (**l).clone()),
        _ => (w, Layout::contiguous(&graph.node(w).shape)),
    };
    if matches!(graph.node(source).op, Op::View(_)) {
        return None;
    }
    let view = ExternView {
        offset: layout.offset,
        strides: unsigned_strides(&layout)?,
        dims: Some(layout.shape.to_vec()),
        padded: None,
    };
    let runs = view.groups(shape)?;
    let mut strides = [0usize; 3];
    for (g, run) in runs.into_iter().enumerate() {
        // the run's dims that move, outermost first: each steps as many of the
        // next as that one spans
        let moving: Vec<(usize, usize)> = run
            .filter(|&d| layout.shape[d] > 1)
            .map(|d| (layout.shape[d], view.strides[d]))
            .collect();
        for pair in moving.windows(2) {
            if pair[0].1 != pair[1].1.checked_mul(pair[1].0)? {
                return None;
            }
        }
        strides[g] = moving.last().map_or(0, |&(_, st)| st);
    }
    Some((source, layout.offset, strides))
}

/// Elements per batch below which a windows operand is stored whole rather than
/// read in tiles: a small image's column matrix stays in cache anyway, and a
/// product per image (several tiles each) costs more calls than the copy saves.
const TILED_OPERAND_MIN: usize = 1 << 16;

/// Why a node runs as an extern step, or `None` for loop-kernel nodes.
pub(super) fn extern_reason(graph: &Graph, n: NodeId, opts: &ScheduleOptions) -> Option<String> {
    let node = graph.node(n);
    let ins: Vec<&Node> = graph.inputs(n).iter().map(|&i| graph.node(i)).collect();
    let input_dt = ins.first().map(|i| i.dtype);
    // Sizes that overflow memory arithmetic are the interpreter's errors to report
    // (and 64-bit loop indices must not overflow).
    let fits = |n: &Node| {
        crate::shape::checked_count(&n.shape)
            .ok()
            .and_then(|c| c.checked_mul(n.dtype.size_in_bytes().max(1)))
            .is_some_and(|b| b <= isize::MAX as usize)
    };
    if !fits(node) || !ins.iter().all(|i| fits(i)) {
        return Some("a size that overflows memory arithmetic (the interpreter reports it)".into());
    }
    let all_dt = ins.iter().map(|i| i.dtype).chain([node.dtype]);
    if !matches!(node.op, Op::Input(_)) {
        for d in all_dt {
            if d.is_complex() || (!arith_dtype(d) && !d.is_float8()) {
                return Some(format!("{d} values do not enter loop kernels"));
            }
        }
    }
    // Ops that only move float8 codes or convert them (a fill is a constant cast).
    let float8_ok = matches!(
        node.op,
        Op::Input(_)
            | Op::View(_)
            | Op::Cast
            | Op::Flip { .. }
            | Op::Full(_)
            | Op::Arange { .. }
            | Op::Cat { .. }
            | Op::WriteView(_)
            | Op::Gather { .. }
            | Op::IndexSelect { .. }
            | Op::Take
    );
    if !float8_ok && (node.dtype.is_float8() || ins.iter().any(|i| i.dtype.is_float8())) {
        return Some("float8 is storage only in loop kernels".into());
    }
    let empty_extreme = |reduced: usize| reduced == 0 && node.numel() > 0;
    Some(match &node.op {
        Op::Matmul
            if opts.library_float_matmul
                && matches!(
                    node.dtype,
                    DType::F32 | DType::F64 | DType::F16 | DType::BF16
                ) =>
        {
            "float matmul through the device's BLAS".into()
        }
        Op::Matmul if opts.matmul_kernels && node.dtype != DType::Bool => return None,
        Op::Matmul => "matmul is its own kernel kind".into(),
        Op::Cumsum { .. } | Op::Scan { .. } => {
            let (acc, axis) = super::lower::scan_accum(&node.op)?;
            let x = ins.first()?;
            let rank = x.shape.len().max(1);
            if axis >= rank {
                "scan axis out of range (the interpreter reports it)".into()
            } else if acc.output_dtype(x.dtype) != Some(node.dtype)
                || (node.shape != x.shape && !(x.shape.is_empty() && node.numel() == 1))
            {
                format!(
                    "{} of {} giving {} (not a loop-IR scan; the interpreter decides)",
                    node.op.name(),
                    x.dtype,
                    node.dtype
                )
            } else {
                return None;
            }
        }
        Op::Scatter { .. } => "scatter writes through data-dependent indices".into(),
        Op::Random { .. } => "philox sampling is not expressed in the loop IR".into(),
        Op::Bitcast => "a bitcast moves bytes between dtypes (the interpreter's)".into(),
        Op::Linspace { .. } => {
            "linspace computes with fused multiply-adds (no kernel-IR op)".into()
        }
        // The interpreter checks every index value, even where the output is empty
        // (`[0, 3].index_select(1, [5])` fails): a kernel over an empty space would not.
        Op::IndexSelect { .. }
            if node.numel() == 0 && ins.get(1).is_some_and(|i| i.numel() > 0) =>
        {
            "index_select with an empty output still checks its indices".into()
        }
        Op::Full(Scalar::Complex(..)) => "complex fill".into(),
        Op::WriteView(l) if l.has_internal_overlap() => {
            "write_view through an overlapping layout (last write wins)".into()
        }
        Op::Reduce { op, axes, .. } => {
            let x = ins.first()?;
            let shape = if x.shape.is_empty() {
                vec![1]
            } else {
                x.shape.to_vec()
            };
            let reduced: usize = axes
                .iter()
                .map(|&a| shape.get(a).copied().unwrap_or(1))
                .product();
            if axes.iter().any(|&a| a >= shape.len()) {
                return Some("reduce axes out of range (the interpreter reports it)".into());
            }
            let dt = input_dt?;
            match op {
                ReduceOp::RunningMean => "Welford's running mean is sequential".into(),
                // A kernel would hoist loads that do not depend on the (empty)
                // reduction dims out of its never-running loop, reading an empty
                // buffer once per output point; the interpreter fills the identity.
                _ if empty_extreme(reduced) => {
                    "reduction over an empty dim (the interpreter fills the identity)".into()
                }
                ReduceOp::Sum | ReduceOp::Prod if dt == DType::Bool => {
                    "bool sum/prod (the interpreter decides)".into()
                }
                ReduceOp::Mean
                | ReduceOp::Var { .. }
                | ReduceOp::Std { .. }
                | ReduceOp::LogSumExp
                | ReduceOp::NanMean
                | ReduceOp::Norm { .. }
                    if !dt.is_floating_point() =>
                {
                    format!("{} of {dt} (the interpreter decides)", node.op.name())
                }
                ReduceOp::NanSum if dt == DType::Bool => "nansum of bool".into(),
                // The interpreter (as PyTorch) sums these in float32, overflowing to inf
                // where the kernel IR's float64 accumulator of a float32 sum would not.
                ReduceOp::NanSum | ReduceOp::NanMean
                    if dt.is_floating_point() && dt != DType::F64 =>
                {
                    format!(
                        "{} accumulates in float32 (overflows as PyTorch does)",
                        node.op.name()
                    )
                }
                ReduceOp::Norm { ord }
                    if dt != DType::F64
                        && !(ord.value() == 0.0 || ord.value().is_infinite() || reduced == 1) =>
                {
                    "norm accumulates in float32 (overflows as PyTorch does)".into()
                }
                _ if super::lower::reduce_output_dtype(*op, dt) != Some(node.dtype) => {
                    format!("{} to {} is not lowered", node.op.name(), node.dtype)
                }
                _ => return None,
            }
        }
        Op::ArgReduce { axis, .. } => {
            let x = ins.first()?;
            let reduced = match axis {
                Some(a) => {
                    let shape = if x.shape.is_empty() {
                        vec![1]
                    } else {
                        x.shape.to_vec()
                    };
                    match shape.get(*a) {
                        Some(&s) => s,
                        None => return Some("arg-reduce axis out of range".into()),
                    }
                }
                None => x.numel(),
            };
            if reduced == 0 && node.numel() > 0 || (axis.is_none() && x.numel() == 0) {
                "arg-reduce over an empty dim (the interpreter reports it)".into()
            } else {
                return None;
            }
        }
        Op::Softmax { axis, .. } => {
            let x = ins.first()?;
            let shape = if x.shape.is_empty() {
                vec![1]
            } else {
                x.shape.to_vec()
            };
            match shape.get(*axis) {
                None => "softmax axis out of range".into(),
                Some(0) => "softmax over an empty dim".into(),
                Some(_) if !x.dtype.is_floating_point() || x.dtype != node.dtype => {
                    "softmax of a non-float".into()
                }
                _ => return None,
            }
        }
        Op::Arange { .. } if node.shape.len() != 1 => "arange of rank other than 1".into(),
        Op::Cat { axis } if ins.iter().any(|i| *axis >= i.shape.len()) => {
            "cat axis out of range".into()
        }
        // A loop-kernel cat is one kernel per input slice, each of its own structure
        // (the slice's offset is a constant of its stores): past a few dozen inputs,
        // compiling them costs far more than one copy routine over stored inputs.
        Op::Cat { .. } if ins.len() > MAX_CAT_KERNELS => format!(
            "cat of {} inputs (one copy routine instead of a kernel per input)",
            ins.len()
        ),
        _ => return None,
    })
}
