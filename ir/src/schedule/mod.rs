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
//! than `ROW_KERNEL_POINTS` elements in fewer than `ROW_KERNEL_MIN_ROWS` rows the
//! row kernel would leave threads idle: there the reduction is stored instead.
//!
//! A **whole write** (a `write_view` replacing every element of its base: an
//! optimizer's `p.copy_(new)`) is an elementwise root over its values' shape, with
//! no copy of the base first, and joins a kernel like one; in the base's buffer,
//! where each point of the kernel loads and stores that buffer at its own element
//! only, and its store comes after every load and store of the buffer there (a
//! store runs in its value's stage).
//! A write is given its base's buffer while every kernel reading the base's old
//! values runs no later than the write's (checked once the kernels are built; a
//! write failing it stores into a buffer of its own), so a parameter, its moments
//! and their reads of each other's old values are one kernel.
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
//!   transposes);
//! - beside them: `options` (what the scheduler may do, and its bounds), `fail`
//!   (why building a kernel stopped), `reason` (why a node is materialized),
//!   `fold` (casts of constants folded).

use crate::graph::{Graph, NodeId};
use crate::kernel::{BufId, BufKind, Schedule, Step};
use crate::op::InputId;

mod affine;
mod builder;
mod cost;
mod externs;
mod fail;
mod fold;
mod gen;
mod intern;
mod lower;
mod options;
mod plan;
mod reason;
mod rewrite;
#[cfg(test)]
mod tests;
mod view_chain;

use crate::kernel::Affine;
use affine::{canonical, flat, unravel};
use builder::{Builder, Ctx, Split};
use cost::arith_dtype;
pub use cost::{cheap_binary, cheap_unary, cheap_unary_param, expensive};
use externs::{epilogue_chain, extern_reason, strided_operand, windows_operand, Epilogue};
use fail::{may_fail, may_fail_from, Fail};
use fold::fold_cast;
pub use options::ScheduleOptions;
use options::{MAX_CAT_KERNELS, MAX_DEPTH, MAX_EXPRS, MAX_ROOTS, MAX_SHARED_CONE};
use options::{PLANNED_DEPTH, ROW_KERNEL_MIN_ROWS, ROW_KERNEL_POINTS};
use plan::Planner;
pub use reason::Reason;
use rewrite::{merge_dims, tile_transposes};

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
/// - every other kernel, target or extern step reading the old version runs
///   no later than the write's store kernel, and that kernel loads the buffer only at the
///   very index each point stores (`x[i] += 1`, not `x[1:] += x[:-1]`), so no
///   point reads an element another point wrote;
/// - a chain of writes on one base (`x[0] += 1; x[1] *= 2`) shares the buffer
///   under the same rule for each intermediate version;
/// - nothing can fail once the buffer is written: no extern step but a product, no
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
/// let row = Layout { shape: vec![2].into(), strides: vec![1].into(), offset: 1 };
/// let v = g.add(Op::view(row.clone()), DType::F32, vec![2], &[x]);
/// let y = g.add(Op::Binary(BinaryOp::Add), DType::F32, vec![2], &[v, v]);
/// let w = g.add(Op::write_view(row), DType::F32, vec![4], &[x, y]);
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
/// extern step other than a product, a data-dependent load, an integer division
/// or remainder).
fn may_fail_after_donation(s: &Schedule) -> bool {
    let donated = |b: BufId| matches!(s.buffers[b.0 as usize].kind, BufKind::Donated(_));
    let Some(first) = s.steps.iter().position(|st| match st {
        Step::Loop(k) => k.params.iter().any(|p| p.writes && donated(p.buf)),
        Step::Extern(e) => donated(e.output),
    }) else {
        return false;
    };
    s.steps[first..].iter().any(|st| match st {
        // a product has no data-dependent failure (its operands' shapes and
        // dtypes are the graph's, checked when it was built)
        Step::Extern(e) => !matches!(e.op, crate::op::Op::Matmul),
        Step::Loop(k) => may_fail(&k.exprs),
    })
}
