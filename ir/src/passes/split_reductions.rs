//! Splitting long reductions with few outputs into two, so that the first has
//! parallel points enough for the machine: a GPU's blocks or a CPU's threads.
//!
//! The reduced extent `R` is viewed as `[S, R / S]`, the inner part reduced into `S`
//! partials per output, then the partials reduced. What counts as "few outputs" and
//! "long" differs per device, so the pass takes a [`SplitPolicy`].

use super::rebuild;
use crate::dtype::DType;
use crate::graph::{Graph, NodeId};
use crate::kernel::MathMode;
use crate::layout::Layout;
use crate::op::{Op, ReduceOp};

/// When [`split_reductions`] splits a reduction and into how many partials.
///
/// ```
/// use lazyfuse_ir::passes::SplitPolicy;
/// // A CPU wants far fewer, far longer partials than a GPU.
/// assert!(SplitPolicy::CPU.below_points < SplitPolicy::GPU.below_points);
/// assert!(SplitPolicy::CPU.min_chunk > SplitPolicy::GPU.min_chunk);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SplitPolicy {
    /// parallel points the device wants at least: a reduction with fewer outputs is
    /// split into at most this many partials (all outputs together)
    pub below_points: usize,
    /// reduced extents shorter than this are never split
    pub min_length: usize,
    /// each partial reduces at least this many elements
    pub min_chunk: usize,
}

impl SplitPolicy {
    /// A GPU: thousands of blocks to fill, each cheap; a partial of 256 elements is
    /// one block's work.
    pub const GPU: SplitPolicy = SplitPolicy {
        below_points: 16384,
        min_length: 4096,
        min_chunk: 256,
    };

    /// A CPU: a few threads, each taking a range of points; a partial of 16K
    /// elements (64 KiB of float32) costs far more than the point's overhead, and
    /// 64 points keep the threads evenly busy (as a row kernel's rows do).
    pub const CPU: SplitPolicy = SplitPolicy {
        below_points: 64,
        min_length: 32768,
        min_chunk: 16384,
    };
}

/// Splits the reductions of `graph` that have fewer than `policy.below_points`
/// outputs and a reduced extent `R` of at least `policy.min_length` elements (a
/// whole-tensor sum, column sums of a wide matrix): `R` is viewed as `[S, R / S]`,
/// where `S` is the largest divisor of `R` that gives at most `below_points` points
/// and chunks of at least `min_chunk` elements; an `R` without one is left alone, as
/// are reductions over several (but not all) dims.
///
/// Only reductions whose result does not depend on the order are split in exact math:
/// integer and bool sums and products (wrapping arithmetic is associative), max, min,
/// any and all. In fast math float32/float64 sums and means split too (the partials
/// reassociate the sum, as the vector accumulators do on the CPU; a mean is the mean
/// of its equal chunks' means). Returns the copy, its targets and the number of
/// reductions split.
///
/// ```
/// use lazyfuse_ir::{kernel::MathMode, passes, DType, Graph, InputId, Op, ReduceOp};
/// use passes::SplitPolicy;
/// let mut g = Graph::new();
/// let x = g.add(Op::Input(InputId(0)), DType::I64, vec![1 << 20], &[]);
/// let s = g.add(Op::Reduce { op: ReduceOp::Sum, axes: vec![0], keepdim: false }, DType::I64, vec![], &[x]);
/// let (copy, t, split) = passes::split_reductions(&g, &[s], MathMode::Exact, SplitPolicy::GPU);
/// assert_eq!(split, 1);
/// // 4096 partials of 256 elements, then their sum.
/// assert!(copy.dump(&t).contains("sum(%1; axes=[2], keepdim=false) : int64[1, 4096, 1]"));
/// // On a CPU: 64 partials of 16384 elements.
/// let (copy, t, _) = passes::split_reductions(&g, &[s], MathMode::Exact, SplitPolicy::CPU);
/// assert!(copy.dump(&t).contains("sum(%1; axes=[2], keepdim=false) : int64[1, 64, 1]"));
/// ```
pub fn split_reductions(
    graph: &Graph,
    targets: &[NodeId],
    math: MathMode,
    policy: SplitPolicy,
) -> (Graph, Vec<NodeId>, usize) {
    rebuild(graph, targets, |out, node, inputs| {
        let Op::Reduce { op, axes, .. } = &node.op else {
            return None;
        };
        let x = *inputs.first()?;
        let xnode = out.node(x);
        let (xdtype, xshape) = (xnode.dtype, xnode.shape.clone());
        let order_free = match op {
            ReduceOp::Amax | ReduceOp::Amin | ReduceOp::Any | ReduceOp::All => true,
            ReduceOp::Sum | ReduceOp::Prod => {
                xdtype == DType::Bool || xdtype.is_integer() || node.dtype.is_integer()
            }
            _ => false,
        };
        let fast_float = math == MathMode::Fast
            && matches!(op, ReduceOp::Sum | ReduceOp::Mean)
            && matches!(xdtype, DType::F32 | DType::F64)
            && node.dtype == xdtype;
        if !(order_free || fast_float) {
            return None;
        }
        // The reduced extent `r`, with `outer` and `inner` the dims around it.
        let (outer, r, inner) = if axes.len() == xshape.len() {
            (1, xshape.iter().product::<usize>(), 1)
        } else if let [a] = axes[..] {
            let outer: usize = xshape[..a].iter().product();
            let inner: usize = xshape[a + 1..].iter().product();
            (outer, xshape[a], inner)
        } else {
            return None;
        };
        let points = outer * inner;
        if points >= policy.below_points || r < policy.min_length {
            return None;
        }
        let most = (policy.below_points / points.max(1)).min(r / policy.min_chunk);
        let s = (2..=most).rev().find(|s| r % s == 0)?;
        let viewed = [outer, s, r / s, inner];
        let v = out.add(Op::view(Layout::contiguous(&viewed)), xdtype, viewed, &[x]);
        let reduce = |op: ReduceOp, axis: usize| Op::Reduce {
            op,
            axes: vec![axis],
            keepdim: false,
        };
        let partials = out.add(reduce(*op, 2), node.dtype, vec![outer, s, inner], &[v]);
        // The partials have the result's dtype: a bool `any` is bool, an int8 sum
        // int64; a second sum or product of them is the same op (a mean of equal
        // chunks' means is the mean).
        let total = out.add(reduce(*op, 1), node.dtype, vec![outer, inner], &[partials]);
        Some(out.add(
            Op::view(Layout::contiguous(&node.shape)),
            node.dtype,
            node.shape.clone(),
            &[total],
        ))
    })
}
