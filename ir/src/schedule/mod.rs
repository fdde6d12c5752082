//! The scheduler: a graph (after the passes) becomes a [`Schedule`] of fused loop
//! kernels and extern steps.
//!
//! # How values are placed
//! A node is *materialized* (gets its own buffer, written by one step) when
//! - a target needs it (its `Output` buffer), or it is an `input` (its `Input` buffer);
//! - an extern step computes it, or an extern step reads it (extern steps read whole
//!   contiguous buffers);
//! - it is a `softmax`, `cat`, `write_view` or a scan (`cumsum`, `cumprod`,
//!   `cummax`/`cummin`, `logcumsumexp`: their kernels have their own shape; a scan
//!   absorbs its elementwise prologue, its epilogue reads the stored result). A
//!   `write_view` that is not a target and is read once, by an elementwise op of its
//!   shape, is not stored: it folds into its reader (see *Kernels*);
//! - consumers index it in a way that does not decompose into its dims (a view
//!   whose index map crosses the producer's dims), or a kernel would have to nest a
//!   reduction inside another one, or a reduction result is broadcast by its consumer
//!   (recomputing it per consumer point would multiply the reduction's work), except
//!   where it is spread back over the rows it reduced, innermost dim included: then a
//!   row kernel computes it (see *Kernels*);
//! - the cost rule: a reduction, or a transcendental (`exp`, `tanh`, `pow`, …), read
//!   by two or more consumers is stored once rather than recomputed per reader;
//!   cheap elementwise work (add, mul, casts, compares, where, views) is recomputed;
//! - bounds: a kernel inlines producers at most 160 deep, grows to at
//!   most 4096 expressions and stores at most 64 values (deep chains and many
//!   targets become several kernels); a `cat` of more than 64 inputs is an extern
//!   copy of its stored inputs rather than a kernel per input.
//!
//! Everything else is inlined into the kernels that read it: elementwise chains,
//! casts, `where`, views (as affine rewrites of the load index: a view is never
//! copied), flips (negative strides), and reductions into the elementwise work on
//! their result (the epilogue) when the consumer reads the reduced value once per
//! point. A reduction's input (its prologue) is always inlined into its loop.
//!
//! The decisions are taken by trial: the scheduler builds every kernel, and when a
//! read turns out to need a buffer (one of the reasons above), that node joins the
//! materialized set and scheduling restarts. Each restart adds a node, so it ends.
//! Every decision is recorded as one line of [`Schedule::notes`].
//!
//! # Kernels
//! The parallel dims of a kernel are its root's shape without size-1 dims (those are
//! index 0, never divided by); a reduction's dims are its reduced axes, likewise.
//! Consecutive roots with the same iteration space share one kernel (a reduction's
//! mean and variance are one two-phase kernel). With `fuse: false` every node but
//! views is its own step (for bisecting a wrong result).
//!
//! A **row kernel** is an elementwise root that reads a reduction spread over its
//! rows (`e / e.sum(-1, true)`, `x - x.mean(-1, true)`): the rows become the
//! kernel's reduction loop, each reduction one phase of it, and the root is stored
//! from the last phase, as the built-in softmax's kernel is. What the phases read
//! is recomputed in each of them (the cost rule still stores an expensive value
//! read twice). A hand-written softmax is two kernels and a hand-written layer norm
//! one. Rows along a leading dim would walk memory with a stride, and over more
//! than `ROW_KERNEL_POINTS` elements the phases run slower than two kernels: there
//! the reduction is stored instead.
//!
//! A **folded write** is a root that reads a `write_view` folded into it (the
//! write is read once, at the root's own points, through elementwise ops): the
//! root is computed over every point with the write's base in its place, then over
//! the written region with the written values, storing over the first values there.
//! `base.narrow(0, 0, 2).add_(x); base.mul(2)` is two kernels, with no copy of the
//! base. A root that can fail (integer division, data-dependent loads) would see the
//! base's values at the written points, so it stores the write instead.
//!
//! # Files, in pipeline order
//! - `plan`: the planner (order, readers, extern and materialized nodes) and the
//!   trial loop; `externs`: which nodes are extern steps, and the operand views a
//!   host matmul reads in place; `cost`: the one definition of a cheap op;
//! - `builder`: one loop kernel under construction (row kernels, folded writes);
//!   `gen`: a node's element as kernel expressions; `lower`: the composite ops
//!   (mean, var, softmax, …) with the interpreter's numerics; `affine`: index
//!   arithmetic over loop variables;
//! - `rewrite`: iteration-order rewrites of a finished kernel (merged dims, tiled
//!   transposes).

use crate::graph::{Graph, NodeId};
use crate::kernel::{BufId, BufKind, Expr, ExprNode, MathMode, Schedule, Step};
use crate::op::{BinaryOp, InputId};

