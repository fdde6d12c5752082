//! Why the scheduler materializes a node, storing it in a buffer of its own instead
//! of inlining it into its readers: [`Reason`], one variant per rule, printed in the
//! schedule's notes (`LAZYFUSE_DEBUG=3`).

use crate::graph::NodeId;
use std::fmt;

/// Why a node is materialized. Its text is the reason's line in the notes:
///
/// ```
/// use lazyfuse_ir::schedule::Reason;
/// assert_eq!(Reason::Target(0).to_string(), "target t0");
/// assert_eq!(
///     Reason::TranscendentalReadBy(2).to_string(),
///     "transcendental read by 2 consumers (cost rule)"
/// );
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Reason {
    /// a target of the schedule (its `k`-th output)
    Target(usize),
    /// fusion is off (`LAZYFUSE_NOFUSE`): every node is its own kernel
    FusionOff,
    /// an extern step computes it (the text says why the node is an extern)
    ComputedByExtern(String),
    /// an extern step (`op`, node `reader`) reads it from a buffer
    ReadByExtern {
        /// the extern's op name
        op: String,
        /// the extern's node
        reader: NodeId,
    },
    /// softmax is a kernel of its own (rows of its own shape)
    SoftmaxKernel,
    /// matmul is a kernel of its own (a reduction over the contracted dim)
    MatmulKernel,
    /// an operand of the matmul kernel of this node, read once per output element
    ReadByMatmulKernel(NodeId),
    /// a scan is a kernel of its own (rows of its own shape)
    ScanKernel,
    /// cat is one kernel per input slice
    CatKernels,
    /// this op is computed in a step of its own (its name)
    OwnStep(String),
    /// a write_view: a copy of its base, then the stores
    WriteViewStored,
    /// a write_view that cannot fold into its reader (why not)
    WriteViewUnfolded(&'static str),
    /// a reduction read through a broadcast or a permutation by its consumer
    BroadcastReduction,
    /// a reduction read inside another reduction's loop
    ReductionInReduction,
    /// a reduction over other dims than the kernel reading it reduces
    ReductionOverOtherDims,
    /// the cost rule: a reduction read by this many consumers
    ReductionReadBy(usize),
    /// the cost rule: a transcendental read by this many consumers
    TranscendentalReadBy(usize),
    /// the cost rule: another expensive op read by this many consumers
    ExpensiveReadBy(usize),
    /// the cost rule by size: this many inlined ops read by this many distinct
    /// consumers
    InlinedOpsReadBy {
        /// ops inlined into the value
        size: usize,
        /// its distinct consumers
        consumers: usize,
    },
    /// the recursion bound: inlining deeper than this many producers
    DeeperThan(usize),
    /// the recompute bound: a kernel over this many expressions
    MoreExpressionsThan(usize),
    /// read through this view, whose index does not decompose into its dims
    ViewDoesNotDecompose(NodeId),
    /// read through this view of part of it, and its ops may fail on the part
    /// the view skips
    PartialViewMayFail(NodeId),
    /// read through data-dependent indices (loaded by position)
    DataDependentIndices,
    /// `take` reads it by flat position, which is not row-major in its buffer
    TakenByFlatPosition,
}

impl fmt::Display for Reason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use Reason::*;
        const WRITE_VIEW: &str = "write_view (copy of the base, then stores)";
        match self {
            Target(k) => write!(f, "target t{k}"),
            FusionOff => f.write_str("fusion off (LAZYFUSE_NOFUSE)"),
            ComputedByExtern(why) => write!(f, "computed by extern: {why}"),
            ReadByExtern { op, reader } => write!(f, "read by extern {op} {reader}"),
            SoftmaxKernel => f.write_str("softmax kernel (rows of its own shape)"),
            MatmulKernel => f.write_str("matmul kernel (a reduction over the contracted dim)"),
            ReadByMatmulKernel(n) => write!(f, "read by matmul kernel {n}"),
            ScanKernel => f.write_str("scan kernel (rows of its own shape; no epilogue fusion)"),
            CatKernels => f.write_str("cat kernels (one per input slice)"),
            OwnStep(op) => write!(f, "{op} is computed in its own step"),
            WriteViewStored => f.write_str(WRITE_VIEW),
            WriteViewUnfolded(why) => write!(f, "{WRITE_VIEW}: {why}"),
            BroadcastReduction => f.write_str(
                "reduction result broadcast or permuted by its consumer (recomputing it would multiply its work)",
            ),
            ReductionInReduction => f.write_str("reduction read inside another reduction's loop"),
            ReductionOverOtherDims => f.write_str("reduction over other dims than its kernel's"),
            ReductionReadBy(uses) => write!(f, "reduction read by {uses} consumers (cost rule)"),
            TranscendentalReadBy(uses) => {
                write!(f, "transcendental read by {uses} consumers (cost rule)")
            }
            ExpensiveReadBy(uses) => write!(f, "expensive op read by {uses} consumers (cost rule)"),
            InlinedOpsReadBy { size, consumers } => write!(
                f,
                "{size} inlined ops read by {consumers} consumers (cost rule: recomputing them per reader grows with depth)"
            ),
            DeeperThan(depth) => {
                write!(f, "inlining deeper than {depth} producers (recursion bound)")
            }
            MoreExpressionsThan(n) => write!(f, "kernel over {n} expressions (recompute bound)"),
            ViewDoesNotDecompose(view) => write!(
                f,
                "read through view {view} whose index does not decompose into its dims"
            ),
            PartialViewMayFail(view) => write!(
                f,
                "read through view {view} of part of it, and its ops may fail on the rest"
            ),
            DataDependentIndices => {
                f.write_str("read through data-dependent indices (loaded by position)")
            }
            TakenByFlatPosition => {
                f.write_str("take reads it by flat position (not row-major in its buffer)")
            }
        }
    }
}