mod affine;
mod builder;
mod cost;
mod externs;
mod fold;
mod gen;
mod lower;
mod plan;
mod reason;
mod rewrite;
#[cfg(test)]
mod tests;

use crate::kernel::Affine;
use affine::{canonical, flat, unravel};
use builder::{Builder, Ctx, Split};
use cost::arith_dtype;
pub use cost::{cheap_binary, cheap_unary, cheap_unary_param, expensive};
use externs::{extern_reason, strided_operand};
use fold::fold_cast;
use plan::Planner;
pub use reason::Reason;
use rewrite::{merge_dims, tile_transposes};

/// The size past which a kernel stops inlining producers (see [`Builder::gen`]).
const MAX_EXPRS: usize = 4096;

/// How deep a kernel inlines producers into one another (see [`Builder::gen`]).
const MAX_DEPTH: usize = 160;

/// How deep the planner lets values inline before it stores one (half the builder's
/// bound, [`MAX_DEPTH`], which lowered composites approach faster than one level a
/// node).
const PLANNED_DEPTH: usize = MAX_DEPTH / 2;

/// The most nodes a value read by two or more consumers inlines before it is stored
/// (the cost rule by size, see [`Planner::new`]).
const MAX_SHARED_CONE: usize = 64;

/// The most roots (stored values) one loop kernel takes; the next root of the same
/// iteration space starts a new kernel, so that a kernel's size, its compile time
/// and the scheduler's work per join stay bounded however many targets share a
/// space.
const MAX_ROOTS: usize = 64;

/// The most elements a row kernel computes (see [`Builder::start`]). A row kernel
/// saves kernels, which is what small tensors (a training step's) pay for; over
/// larger ones its phases run slower than an elementwise kernel and a reduction
/// kernel apart (measured on a layer norm: even at 256 × 256 the two kernels are
/// faster), so there the reduction is stored.
const ROW_KERNEL_POINTS: usize = 1 << 15;

/// The most inputs a `cat` lowers to loop kernels (one per input); a larger one is
/// an extern step (see [`extern_reason`]).
const MAX_CAT_KERNELS: usize = 64;

/// What the scheduler may do.
///
/// ```
/// use lazyfuse_ir::schedule::ScheduleOptions;
/// use lazyfuse_ir::kernel::MathMode;
/// let opts = ScheduleOptions { fuse: true, ..Default::default() };
/// assert!(opts.fuse);
/// assert_eq!(opts.math, MathMode::Fast);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ScheduleOptions {
    /// fuse producers into consumers (`false`: one step per non-view node)
    pub fuse: bool,
    /// whether kernels may reorder float math (see [`MathMode`])
    pub math: MathMode,
    /// matmul of integer and float dtypes as a generated loop kernel (a reduction
    /// over the contracted dim, one output element per point) rather than an extern
    /// step: for a device, where an extern step would cross to the host
    pub matmul_kernels: bool,
    /// with `matmul_kernels`: float matmul (float32/64, float16, bfloat16) stays an
    /// extern step all the same, for a library on the device (cuBLAS) to run
    pub library_float_matmul: bool,
}

impl Default for ScheduleOptions {
    fn default() -> Self {
        ScheduleOptions {
            fuse: true,
            math: MathMode::Fast,
            matmul_kernels: false,
            library_float_matmul: false,
        }
    }
}

/// Cuts the work for `targets` into loop kernels and extern steps (see the module
/// doc). The graph should have been through [`crate::passes::optimize`].
///
/// ```
/// use lazyfuse_ir::schedule::{schedule, ScheduleOptions};
/// use lazyfuse_ir::{BinaryOp, DType, Graph, InputId, Op, UnaryOp};
/// let mut g = Graph::new();
/// let a = g.add(Op::Input(InputId(0)), DType::F32, vec![4], &[]);
/// let b = g.add(Op::Input(InputId(1)), DType::F32, vec![4], &[]);
/// let s = g.add(Op::Binary(BinaryOp::Add), DType::F32, vec![4], &[a, b]);
/// let t = g.add(Op::Unary(UnaryOp::Tanh), DType::F32, vec![4], &[s]);
/// let sched = schedule(&g, &[t], &ScheduleOptions { fuse: true, ..Default::default() }).unwrap();
/// assert_eq!(sched.kernel_count(), 1);
/// sched.verify().unwrap();
/// ```
pub fn schedule(
    graph: &Graph,
    targets: &[NodeId],
    opts: &ScheduleOptions,
) -> Result<Schedule, String> {
    schedule_donating(graph, targets, opts, &[])
}

/// [`schedule`], where the caller gives up the buffers of the inputs `donate`: an
/// in-place write (`write_view`) whose base is one of them stores straight into its
/// buffer ([`BufKind::Donated`]) instead of copying the whole storage first.
///
/// The caller donates only buffers it owns alone whose old version nobody reads
/// after the realize. The scheduler donates a buffer only when, in addition:
/// - every other reader of the old version is inlined into the write's own store
///   kernel (no other kernel, target or extern step reads it), and that kernel loads
///   the buffer only at the very index each point stores (`x[i] += 1`, not
///   `x[1:] += x[:-1]`), so no point reads an element another point wrote;
/// - a chain of writes on one base (`x[0] += 1; x[1] *= 2`) shares the buffer
///   under the same rule for each intermediate version;
/// - nothing can fail once the buffer is written: no extern step, no
///   data-dependent (`DynIndex`) load and no integer division or remainder at or
///   after the first step that stores into it. A failure would otherwise leave the
///   old version half-written; before that step, the executor hands the untouched
///   buffer back.
///
/// Anything else falls back to the copy (a fresh buffer, then the stores). Which
/// inputs ended up donated is in the schedule's buffer table.
///
/// ```
/// use lazyfuse_ir::kernel::BufKind;
/// use lazyfuse_ir::schedule::{schedule_donating, ScheduleOptions};
/// use lazyfuse_ir::{BinaryOp, DType, Graph, InputId, Layout, Op};
/// let mut g = Graph::new();
/// let x = g.add(Op::Input(InputId(0)), DType::F32, vec![4], &[]);
/// let row = Layout { shape: vec![2], strides: vec![1], offset: 1 };
/// let v = g.add(Op::View(row.clone()), DType::F32, vec![2], &[x]);
/// let y = g.add(Op::Binary(BinaryOp::Add), DType::F32, vec![2], &[v, v]);
/// let w = g.add(Op::WriteView(row), DType::F32, vec![4], &[x, y]);
/// let opts = ScheduleOptions { fuse: true, ..Default::default() };
/// let s = schedule_donating(&g, &[w], &opts, &[InputId(0)]).unwrap();
/// assert_eq!(s.kernel_count(), 1); // the stores only: no copy of x
/// assert_eq!(s.buffers[0].kind, BufKind::Donated(InputId(0)));
/// let copy = schedule_donating(&g, &[w], &opts, &[]).unwrap();
/// assert_eq!(copy.kernel_count(), 2);
/// ```
pub fn schedule_donating(
    graph: &Graph,
    targets: &[NodeId],
    opts: &ScheduleOptions,
    donate: &[InputId],
) -> Result<Schedule, String> {
    if let Some(t) = targets.iter().find(|t| !graph.contains(**t)) {
        return Err(format!("target {t} is not in the graph"));
    }
    let mut planner = Planner::new(graph, targets, opts)?;
    planner.donate = donate.to_vec();
    let s = planner.run()?;
    if !s.donated().is_empty() && may_fail_after_donation(&s) {
        planner.donate.clear();
        planner.unshared.clear();
        return planner.run();
    }
    Ok(s)
}

/// Whether a step at or after the first store into a donated buffer may fail (an
/// extern step, a data-dependent load, an integer division or remainder).
fn may_fail_after_donation(s: &Schedule) -> bool {
    let donated = |b: BufId| matches!(s.buffers[b.0 as usize].kind, BufKind::Donated(_));
    let Some(first) = s.steps.iter().position(|st| match st {
        Step::Loop(k) => k.params.iter().any(|p| p.writes && donated(p.buf)),
        Step::Extern(e) => donated(e.output),
    }) else {
        return false;
    };
    s.steps[first..].iter().any(|st| match st {
        Step::Extern(_) => true,
        Step::Loop(k) => may_fail(&k.exprs),
    })
}

/// Whether a kernel of these expressions may set an error status: a data-dependent
/// load, an integer division or remainder.
fn may_fail(exprs: &[ExprNode]) -> bool {
    exprs.iter().any(|e| match &e.expr {
        Expr::Load { dynamic, .. } => dynamic.is_some(),
        Expr::Binary { op, a, .. } => {
            matches!(
                op,
                BinaryOp::DivFloor | BinaryOp::DivTrunc | BinaryOp::Remainder | BinaryOp::Fmod
            ) && !exprs[a.0 as usize].dtype.is_floating_point()
        }
        _ => false,
    })
}

/// Why building a kernel stopped.
#[derive(Debug)]
pub(crate) enum Fail {
    /// this node needs a buffer (the reason)
    Materialize(NodeId, Reason),
    /// the root cannot join the kernel being built (it goes into a new one)
    Merge,
    /// a real error
    Error(String),
    /// this write_view cannot store into its base's buffer (a hazard): copy it
    Unshare(NodeId),
    /// the root reads `reduction` broadcast along the root's parallel dims `dims`:
    /// a row kernel (those dims as its reduction loop) computes both (see
    /// [`Builder::start`]); a kernel that cannot take that form stores the
    /// reduction instead
    Rows { reduction: NodeId, dims: Vec<usize> },
    /// the root reads this write_view, folded into its reader: the root is computed
    /// twice instead (see [`Builder::split`]); a kernel that cannot stores the write
    Split(NodeId),
}
