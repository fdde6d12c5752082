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
//! Composite ops (mean, var, softmax, …) are lowered with the interpreter's numerics
//! by the crate-private `lower` module.

use crate::dtype::DType;
use crate::graph::{Graph, Node, NodeId};
use crate::kernel::{
    Affine, BufDecl, BufId, BufKind, Const, DynIndex, Expr, ExprId, ExprNode, ExternStep,
    ExternView, LoopKernel, MathMode, Param, Schedule, Stage, Step, StoreOp,
};
use crate::op::{BinaryOp, InputId, Op, ReduceOp, UnaryOp};
use crate::scalar::Scalar;
use crate::shape::contiguous_strides;
use hashbrown::HashMap;

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
    Materialize(NodeId, String),
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

/// The whole-graph decisions: order, consumers, extern nodes, materialized nodes.
struct Planner<'g> {
    graph: &'g Graph,
    targets: Vec<NodeId>,
    fuse: bool,
    /// the math mode kernels are lowered for (see [`ScheduleOptions::math`])
    math: MathMode,
    order: Vec<NodeId>,
    /// nodes computed by extern steps, with the reason
    externs: HashMap<NodeId, String>,
    /// materialized nodes (not inputs), with the reason
    materialized: HashMap<NodeId, String>,
    /// identity views that extern steps read as their producer's buffer
    views_of: HashMap<NodeId, NodeId>,
    /// the strided ones among them (see [`strided_operand`])
    extern_views: HashMap<NodeId, ExternView>,
    /// the nodes reading each node, once per input slot
    readers: HashMap<NodeId, Vec<NodeId>>,
    /// inputs whose buffers the caller gave up (see [`schedule_donating`])
    donate: Vec<InputId>,
    /// write_views found unable to store into their base's buffer
    unshared: hashbrown::HashSet<NodeId>,
}

/// Unary ops cheap enough to recompute in every reader (the scheduler's cost
/// rule; code generators use it to tell which recomputation is worth avoiding).
///
/// ```
/// use lazyfuse_ir::schedule::cheap_unary;
/// use lazyfuse_ir::UnaryOp;
/// assert!(cheap_unary(UnaryOp::Neg));
/// assert!(!cheap_unary(UnaryOp::Exp));
/// ```
pub fn cheap_unary(op: UnaryOp) -> bool {
    use UnaryOp::*;
    matches!(
        op,
        Neg | Abs
            | Sign
            | Relu
            | Floor
            | Ceil
            | Round
            | Trunc
            | LogicalNot
            | BitwiseNot
            | IsNan
            | Square
            | IsInf
            | IsPosInf
            | IsNegInf
            | IsFinite
            | IsReal
            | Signbit
            | Sgn
            | Frac
    )
}

/// Binary ops cheap enough to recompute in every reader (see [`cheap_unary`]).
///
/// ```
/// use lazyfuse_ir::schedule::cheap_binary;
/// use lazyfuse_ir::BinaryOp;
/// assert!(cheap_binary(BinaryOp::Add));
/// assert!(!cheap_binary(BinaryOp::Pow));
/// ```
pub fn cheap_binary(op: BinaryOp) -> bool {
    use BinaryOp::*;
    !matches!(
        op,
        Pow | Atan2 | Hypot | Logaddexp | Logaddexp2 | Xlogy | Gcd | Lcm | Remainder | Fmod
    )
}

/// Whether a dtype may appear in a loop kernel's arithmetic (float8 only in loads,
/// stores and casts; complex and float4 never).
fn arith_dtype(d: DType) -> bool {
    !d.is_complex()
        && !d.is_float8()
        && d.size_in_bytes() > 0
        && !matches!(d, DType::C32 | DType::BC32 | DType::F4E2M1FNX2)
}

impl<'g> Planner<'g> {
    fn new(graph: &'g Graph, targets: &[NodeId], opts: &ScheduleOptions) -> Result<Self, String> {
        let order = graph.topo_order(targets);
        crate::work::add(order.len() as u64);
        let mut consumers: HashMap<NodeId, usize> = HashMap::new();
        let mut readers: HashMap<NodeId, Vec<NodeId>> = HashMap::new();
        for &n in &order {
            for &i in graph.inputs(n) {
                *consumers.entry(i).or_default() += 1;
                readers.entry(i).or_default().push(n);
            }
        }
        let mut externs = HashMap::new();
        let mut materialized: HashMap<NodeId, String> = HashMap::new();
        let mut views_of: HashMap<NodeId, NodeId> = HashMap::new();
        let mut extern_views: HashMap<NodeId, ExternView> = HashMap::new();
        // how many nodes each inlined value carries (the cost rule's size) and how deep
        // it inlines producers; stored values have no entry (they count 0)
        let mut cone: HashMap<NodeId, usize> = HashMap::new();
        let mut depth: HashMap<NodeId, usize> = HashMap::new();
        for &n in &order {
            let node = graph.node(n);
            if let Some(why) = extern_reason(graph, n, opts) {
                for &i in graph.inputs(n) {
                    let mut i = i;
                    // A reshape that is the identity of its producer's buffer (matmul's
                    // operands) is that buffer: the extern reads the producer's. So is
                    // a strided view of it that the float matmul reads in place (a
                    // transposed operand).
                    if let Op::View(l) = &graph.node(i).op {
                        let p = graph.inputs(i)[0];
                        if l.is_identity_of(graph.node(p).numel()) && !targets.contains(&i) {
                            views_of.insert(i, p);
                            i = p;
                        } else if let Some(v) = strided_operand(graph, n, l, opts) {
                            if !targets.contains(&i) {
                                views_of.insert(i, p);
                                extern_views.insert(i, v);
                                i = p;
                            }
                        }
                    }
                    if !matches!(graph.node(i).op, Op::Input(_)) {
                        materialized
                            .entry(i)
                            .or_insert_with(|| format!("read by extern {} {n}", node.op.name()));
                    }
                }
                materialized.insert(n, format!("computed by extern: {why}"));
                externs.insert(n, why);
                continue;
            }
            // A reduction read through a broadcasting view is stored (found here
            // rather than by a failed attempt: each failure costs a restart), unless
            // the view spreads it back over its own rows: a row kernel then computes
            // it and its readers together.
            if let Op::View(l) = &node.op {
                let p = graph.inputs(n)[0];
                let broadcast = l
                    .strides
                    .iter()
                    .zip(&l.shape)
                    .any(|(&st, &sz)| st == 0 && sz > 1);
                if broadcast
                    && opts.fuse
                    && matches!(graph.node(p).op, Op::Reduce { .. } | Op::ArgReduce { .. })
                    && !spreads_over_rows(graph, p, l)
                {
                    materialized
                        .entry(p)
                        .or_insert_with(|| BROADCAST_REDUCTION.to_string());
                }
            }
            let uses = consumers.get(&n).copied().unwrap_or(0);
            let why = match &node.op {
                Op::Input(_) => None,
                Op::Softmax { .. } => Some("softmax kernel (rows of its own shape)".to_string()),
                Op::Matmul => {
                    // Its operands are read once per output element they meet: a
                    // computed operand is stored first (through views, which stay
                    // index arithmetic), never recomputed in the product's loop.
                    for &i in graph.inputs(n) {
                        let mut src = i;
                        while let Op::View(_) = graph.node(src).op {
                            src = graph.inputs(src)[0];
                        }
                        if !matches!(graph.node(src).op, Op::Input(_)) {
                            materialized
                                .entry(src)
                                .or_insert_with(|| format!("read by matmul kernel {n}"));
                        }
                    }
                    Some("matmul kernel (a reduction over the contracted dim)".to_string())
                }
                Op::Cumsum { .. } | Op::Scan { .. } => {
                    Some("scan kernel (rows of its own shape; no epilogue fusion)".to_string())
                }
                Op::Cat { .. } => Some("cat kernels (one per input slice)".to_string()),
                Op::WriteView(_) if opts.fuse && folds_into_reader(graph, n, &readers, targets) => {
                    None
                }
                Op::WriteView(_) => Some(WRITE_VIEW_STORED.to_string()),
                Op::View(_) if !opts.fuse => None,
                _ if !opts.fuse => Some("fusion off (LAZYFUSE_NOFUSE)".to_string()),
                Op::Reduce { .. } | Op::ArgReduce { .. } if uses >= 2 => {
                    Some(format!("reduction read by {uses} consumers (cost rule)"))
                }
                Op::Unary(u) if uses >= 2 && !cheap_unary(*u) => Some(format!(
                    "transcendental read by {uses} consumers (cost rule)"
                )),
                Op::UnaryParam(_) if uses >= 2 => Some(format!(
                    "transcendental read by {uses} consumers (cost rule)"
                )),
                Op::Binary(b) if uses >= 2 && !cheap_binary(*b) => {
                    Some(format!("expensive op read by {uses} consumers (cost rule)"))
                }
                _ => None,
            };
            if let Some(w) = why {
                materialized.entry(n).or_insert(w);
            }
            // The cost rule by size: a value that readers inline is recomputed by
            // each of them, with everything inlined into it; past a bound, two or
            // more readers store it instead. Without it a chain whose every step is
            // read twice (an iterative update, `t = t - t.mean(1) + 1`) makes
            // kernels whose size grows with the square of the depth.
            let inlined = !matches!(node.op, Op::Input(_)) && !materialized.contains_key(&n);
            if !inlined || !opts.fuse {
                continue;
            }
            // What the inputs inline (a producer stored by a decision taken after its
            // own turn counts 0): the nodes, and the depth.
            let (size, deep) = graph
                .inputs(n)
                .iter()
                .filter(|i| !materialized.contains_key(*i))
                .fold((1usize, 0usize), |(size, deep), i| {
                    (
                        size.saturating_add(cone.get(i).copied().unwrap_or(0)),
                        deep.max(depth.get(i).copied().unwrap_or(0)),
                    )
                });
            let deep = deep + 1;
            if deep > PLANNED_DEPTH {
                // Found here, not by the builder's bound: each bound the builder
                // meets costs a restart of the whole schedule.
                materialized.insert(
                    n,
                    format!("inlining deeper than {PLANNED_DEPTH} producers (recursion bound)"),
                );
                continue;
            }
            depth.insert(n, deep);
            let distinct = if size > MAX_SHARED_CONE {
                readers
                    .get(&n)
                    .map_or(0, |r| r.iter().collect::<hashbrown::HashSet<_>>().len())
            } else {
                0
            };
            if distinct >= 2 {
                materialized.insert(
                    n,
                    format!(
                        "{size} inlined ops read by {distinct} consumers (cost rule: recomputing them per reader grows with depth)"
                    ),
                );
            } else {
                cone.insert(n, size);
            }
        }
        for (i, &t) in targets.iter().enumerate() {
            if !matches!(graph.node(t).op, Op::Input(_)) {
                materialized
                    .entry(t)
                    .or_insert_with(|| format!("target t{i}"));
            }
        }
        Ok(Planner {
            graph,
            targets: targets.to_vec(),
            fuse: opts.fuse,
            math: opts.math,
            order,
            externs,
            materialized,
            views_of,
            extern_views,
            readers,
            donate: Vec::new(),
            unshared: hashbrown::HashSet::new(),
        })
    }

    /// Attempts until the materialized set is stable (see [`schedule`]).
    fn run(&mut self) -> Result<Schedule, String> {
        // Each failed attempt materializes one more node or unshares one more
        // write_view; the bound is a safety net.
        for _ in 0..=2 * self.order.len() + 2 {
            match self.attempt() {
                Ok(s) => return Ok(s),
                Err(Fail::Materialize(n, why)) => {
                    if self.materialized.contains_key(&n) {
                        return Err(format!("scheduler: {n} is already materialized ({why})"));
                    }
                    self.materialized.insert(n, why);
                }
                Err(Fail::Unshare(n)) => {
                    if !self.unshared.insert(n) {
                        return Err(format!("scheduler: write_view {n} is already unshared"));
                    }
                }
                Err(Fail::Rows { reduction, .. }) => {
                    // (only a kernel that cannot take the row form lets this out)
                    if self.materialized.contains_key(&reduction) {
                        return Err(format!("scheduler: {reduction} is already materialized"));
                    }
                    self.materialized
                        .insert(reduction, BROADCAST_REDUCTION.to_string());
                }
                Err(Fail::Split(w)) => {
                    if self.materialized.contains_key(&w) {
                        return Err(format!("scheduler: {w} is already materialized"));
                    }
                    self.materialized.insert(w, WRITE_VIEW_STORED.to_string());
                }
                Err(Fail::Merge) => return Err("scheduler: unexpected merge failure".into()),
                Err(Fail::Error(e)) => return Err(e),
            }
        }
        Err("scheduler: materialization did not converge".into())
    }

    /// Whether every path from `start` (a reader of a write_view's base) leads into
    /// the write_view `w` through nodes inlined into its store kernel only: no
    /// materialized node, target or input on the way.
    fn feeds_only(&self, start: NodeId, w: NodeId, targets: &HashMap<NodeId, usize>) -> bool {
        let mut stack = vec![start];
        let mut seen = hashbrown::HashSet::new();
        while let Some(c) = stack.pop() {
            if c == w || !seen.insert(c) {
                continue;
            }
            if self.materialized.contains_key(&c)
                || targets.contains_key(&c)
                || matches!(self.graph.node(c).op, Op::Input(_))
            {
                return false;
            }
            match self.readers.get(&c) {
                Some(r) if !r.is_empty() => stack.extend(r.iter().copied()),
                _ => return false,
            }
        }
        true
    }

    /// Builds the schedule with the current materialized set.
    fn attempt(&self) -> Result<Schedule, Fail> {
        let g = self.graph;
        // each of the loops below walks the order once
        crate::work::add(3 * self.order.len() as u64);
        let mut buffers: Vec<BufDecl> = Vec::new();
        let mut buf_of: HashMap<NodeId, BufId> = HashMap::new();
        let mut input_bufs: HashMap<InputId, BufId> = HashMap::new();
        let mut first_target: HashMap<NodeId, usize> = HashMap::new();
        for (i, &t) in self.targets.iter().enumerate() {
            first_target.entry(t).or_insert(i);
        }
        // In-place writes: the base of a write_view is computed straight into the
        // write_view's buffer (no copy of the storage) when nothing but the
        // write_view's own store kernel reads it; a donated input base is that buffer
        // (see `schedule_donating`). The store kernel's reads of the buffer are
        // checked in `lower::special_kernels` (`Fail::Unshare` on a hazard).
        let mut into: HashMap<NodeId, NodeId> = HashMap::new();
        // How many input nodes name each input buffer (a donated base must be its
        // buffer's only node).
        let mut input_nodes: HashMap<InputId, usize> = HashMap::new();
        for &m in &self.order {
            if let Op::Input(id) = g.node(m).op {
                *input_nodes.entry(id).or_default() += 1;
            }
        }
        for &n in &self.order {
            let node = g.node(n);
            if !matches!(node.op, Op::WriteView(_)) || self.unshared.contains(&n) {
                continue;
            }
            if !self.materialized.contains_key(&n) {
                continue; // folded into its reader: no buffer of its own
            }
            let base = g.inputs(n)[0];
            let bnode = g.node(base);
            let base_ok = match bnode.op {
                Op::Input(id) => self.donate.contains(&id) && input_nodes.get(&id) == Some(&1),
                _ => self.materialized.contains_key(&base),
            };
            if base_ok
                && !first_target.contains_key(&base)
                && bnode.dtype == node.dtype
                && bnode.numel() == node.numel()
                && self.readers.get(&base).is_some_and(|r| {
                    r.iter()
                        .all(|&c| c == n || self.feeds_only(c, n, &first_target))
                })
            {
                into.insert(base, n);
            }
        }
        // The write_view each node is computed into, at the end of its chain of
        // in-place writes (later nodes first: a chain of writes resolves in one pass).
        let mut rep_of: HashMap<NodeId, NodeId> = HashMap::with_capacity(into.len());
        for &n in self.order.iter().rev() {
            if let Some(&w) = into.get(&n) {
                let r = rep_of.get(&w).copied().unwrap_or(w);
                rep_of.insert(n, r);
            }
        }
        // A target that is a reshape of a stored value read by nothing else is that
        // value's buffer: the producer stores straight into the output (a 2-D
        // matmul's `[1, m, n]` product realized as `[m, n]`), with no copy kernel.
        for &t in &self.targets {
            let Op::View(l) = &g.node(t).op else { continue };
            let p = g.inputs(t)[0];
            let alone = self.readers.get(&p).is_some_and(|r| r.as_slice() == [t]);
            if l.is_identity_of(g.node(p).numel())
                && alone
                && self.materialized.contains_key(&p)
                && !matches!(g.node(p).op, Op::Input(_) | Op::WriteView(_))
                && !first_target.contains_key(&p)
                && !rep_of.contains_key(&p)
                && !into.contains_key(&p)
            {
                rep_of.insert(p, t);
            }
        }
        let resolve = |n: NodeId| rep_of.get(&n).copied().unwrap_or(n);
        for &n in &self.order {
            let node = g.node(n);
            if let Some(p) = self.views_of.get(&n) {
                if let (Some(&b), false) = (buf_of.get(p), self.materialized.contains_key(&n)) {
                    buf_of.insert(n, b);
                    continue;
                }
            }
            let rep = resolve(n);
            if let Some(&b) = buf_of.get(&rep) {
                buf_of.insert(n, b);
                continue;
            }
            let kind = match node.op {
                Op::Input(id) => {
                    if let Some(&b) = input_bufs.get(&id) {
                        buf_of.insert(n, b);
                        continue;
                    }
                    if into.contains_key(&n) {
                        BufKind::Donated(id)
                    } else {
                        BufKind::Input(id)
                    }
                }
                _ if self.materialized.contains_key(&n) => match first_target.get(&rep) {
                    Some(&i) => BufKind::Output(i),
                    None => BufKind::Temp,
                },
                _ => continue,
            };
            let b = BufId(buffers.len() as u32);
            buffers.push(BufDecl {
                dtype: node.dtype,
                len: node.numel(),
                kind,
            });
            if let Op::Input(id) = node.op {
                input_bufs.insert(id, b);
            }
            buf_of.insert(n, b);
            buf_of.insert(rep, b);
        }
        let mut steps: Vec<Step> = Vec::new();
        let mut notes = Vec::new();
        // The kernel being built (roots may still join it) and its roots.
        let mut open: Option<(Builder, Vec<NodeId>)> = None;
        let ctx = Ctx {
            graph: g,
            materialized: &self.materialized,
            buf_of: &buf_of,
            buffers: &buffers,
            math: self.math,
        };
        for &n in &self.order {
            let node = g.node(n);
            if matches!(node.op, Op::Input(_)) || !self.materialized.contains_key(&n) {
                continue;
            }
            if let Op::View(_) = node.op {
                let p = g.inputs(n)[0];
                if buf_of.get(&p) == buf_of.get(&n) {
                    notes.push(format!(
                        "{n} view{}: the buffer of {p}, which stores into it",
                        crate::shape::fmt_shape(&node.shape)
                    ));
                    continue;
                }
            }
            let shared = match into.get(&n) {
                Some(w) => format!(" (computed into the buffer of write_view {w})"),
                None => String::new(),
            };
            notes.push(format!(
                "{n} {}{}: materialized: {}{shared}",
                node.op.name(),
                crate::shape::fmt_shape(&node.shape),
                self.materialized[&n]
            ));
            if let Some(why) = self.externs.get(&n) {
                if let Some((b, _)) = open.take() {
                    steps.push(Step::Loop(b.finish(steps.len())));
                }
                let inputs = g.inputs(n).iter().map(|i| buf_of[i]).collect();
                steps.push(Step::Extern(ExternStep {
                    node: n,
                    op: node.op.clone(),
                    dtype: node.dtype,
                    shape: node.shape.clone(),
                    inputs,
                    input_shapes: g
                        .inputs(n)
                        .iter()
                        .map(|i| g.node(*i).shape.clone())
                        .collect(),
                    // a view stored for another reader has a row-major buffer
                    input_views: g
                        .inputs(n)
                        .iter()
                        .map(|i| match (self.extern_views.get(i), self.views_of.get(i)) {
                            (Some(v), Some(p)) if buf_of.get(i) == buf_of.get(p) => Some(v.clone()),
                            _ => None,
                        })
                        .collect(),
                    output: buf_of[&n],
                    reason: why.clone(),
                }));
                continue;
            }
            match &node.op {
                Op::Cat { .. }
                | Op::WriteView(_)
                | Op::Softmax { .. }
                | Op::Matmul
                | Op::Cumsum { .. }
                | Op::Scan { .. } => {
                    if let Some((b, _)) = open.take() {
                        steps.push(Step::Loop(b.finish(steps.len())));
                    }
                    for k in crate::lower::special_kernels(&ctx, n)? {
                        steps.push(Step::Loop(k.finish(steps.len())));
                    }
                    continue;
                }
                _ => {}
            }
            // Try to join the open kernel (same iteration space, no conflicting reads,
            // room for another output). The join edits the builder in place; where
            // it fails, the builder is rebuilt from its roots (once per kernel, so a
            // kernel of many roots costs its size, not a copy per root).
            if self.fuse {
                if let Some((b, roots)) = open.as_mut() {
                    if b.parallel == canonical(&node.shape) && roots.len() < MAX_ROOTS {
                        b.roots.push(n);
                        // Any failure here only means "not in this kernel": the root
                        // is tried again on its own below.
                        match b.add_root(&ctx, n) {
                            Ok(()) => {
                                roots.push(n);
                                continue;
                            }
                            Err(
                                Fail::Merge
                                | Fail::Materialize(..)
                                | Fail::Rows { .. }
                                | Fail::Split(_),
                            ) => {
                                *b = Builder::replay(&ctx, roots)?;
                            }
                            Err(e) => return Err(e),
                        }
                    }
                }
            }
            if let Some((b, _)) = open.take() {
                steps.push(Step::Loop(b.finish(steps.len())));
            }
            let mut started = Builder::start(&ctx, n)?;
            if started.len() == 1 {
                open = started.pop().map(|b| (b, vec![n]));
            } else {
                // a root split around a folded write: its kernels take no other root
                if let Some(Split { write, .. }) = &started[0].split {
                    notes.push(format!(
                        "{write} write_view: folded into {n}, computed over every point from the base, then over the written region"
                    ));
                }
                for k in started {
                    steps.push(Step::Loop(k.finish(steps.len())));
                }
            }
        }
        if let Some((b, _)) = open.take() {
            steps.push(Step::Loop(b.finish(steps.len())));
        }
        let outputs = self.targets.iter().map(|t| buf_of[t]).collect();
        Ok(Schedule {
            buffers,
            steps,
            outputs,
            notes,
        })
    }
}

/// How the float matmul `n` reads its operand view `l` in place (a transposed or
/// batch-broadcast operand), or `None` where the view is stored first: a matmul of
/// float32/float64 in Fast math that runs on the host (`gemm` takes any strides;
/// the interpreter's routine of Exact math gathers the view first, which costs
/// what storing it would).
fn strided_operand(
    graph: &Graph,
    n: NodeId,
    l: &crate::layout::Layout,
    opts: &ScheduleOptions,
) -> Option<ExternView> {
    let node = graph.node(n);
    let host_float = matches!(node.op, Op::Matmul)
        && !opts.matmul_kernels
        && opts.math == MathMode::Fast
        && matches!(node.dtype, DType::F32 | DType::F64);
    let strides = l
        .strides
        .iter()
        .map(|&s| usize::try_from(s).ok())
        .collect::<Option<Vec<usize>>>()?;
    (host_float && l.shape.len() == 3).then_some(ExternView {
        offset: l.offset,
        strides,
    })
}

/// Why a write_view is stored.
const WRITE_VIEW_STORED: &str = "write_view (copy of the base, then stores)";

/// Whether write_view `w` folds into its reader (see [`Builder::split`]): not a
/// target, read once, by an elementwise op of its own shape. Its readers then
/// never see the write as a buffer, and it costs no copy of the base.
fn folds_into_reader(
    graph: &Graph,
    w: NodeId,
    readers: &HashMap<NodeId, Vec<NodeId>>,
    targets: &[NodeId],
) -> bool {
    let Some([r]) = readers.get(&w).map(|r| r.as_slice()) else {
        return false;
    };
    let reader = graph.node(*r);
    !targets.contains(&w)
        && reader.shape == graph.node(w).shape
        && matches!(
            reader.op,
            Op::Unary(_) | Op::UnaryParam(_) | Op::Binary(_) | Op::Where | Op::Cast
        )
}

/// Why a reduction read through a broadcast is stored.
pub(crate) const BROADCAST_REDUCTION: &str =
    "reduction result broadcast or permuted by its consumer (recomputing it would multiply its work)";

/// Whether view `l` of reduction `r` spreads each result over the row it reduced,
/// innermost dim included (the shape of `r`'s input, the reduced dims broadcast,
/// the kept ones at their own positions): what a row kernel computes in place.
fn spreads_over_rows(graph: &Graph, r: NodeId, l: &crate::layout::Layout) -> bool {
    let Op::Reduce { axes, .. } = &graph.node(r).op else {
        return false;
    };
    let input = &graph.node(graph.inputs(r)[0]).shape;
    if l.shape != *input || l.offset != 0 {
        return false;
    }
    let kept: Vec<usize> = (0..input.len())
        .filter(|a| !axes.contains(a))
        .map(|a| input[a])
        .collect();
    let mut strides = contiguous_strides(&kept).into_iter();
    let mut ok = true;
    for (a, (&st, &sz)) in l.strides.iter().zip(&l.shape).enumerate() {
        let want = if axes.contains(&a) {
            0
        } else {
            strides.next().unwrap_or(1)
        };
        ok &= sz == 1 || st == want;
    }
    let innermost = input.iter().rposition(|&s| s > 1);
    ok && innermost.is_some_and(|a| axes.contains(&a))
}

/// Why a node runs as an extern step, or `None` for loop-kernel nodes.
fn extern_reason(graph: &Graph, n: NodeId, opts: &ScheduleOptions) -> Option<String> {
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
            let (acc, axis) = crate::lower::scan_accum(&node.op)?;
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
                x.shape.clone()
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
                _ if crate::lower::reduce_output_dtype(*op, dt) != Some(node.dtype) => {
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
                        x.shape.clone()
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
                x.shape.clone()
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

/// `shape` without its size-1 dims: the loop dims it needs.
pub(crate) fn canonical(shape: &[usize]) -> Vec<usize> {
    shape.iter().copied().filter(|&s| s != 1).collect()
}

/// An affine function of the loop variables (coefficients beyond `c.len()` are 0).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(crate) struct Aff {
    pub(crate) off: i64,
    pub(crate) c: Vec<i64>,
}

impl Aff {
    pub(crate) fn constant(off: i64) -> Aff {
        Aff { off, c: vec![] }
    }

    pub(crate) fn var(d: usize) -> Aff {
        let mut c = vec![0; d + 1];
        c[d] = 1;
        Aff { off: 0, c }
    }

    fn trimmed(mut self) -> Aff {
        while self.c.last() == Some(&0) {
            self.c.pop();
        }
        self
    }

    pub(crate) fn coef(&self, d: usize) -> i64 {
        self.c.get(d).copied().unwrap_or(0)
    }

    /// `self * k + other`
    pub(crate) fn scaled_add(&self, k: i64, other: &Aff) -> Aff {
        let n = self.c.len().max(other.c.len());
        let c = (0..n).map(|d| self.coef(d) * k + other.coef(d)).collect();
        Aff {
            off: self.off * k + other.off,
            c,
        }
        .trimmed()
    }

    /// The smallest and largest value over loops of sizes `dims` (`None`: empty space).
    fn range(&self, dims: &[usize]) -> Option<(i128, i128)> {
        if dims.contains(&0) {
            return None;
        }
        let (mut lo, mut hi) = (self.off as i128, self.off as i128);
        for (d, &n) in dims.iter().enumerate() {
            let span = self.coef(d) as i128 * (n as i128 - 1);
            if span < 0 {
                lo += span;
            } else {
                hi += span;
            }
        }
        Some((lo, hi))
    }

    fn uses_from(&self, first: usize) -> bool {
        self.c.iter().skip(first).any(|&x| x != 0)
    }

    fn to_affine(&self, nd: usize) -> Affine {
        Affine {
            offset: self.off,
            strides: (0..nd).map(|d| self.coef(d)).collect(),
        }
    }
}

/// The contiguous flat index of element `coords` of a tensor of `shape`.
pub(crate) fn flat(shape: &[usize], coords: &[Aff]) -> Aff {
    let strides = contiguous_strides(shape);
    coords
        .iter()
        .zip(&strides)
        .fold(Aff::constant(0), |acc, (c, &s)| {
            c.scaled_add(s as i64, &acc)
        })
}

/// Read-only facts every kernel builder needs.
pub(crate) struct Ctx<'a> {
    pub(crate) graph: &'a Graph,
    pub(crate) materialized: &'a HashMap<NodeId, String>,
    pub(crate) buf_of: &'a HashMap<NodeId, BufId>,
    pub(crate) buffers: &'a [BufDecl],
    /// Fast lets composite lowerings (softmax) compute narrow floats in float32
    pub(crate) math: MathMode,
}

/// A write_view folded into a kernel's root (see [`Builder::split`]).
struct Split {
    /// the write_view
    write: NodeId,
    /// the point at which the root reads it (the root's own)
    at: Vec<Aff>,
    /// over the written region: the written values' point (the kernel's loop
    /// variables); `None` over every point, where the base's values stand in
    region: Option<Vec<Aff>>,
}

/// Whether two coordinate lists name the same point.
fn same_point(a: &[Aff], b: &[Aff]) -> bool {
    a.len() == b.len()
        && a.iter().zip(b).all(|(x, y)| {
            x.off == y.off && (0..x.c.len().max(y.c.len())).all(|d| x.coef(d) == y.coef(d))
        })
}

/// One loop kernel under construction.
pub(crate) struct Builder {
    /// parallel dims (fixed)
    pub(crate) parallel: Vec<usize>,
    /// reduction dims, set by the first reduction (`Some(vec![])`: none needed)
    pub(crate) red: Option<Vec<usize>>,
    /// the nodes this kernel stores
    pub(crate) roots: Vec<NodeId>,
    params: Vec<Param>,
    exprs: Vec<ExprNode>,
    stores: Vec<(usize, Aff, ExprId)>,
    /// expression hash-consing (debug text of expr, dtype and stage)
    interned: HashMap<String, ExprId>,
    /// (node, coords, inner phase) → value
    memo: HashMap<(NodeId, Vec<Aff>, Option<u32>), ExprId>,
    /// structural phase level of nodes (see [`Builder::level`])
    levels: HashMap<NodeId, u32>,
    /// the affine index of each Load expr (patched to full width at the end)
    load_index: HashMap<u32, Aff>,
    nodes: Vec<NodeId>,
    /// the members of `nodes`
    noted: hashbrown::HashSet<NodeId>,
    names: Vec<String>,
    /// current inlining depth of [`Builder::gen`]
    depth: usize,
    /// a single root being built by [`Builder::start`]: it may still take another
    /// form (a row kernel, [`Fail::Rows`]; a split around a write, [`Fail::Split`])
    alone: bool,
    /// the write_view folded into this kernel's root (see [`Builder::split`])
    split: Option<Split>,
}

impl Builder {
    pub(crate) fn new(parallel: Vec<usize>, roots: Vec<NodeId>) -> Builder {
        Builder {
            parallel,
            red: None,
            roots,
            params: vec![],
            exprs: vec![],
            stores: vec![],
            interned: HashMap::new(),
            memo: HashMap::new(),
            levels: HashMap::new(),
            load_index: HashMap::new(),
            nodes: vec![],
            noted: hashbrown::HashSet::new(),
            names: vec![],
            depth: 0,
            alone: false,
            split: None,
        }
    }

    /// All dims: parallel then reduction (a reduction over nothing gets one dim of
    /// size 1 so that reduction kernels always have a reduction loop).
    pub(crate) fn dims(&self) -> Vec<usize> {
        let mut d = self.parallel.clone();
        match &self.red {
            Some(r) if r.is_empty() => d.push(1),
            Some(r) => d.extend(r),
            None => {}
        }
        d
    }

    fn n_parallel(&self) -> usize {
        self.parallel.len()
    }

    /// The coordinates of the root's own elements: one loop var per non-1 dim.
    pub(crate) fn identity_coords(shape: &[usize], first_dim: usize) -> Vec<Aff> {
        let mut k = first_dim;
        shape
            .iter()
            .map(|&s| {
                if s == 1 {
                    Aff::constant(0)
                } else {
                    k += 1;
                    Aff::var(k - 1)
                }
            })
            .collect()
    }

    /// A kernel built from `roots`, joined in order (what the scheduler built when
    /// each of them joined): the kernel of the first one, then each further one
    /// added to it.
    fn replay(ctx: &Ctx, roots: &[NodeId]) -> Result<Builder, Fail> {
        let mut started = Builder::start(ctx, roots[0])?;
        let (Some(mut b), true) = (started.pop(), started.is_empty()) else {
            return Err(Fail::Error(format!(
                "scheduler: root {} of a joined kernel was split",
                roots[0]
            )));
        };
        for &n in &roots[1..] {
            b.roots.push(n);
            b.add_root(ctx, n).map_err(|e| match e {
                Fail::Merge => Fail::Error(format!("scheduler: replaying root {n} failed")),
                e => e,
            })?;
        }
        Ok(b)
    }

    /// The kernel of root `n` alone: one point per element of its shape, or a row
    /// kernel when it reads a reduction broadcast over its innermost dims (a
    /// hand-written softmax's `e / e.sum(-1, true)`): those dims become the
    /// reduction loop, the reduction runs in the first phases and the root is
    /// stored from the last one, as the built-in softmax's kernel does. A cheap
    /// prologue is recomputed in each phase that reads it. Or two kernels, when it
    /// reads a write_view folded into it ([`Builder::split`]).
    fn start(ctx: &Ctx, n: NodeId) -> Result<Vec<Builder>, Fail> {
        let no_self_merge = |e| match e {
            Fail::Merge => Fail::Error(format!("scheduler: {n} conflicts with itself")),
            e => e,
        };
        let mut b = Builder::new(canonical(&ctx.graph.node(n).shape), vec![n]);
        b.alone = true;
        match b.add_root(ctx, n) {
            Ok(()) => {
                b.alone = false;
                Ok(vec![b])
            }
            Err(Fail::Rows { dims, .. }) => Builder::rows(ctx, n, &dims)
                .map(|b| vec![b])
                .map_err(no_self_merge),
            Err(Fail::Split(w)) => Builder::split(ctx, n, w).map_err(no_self_merge),
            Err(e) => Err(no_self_merge(e)),
        }
    }

    /// The kernels of root `n` reading write_view `w` folded into it (`w` is read
    /// once, at the root's own points, through elementwise ops): the root over every
    /// point with `w`'s base in place of `w`, then over the written region with the
    /// written values, storing over the first kernel's values there. The write
    /// itself is never stored: no copy of the base, no kernel of its own.
    fn split(ctx: &Ctx, n: NodeId, w: NodeId) -> Result<Vec<Builder>, Fail> {
        let (node, wnode) = (ctx.graph.node(n), ctx.graph.node(w));
        let unfit = |why: &str| Fail::Materialize(w, format!("{WRITE_VIEW_STORED}: {why}"));
        let Op::WriteView(layout) = &wnode.op else {
            return Err(Fail::Error(format!("scheduler: {w} is not a write_view")));
        };
        if node.shape != wnode.shape {
            return Err(unfit("read at other points than its reader's"));
        }
        let coords = Builder::identity_coords(&node.shape, 0);
        let mut all = Builder::new(canonical(&node.shape), vec![n]);
        all.split = Some(Split {
            write: w,
            at: coords,
            region: None,
        });
        all.add_root(ctx, n)?;
        // The first kernel also computes the written points from values they never
        // hold; an op that can fail would report what the program never computes.
        if may_fail(&all.exprs) {
            return Err(unfit("its reader may fail on the base's values"));
        }
        if layout.numel() == 0 {
            return Ok(vec![all]);
        }
        let dims = canonical(&layout.shape);
        let src = Builder::identity_coords(&layout.shape, 0);
        let f = src
            .iter()
            .zip(&layout.strides)
            .fold(Aff::constant(layout.offset as i64), |acc, (c, &s)| {
                c.scaled_add(s as i64, &acc)
            });
        let at = unravel(&f, &wnode.shape, &dims)
            .ok_or_else(|| unfit("its region is not a box of the base's dims"))?;
        let mut region = Builder::new(dims, vec![n]);
        region.split = Some(Split {
            write: w,
            at: at.clone(),
            region: Some(src),
        });
        let v = region.gen_by_op(ctx, n, &at, None)?;
        let p = region.param(ctx.buf_of[&n], ctx, true);
        region.store(p, flat(&node.shape, &at), v);
        region.note_node(ctx, n);
        Ok(vec![all, region])
    }

    /// The value of write_view `w` at `coords`, where it is folded into this
    /// kernel's root (see [`Builder::split`]).
    fn folded_write(
        &mut self,
        ctx: &Ctx,
        w: NodeId,
        coords: &[Aff],
        phase: Option<u32>,
    ) -> Result<ExprId, Fail> {
        let ins = ctx.graph.inputs(w);
        match &self.split {
            Some(s) if s.write == w && same_point(&s.at, coords) => match s.region.clone() {
                None => self.gen(ctx, ins[0], coords, phase),
                Some(src) => self.gen(ctx, ins[1], &src, phase),
            },
            None if self.alone && self.red.is_none() && self.roots.len() == 1 => {
                Err(Fail::Split(w))
            }
            _ => Err(Fail::Materialize(
                w,
                format!("{WRITE_VIEW_STORED}: read at other points than its reader's"),
            )),
        }
    }

    /// The row kernel of root `n` whose canonical dims `rows` become the
    /// reduction loop (see [`Builder::start`]).
    fn rows(ctx: &Ctx, n: NodeId, rows: &[usize]) -> Result<Builder, Fail> {
        let node = ctx.graph.node(n);
        let all = canonical(&node.shape);
        let parallel = (0..all.len())
            .filter(|d| !rows.contains(d))
            .map(|d| all[d])
            .collect();
        let mut b = Builder::new(parallel, vec![n]);
        b.set_red(rows.iter().map(|&d| all[d]).collect());
        // canonical dim → loop variable: the parallel ones first, then the rows
        let np = b.parallel.len();
        let (mut p, mut r) = (0, np);
        let var: Vec<usize> = (0..all.len())
            .map(|d| {
                let v = if rows.contains(&d) { &mut r } else { &mut p };
                *v += 1;
                *v - 1
            })
            .collect();
        let mut next = var.iter();
        let coords: Vec<Aff> = node
            .shape
            .iter()
            .map(|&s| match s {
                1 => Aff::constant(0),
                _ => Aff::var(*next.next().expect("a var per non-1 dim")),
            })
            .collect();
        let last = b.level(ctx, n);
        let v = b.gen_by_op(ctx, n, &coords, Some(last))?;
        let v = crate::lower::lift(&mut b, v, last)?;
        b.memo.insert((n, coords.clone(), Some(last)), v);
        let p = b.param(ctx.buf_of[&n], ctx, true);
        b.stores.push((p, flat(&node.shape, &coords), v));
        b.note_node(ctx, n);
        Ok(b)
    }

    /// The dims a row kernel would iterate as its reduction loop so that a
    /// reduction over `red` (canonical sizes), read at `coords`, is computed once
    /// per row: the parallel dims `coords` do not use, innermost included, when
    /// this kernel may still take the row form (see [`Builder::start`]).
    pub(crate) fn row_dims(&self, coords: &[Aff], red: &[usize]) -> Option<Vec<usize>> {
        let points: usize = self.parallel.iter().product();
        if !self.alone || self.red.is_some() || self.roots.len() != 1 || points > ROW_KERNEL_POINTS
        {
            return None;
        }
        let np = self.n_parallel();
        let used = self.parallel_vars_read(coords)?;
        let dims: Vec<usize> = (0..np).filter(|&d| !used[d]).collect();
        let sizes: Vec<usize> = dims.iter().map(|&d| self.parallel[d]).collect();
        (dims.len() < np && dims.last() == Some(&(np - 1)) && sizes == red).then_some(dims)
    }

    /// Computes root `n` and stores it into its buffer.
    fn add_root(&mut self, ctx: &Ctx, n: NodeId) -> Result<(), Fail> {
        let node = ctx.graph.node(n);
        let coords = Self::identity_coords(&node.shape, 0);
        let v = self.gen_by_op(ctx, n, &coords, None)?;
        self.memo.insert((n, coords.clone(), None), v);
        let idx = flat(&node.shape, &coords);
        let p = self.param(ctx.buf_of[&n], ctx, true);
        self.stores.push((p, idx, v));
        self.note_node(ctx, n);
        Ok(())
    }

    pub(crate) fn store(&mut self, param: usize, idx: Aff, v: ExprId) {
        self.stores.push((param, idx, v));
    }

    pub(crate) fn note_node(&mut self, ctx: &Ctx, n: NodeId) {
        if self.noted.insert(n) {
            self.nodes.push(n);
            if self.names.len() < 4 {
                let name = ctx.graph.node(n).op.name();
                if !self.names.contains(&name) {
                    self.names.push(name);
                }
            }
        }
    }

    /// The param index of buffer `buf` (added on first use).
    pub(crate) fn param(&mut self, buf: BufId, ctx: &Ctx, writes: bool) -> usize {
        if let Some(i) = self.params.iter().position(|p| p.buf == buf) {
            if writes {
                self.params[i].writes = true;
            }
            return i;
        }
        let d = &ctx.buffers[buf.0 as usize];
        self.params.push(Param {
            buf,
            dtype: d.dtype,
            len: d.len,
            writes,
        });
        self.params.len() - 1
    }

    /// Whether the kernel has `buf` as a param already.
    pub(crate) fn reads(&self, buf: BufId) -> bool {
        self.params.iter().any(|p| p.buf == buf)
    }

    /// Whether every load of `buf` is at exactly `idx` with no data-dependent term
    /// (each point reads only the element it stores: no store hazard).
    pub(crate) fn loads_only_at(&self, buf: BufId, idx: &Aff) -> bool {
        let Some(p) = self.params.iter().position(|q| q.buf == buf) else {
            return true;
        };
        let nd = self.dims().len();
        let want = idx.to_affine(nd);
        self.exprs.iter().enumerate().all(|(i, e)| match &e.expr {
            Expr::Load { param, dynamic, .. } if *param == p => {
                dynamic.is_none()
                    && self
                        .load_index
                        .get(&(i as u32))
                        .is_some_and(|a| a.to_affine(nd) == want)
            }
            _ => true,
        })
    }

    /// The dtype of an expression.
    pub(crate) fn dtype_of(&self, x: ExprId) -> DType {
        self.exprs[x.0 as usize].dtype
    }

    /// Whether an expression is evaluated inside a reduction loop.
    pub(crate) fn is_inner_expr(&self, x: ExprId) -> bool {
        matches!(self.exprs[x.0 as usize].stage, Stage::Inner(_))
    }

    /// The first reduction loop variable, inside phase `k`.
    pub(crate) fn reduction_index(&mut self, k: u32) -> ExprId {
        let d = self.n_parallel();
        self.push(Expr::LoopIndex { dim: d }, DType::I64, Stage::Inner(k))
    }

    /// Whether an index uses a reduction loop variable.
    fn is_inner(&self, a: &Aff) -> bool {
        a.uses_from(self.n_parallel())
    }

    /// Whether a reduction dim is empty: then even a read the reduction loops do not
    /// index stays inside them (an outer read would run, and read an operand that is
    /// broadcast along the empty dim, from an empty buffer).
    fn empty_reduction(&self) -> bool {
        self.red.as_ref().is_some_and(|r| r.contains(&0))
    }

    /// Adds (or finds) an expression; its stage follows from its operands.
    pub(crate) fn emit(
        &mut self,
        expr: Expr,
        dtype: DType,
        phase: Option<u32>,
    ) -> Result<ExprId, Fail> {
        let stage = match &expr {
            Expr::Reduce { x, .. } => match self.exprs[x.0 as usize].stage {
                Stage::Inner(k) => Stage::Outer(k + 1),
                Stage::Outer(_) => return Err(Fail::Error("reduce of an outer value".into())),
            },
            Expr::Load { .. } | Expr::LoopIndex { .. } => unreachable_stage(),
            _ => {
                let mut inner = false;
                let mut lvl = 0;
                for o in LoopKernel::operands(&expr) {
                    match self.exprs[o.0 as usize].stage {
                        Stage::Inner(_) => inner = true,
                        Stage::Outer(j) => lvl = lvl.max(j),
                    }
                }
                if inner {
                    Stage::Inner(
                        phase.ok_or_else(|| Fail::Error("inner value outside a phase".into()))?,
                    )
                } else {
                    Stage::Outer(lvl)
                }
            }
        };
        Ok(self.push(expr, dtype, stage))
    }

    fn push(&mut self, expr: Expr, dtype: DType, stage: Stage) -> ExprId {
        crate::work::add(1);
        let key = format!("{expr:?}|{dtype}|{stage}");
        if let Some(&e) = self.interned.get(&key) {
            return e;
        }
        let id = ExprId(self.exprs.len() as u32);
        self.exprs.push(ExprNode { expr, dtype, stage });
        self.interned.insert(key, id);
        id
    }

    /// A load of `buf` at `idx` (an inner load when the index uses reduction dims).
    pub(crate) fn load(
        &mut self,
        ctx: &Ctx,
        buf: BufId,
        idx: Aff,
        phase: Option<u32>,
    ) -> Result<ExprId, Fail> {
        let p = self.readable_param(ctx, buf)?;
        let stage = if self.is_inner(&idx) || (phase.is_some() && self.empty_reduction()) {
            Stage::Inner(phase.ok_or_else(|| Fail::Error("inner load outside a phase".into()))?)
        } else {
            Stage::Outer(0)
        };
        Ok(self.push_load(p, idx, None, stage))
    }

    /// A load of `buf` at `idx` plus a data-dependent term (inner when the index or
    /// the index value is).
    pub(crate) fn load_dyn(
        &mut self,
        ctx: &Ctx,
        buf: BufId,
        idx: Aff,
        dynamic: DynIndex,
        phase: Option<u32>,
    ) -> Result<ExprId, Fail> {
        let p = self.readable_param(ctx, buf)?;
        let stage = if self.is_inner(&idx) || self.is_inner_expr(dynamic.value) {
            Stage::Inner(phase.ok_or_else(|| Fail::Error("inner load outside a phase".into()))?)
        } else {
            // after the phases the index value needs (it may be a reduction's result)
            self.exprs[dynamic.value.0 as usize].stage
        };
        Ok(self.push_load(p, idx, Some(dynamic), stage))
    }

    /// The param through which this kernel reads `buf`; a buffer the kernel writes
    /// is read at another index than it is written, which one kernel cannot do.
    fn readable_param(&mut self, ctx: &Ctx, buf: BufId) -> Result<usize, Fail> {
        let p = self.param(buf, ctx, false);
        if self.params[p].writes || self.stores.iter().any(|s| s.0 == p) {
            return Err(Fail::Merge);
        }
        Ok(p)
    }

    /// The load expression of param `p` at `idx` (+ `dynamic`) at `stage`, interned;
    /// its affine index is resolved when the kernel is finished (`load_index`).
    fn push_load(&mut self, p: usize, idx: Aff, dynamic: Option<DynIndex>, stage: Stage) -> ExprId {
        crate::work::add(1);
        let dtype = self.params[p].dtype;
        let key = format!("load {p} {idx:?} {dynamic:?}|{stage}");
        if let Some(&e) = self.interned.get(&key) {
            return e;
        }
        let id = ExprId(self.exprs.len() as u32);
        self.exprs.push(ExprNode {
            expr: Expr::Load {
                param: p,
                index: Affine {
                    offset: 0,
                    strides: vec![],
                },
                dynamic,
            },
            dtype,
            stage,
        });
        self.load_index.insert(id.0, idx);
        self.interned.insert(key, id);
        id
    }

    /// Where node `x`'s elements live when they can be read by position: its
    /// buffer, offset and strides (over `x`'s shape), for a buffer or a view of one.
    /// Anything else must be stored first (a data-dependent read cannot inline it).
    pub(crate) fn addressable(&self, ctx: &Ctx, x: NodeId) -> Result<(BufId, i64, Vec<i64>), Fail> {
        let is_buf = |m: NodeId| {
            matches!(ctx.graph.node(m).op, Op::Input(_)) || ctx.materialized.contains_key(&m)
        };
        if self.roots.contains(&x) {
            return Err(Fail::Merge);
        }
        let node = ctx.graph.node(x);
        if is_buf(x) {
            let strides = contiguous_strides(&node.shape);
            return Ok((
                ctx.buf_of[&x],
                0,
                strides.iter().map(|&s| s as i64).collect(),
            ));
        }
        if let Op::View(l) = &node.op {
            let p = ctx.graph.inputs(x)[0];
            if is_buf(p) && !self.roots.contains(&p) {
                let strides = l.strides.iter().map(|&s| s as i64).collect();
                return Ok((ctx.buf_of[&p], l.offset as i64, strides));
            }
        }
        Err(Fail::Materialize(
            x,
            "read through data-dependent indices (loaded by position)".into(),
        ))
    }

    /// A constant of `dtype`.
    pub(crate) fn constant(&mut self, c: Const, dtype: DType) -> ExprId {
        self.push(Expr::Const(c), dtype, Stage::Outer(0))
    }

    /// The value of an affine index as an `int64` expression.
    pub(crate) fn affine_value(&mut self, a: &Aff, phase: Option<u32>) -> Result<ExprId, Fail> {
        let mut acc = self.constant(Const::Int(a.off as i128), DType::I64);
        for d in 0..a.c.len() {
            let k = a.coef(d);
            if k == 0 {
                continue;
            }
            let stage = if d >= self.n_parallel() {
                Stage::Inner(
                    phase.ok_or_else(|| Fail::Error("reduction index outside a phase".into()))?,
                )
            } else {
                Stage::Outer(0)
            };
            let i = self.push(Expr::LoopIndex { dim: d }, DType::I64, stage);
            let kc = self.constant(Const::Int(k as i128), DType::I64);
            let t = self.emit(
                Expr::Binary {
                    op: BinaryOp::Mul,
                    a: i,
                    b: kc,
                },
                DType::I64,
                phase,
            )?;
            acc = self.emit(
                Expr::Binary {
                    op: BinaryOp::Add,
                    a: acc,
                    b: t,
                },
                DType::I64,
                phase,
            )?;
        }
        Ok(acc)
    }

    /// `x` converted to `dtype` (no expression when it already has it).
    pub(crate) fn cast(
        &mut self,
        x: ExprId,
        dtype: DType,
        phase: Option<u32>,
    ) -> Result<ExprId, Fail> {
        if self.exprs[x.0 as usize].dtype == dtype {
            return Ok(x);
        }
        if let Expr::Const(c) = self.exprs[x.0 as usize].expr {
            if let Some(c) = fold_cast(c, dtype) {
                // A constant of the target dtype: kernels then stay single-dtype
                // (and vectorizable), e.g. `x * 0.5` on float32.
                return Ok(self.constant(c, dtype));
            }
        }
        self.emit(Expr::Cast { x }, dtype, phase)
    }

    /// The structural phase level of a node: how many reduction phases its value
    /// needs before it can be computed (0 for buffers and plain elementwise work).
    pub(crate) fn level(&mut self, ctx: &Ctx, n: NodeId) -> u32 {
        // An explicit stack: graphs can be chains far deeper than the thread's stack.
        let mut stack = vec![(n, false)];
        while let Some((m, expanded)) = stack.pop() {
            if self.levels.contains_key(&m) {
                continue;
            }
            let node = ctx.graph.node(m);
            let leaf = matches!(node.op, Op::Input(_))
                || (ctx.materialized.contains_key(&m) && !self.roots.contains(&m));
            if leaf {
                self.levels.insert(m, 0);
                continue;
            }
            let ins = ctx.graph.inputs(m);
            if !expanded {
                stack.push((m, true));
                stack.extend(
                    ins.iter()
                        .filter(|i| !self.levels.contains_key(*i))
                        .map(|&i| (i, false)),
                );
                continue;
            }
            let inner = ins
                .iter()
                .map(|i| self.levels.get(i).copied().unwrap_or(0))
                .max()
                .unwrap_or(0);
            let l = match &node.op {
                Op::Reduce { op, .. } => inner + crate::lower::reduce_phases(*op),
                Op::ArgReduce { .. } => inner + 1,
                _ => inner,
            };
            self.levels.insert(m, l);
        }
        self.levels.get(&n).copied().unwrap_or(0)
    }

    /// The value of element `coords` of node `n` (inlined unless materialized).
    pub(crate) fn gen(
        &mut self,
        ctx: &Ctx,
        n: NodeId,
        coords: &[Aff],
        phase: Option<u32>,
    ) -> Result<ExprId, Fail> {
        crate::work::add(1);
        let inner = coords.iter().any(|c| self.is_inner(c)) || self.empty_reduction();
        let key_phase = if inner { phase } else { None };
        let key = (n, coords.to_vec(), key_phase);
        if let Some(&e) = self.memo.get(&key) {
            return Ok(e);
        }
        let node = ctx.graph.node(n);
        let v = if matches!(node.op, Op::Input(_)) || ctx.materialized.contains_key(&n) {
            if self.roots.contains(&n) {
                // A root of this kernel read at other coordinates than its own.
                return Err(Fail::Merge);
            }
            let idx = flat(&node.shape, coords);
            self.load(ctx, ctx.buf_of[&n], idx, key_phase)?
        } else if self.depth > MAX_DEPTH {
            // Inlining recurses once per producer: a deep chain is cut into kernels
            // (each restart stores one more value) instead of overflowing the stack.
            return Err(Fail::Materialize(
                n,
                format!("inlining deeper than {MAX_DEPTH} producers (recursion bound)"),
            ));
        } else if self.exprs.len() > MAX_EXPRS {
            // Recomputing through many index maps can grow a kernel without bound:
            // past this size, values are stored and loaded instead.
            return Err(Fail::Materialize(
                n,
                format!("kernel over {MAX_EXPRS} expressions (recompute bound)"),
            ));
        } else {
            self.note_node(ctx, n);
            self.depth += 1;
            let v = self.gen_by_op(ctx, n, coords, key_phase);
            self.depth -= 1;
            v?
        };
        self.memo.insert(key, v);
        Ok(v)
    }

    /// The value of element `coords` of node `n`, computed from its op.
    fn gen_by_op(
        &mut self,
        ctx: &Ctx,
        n: NodeId,
        coords: &[Aff],
        phase: Option<u32>,
    ) -> Result<ExprId, Fail> {
        let node = ctx.graph.node(n);
        let ins = ctx.graph.inputs(n);
        let dt = node.dtype;
        match &node.op {
            Op::Input(_) => Err(Fail::Error("input computed by op".into())),
            Op::Full(s) => {
                let (c, nat) = match *s {
                    Scalar::Bool(b) => (Const::Bool(b), DType::Bool),
                    Scalar::Int(i) => (Const::Int(i as i128), DType::I64),
                    Scalar::Float(f) => (Const::Float(f), DType::F64),
                    Scalar::Complex(..) => {
                        return Err(Fail::Error("complex fill in a loop kernel".into()))
                    }
                };
                if let Some(folded) = fold_cast(c, dt) {
                    // no dead constant of the natural dtype left behind (it would
                    // make the kernel mixed-dtype)
                    return Ok(self.constant(folded, dt));
                }
                let c = self.constant(c, nat);
                self.cast(c, dt, phase)
            }
            Op::Arange { start, step } => {
                let i = self.affine_value(&coords[0], phase)?;
                if dt.is_integer() {
                    // The interpreter: `(start as i64).wrapping_add(i * (step as i64))`.
                    let s = self.constant(Const::Int(*start as i64 as i128), DType::I64);
                    let st = self.constant(Const::Int(*step as i64 as i128), DType::I64);
                    let m = self.emit(
                        Expr::Binary {
                            op: BinaryOp::Mul,
                            a: i,
                            b: st,
                        },
                        DType::I64,
                        phase,
                    )?;
                    let v = self.emit(
                        Expr::Binary {
                            op: BinaryOp::Add,
                            a: s,
                            b: m,
                        },
                        DType::I64,
                        phase,
                    )?;
                    self.cast(v, dt, phase)
                } else {
                    // The interpreter: `start + i as f64 * step` in f64, then converted.
                    let f = self.cast(i, DType::F64, phase)?;
                    let st = self.constant(Const::Float(*step), DType::F64);
                    let s = self.constant(Const::Float(*start), DType::F64);
                    let m = self.emit(
                        Expr::Binary {
                            op: BinaryOp::Mul,
                            a: f,
                            b: st,
                        },
                        DType::F64,
                        phase,
                    )?;
                    let v = self.emit(
                        Expr::Binary {
                            op: BinaryOp::Add,
                            a: s,
                            b: m,
                        },
                        DType::F64,
                        phase,
                    )?;
                    self.cast(v, dt, phase)
                }
            }
            Op::View(layout) => {
                let p = ins[0];
                let pnode = ctx.graph.node(p);
                let f = coords
                    .iter()
                    .zip(&layout.strides)
                    .fold(Aff::constant(layout.offset as i64), |acc, (c, &s)| {
                        c.scaled_add(s as i64, &acc)
                    });
                let here = self.roots.contains(&p);
                if !here && (matches!(pnode.op, Op::Input(_)) || ctx.materialized.contains_key(&p))
                {
                    let k = phase.filter(|_| self.is_inner(&f) || self.empty_reduction());
                    let v = self.load(ctx, ctx.buf_of[&p], f, k)?;
                    return Ok(v);
                }
                match unravel(&f, &pnode.shape, &self.dims()) {
                    // (a root of this kernel is found at its own coordinates, or the
                    // merge fails)
                    Some(pc) => self.gen(ctx, p, &pc, phase),
                    None if here => Err(Fail::Merge),
                    None => Err(Fail::Materialize(
                        p,
                        format!(
                            "read through view {n} whose index does not decompose into its dims"
                        ),
                    )),
                }
            }
            Op::Flip { axes } => {
                let shape = &node.shape;
                let pc: Vec<Aff> = coords
                    .iter()
                    .enumerate()
                    .map(|(d, c)| {
                        if axes.contains(&d) {
                            c.scaled_add(-1, &Aff::constant(shape[d] as i64 - 1))
                        } else {
                            c.clone()
                        }
                    })
                    .collect();
                self.gen(ctx, ins[0], &pc, phase)
            }
            Op::Cast => {
                let x = self.gen(ctx, ins[0], coords, phase)?;
                self.cast(x, dt, phase)
            }
            Op::Unary(op) => {
                let x = self.gen(ctx, ins[0], coords, phase)?;
                self.emit(Expr::Unary { op: *op, x }, dt, phase)
            }
            Op::UnaryParam(op) => {
                let x = self.gen(ctx, ins[0], coords, phase)?;
                self.emit(Expr::UnaryParam { op: *op, x }, dt, phase)
            }
            Op::Binary(op) => {
                let a = self.gen(ctx, ins[0], coords, phase)?;
                let b = self.gen(ctx, ins[1], coords, phase)?;
                self.emit(Expr::Binary { op: *op, a, b }, dt, phase)
            }
            Op::Where => {
                let cond = self.gen(ctx, ins[0], coords, phase)?;
                let a = self.gen(ctx, ins[1], coords, phase)?;
                let b = self.gen(ctx, ins[2], coords, phase)?;
                self.emit(Expr::Where { cond, a, b }, dt, phase)
            }
            Op::Reduce { .. } | Op::ArgReduce { .. } => {
                crate::lower::reduce(self, ctx, n, coords, phase)
            }
            Op::Gather { .. } | Op::IndexSelect { .. } | Op::Take => {
                crate::lower::indexing(self, ctx, n, coords, phase)
            }
            Op::WriteView(_) => self.folded_write(ctx, n, coords, phase),
            other => Err(Fail::Materialize(
                n,
                format!("{} is computed in its own step", other.name()),
            )),
        }
    }

    /// Which parallel dims `coords` read, when each coordinate is a constant or a
    /// distinct parallel loop variable with coefficient ±1 (`None` otherwise).
    fn parallel_vars_read(&self, coords: &[Aff]) -> Option<Vec<bool>> {
        let np = self.n_parallel();
        let mut used = vec![false; np];
        for c in coords {
            let vars: Vec<usize> = (0..c.c.len()).filter(|&d| c.coef(d) != 0).collect();
            match vars.as_slice() {
                [] => {}
                [d] if *d < np && c.coef(*d).abs() == 1 && !used[*d] => used[*d] = true,
                _ => return None,
            }
        }
        Some(used)
    }

    /// Checks that a reduction inlined at `coords` is computed once per parallel
    /// point (each coordinate a distinct parallel loop variable, or a constant, and
    /// every parallel dim used): otherwise recomputing it would multiply its work.
    pub(crate) fn once_per_point(&self, coords: &[Aff]) -> bool {
        let Some(used) = self.parallel_vars_read(coords) else {
            return false;
        };
        used.iter().zip(&self.parallel).all(|(&u, &s)| u || s == 1)
    }

    /// Fixes the reduction dims (the first reduction sets them; later ones must agree).
    pub(crate) fn set_red(&mut self, red: Vec<usize>) -> bool {
        match &self.red {
            None => {
                self.red = Some(red);
                true
            }
            Some(r) => *r == red,
        }
    }

    /// The finished kernel, named after its step.
    pub(crate) fn finish(self, step: usize) -> LoopKernel {
        let dims = self.dims();
        let nd = dims.len();
        let n_parallel = self.n_parallel();
        let mut exprs = self.exprs;
        for (id, idx) in &self.load_index {
            if let Expr::Load { index, .. } = &mut exprs[*id as usize].expr {
                *index = idx.to_affine(nd);
            }
        }
        let mut k = LoopKernel {
            name: format!("k{step}_{}", self.names.join("_")),
            nodes: self.nodes,
            params: self.params,
            n_parallel,
            dims,
            exprs,
            stores: self
                .stores
                .into_iter()
                .map(|(param, idx, value)| StoreOp {
                    param,
                    index: idx.to_affine(nd),
                    value,
                })
                .collect(),
        };
        merge_dims(&mut k);
        tile_transposes(&mut k);
        k
    }
}

/// Tile edge for [`tile_transposes`], largest first. Small on purpose: the source
/// rows of a power-of-two matrix lie a multiple of 4 KiB apart, so all the lines of a
/// tile's column fall in one L1 set; 16 of them stay near its associativity (measured
/// on W7: 8 to 64 all within noise of each other on the shared machine).
const TRANSPOSE_TILES: [usize; 2] = [16, 8];

/// Elements below which a transposing kernel is left alone (its source fits in cache,
/// so the strided walk already hits it).
const TRANSPOSE_MIN_POINTS: usize = 1 << 16;

/// Loads whose stride along the innermost dim is at least this many elements touch a
/// new cache line on every step: the walk that tiling fixes.
const TRANSPOSE_MIN_STRIDE: i64 = 16;

/// Runs an elementwise kernel that transposes (a load walks a large stride along
/// the innermost dim, where the stores are contiguous, and is contiguous along an
/// outer dim `d`) in square tiles: dims `d` and the last are split into
/// `tile × in-tile` and reordered as `[others.., d_tile, last_tile, d_in, last_in]`,
/// so each tile's source lines are reused from cache before they are evicted. A
/// reordering of parallel points with rescaled affine strides: the codegen needs
/// nothing new, the verifier still proves every access, and the values (a copy or any
/// elementwise expression of each point) are unchanged. Only sizes that the tile
/// divides are tiled; other kernels stay as they are.
fn tile_transposes(k: &mut LoopKernel) {
    let nd = k.dims.len();
    if nd < 2 || k.n_parallel != nd || k.stores.is_empty() {
        return;
    }
    if k.exprs.iter().any(|e| match &e.expr {
        Expr::LoopIndex { .. } => true,
        Expr::Load { dynamic, .. } => dynamic.is_some(),
        _ => false,
    }) {
        return;
    }
    let last = nd - 1;
    if k.stores.iter().any(|s| s.index.strides[last].abs() > 1) {
        return;
    }
    if k.dims.iter().product::<usize>() < TRANSPOSE_MIN_POINTS {
        return;
    }
    // The outer dim along which a strided load is contiguous.
    let d = k.exprs.iter().find_map(|e| match &e.expr {
        Expr::Load { index, .. } if index.strides[last].abs() >= TRANSPOSE_MIN_STRIDE => {
            (0..last).rev().find(|&d| index.strides[d].abs() == 1)
        }
        _ => None,
    });
    let Some(d) = d else { return };
    let Some(t) = TRANSPOSE_TILES.into_iter().find(|&t| {
        k.dims[d].is_multiple_of(t)
            && k.dims[last].is_multiple_of(t)
            && k.dims[d] > t
            && k.dims[last] > t
    }) else {
        return;
    };
    let others: Vec<usize> = (0..last).filter(|&i| i != d).collect();
    let remap = |a: &mut Affine| {
        let st = a.strides.clone();
        let mut out: Vec<i64> = others.iter().map(|&i| st[i]).collect();
        let ti = t as i64;
        out.extend([st[d] * ti, st[last] * ti, st[d], st[last]]);
        a.strides = out;
    };
    for e in &mut k.exprs {
        if let Expr::Load { index, .. } = &mut e.expr {
            remap(index);
        }
    }
    for s in &mut k.stores {
        remap(&mut s.index);
    }
    let mut dims: Vec<usize> = others.iter().map(|&i| k.dims[i]).collect();
    dims.extend([k.dims[d] / t, k.dims[last] / t, t, t]);
    k.n_parallel = dims.len();
    k.dims = dims;
}

/// Merges adjacent dims of one kind (both parallel or both reduction) where every
/// load and store walks them as one dim (`stride[d] == stride[d+1] * size[d+1]`) and
/// no expression reads their loop indices: `[3, 4]` contiguous becomes `[12]`, so
/// that the innermost loop is long. Row-major order, and so `ArgMax` positions over
/// the reduction dims, is unchanged.
fn merge_dims(k: &mut LoopKernel) {
    loop {
        let nd = k.dims.len();
        let indices: Vec<usize> = k
            .exprs
            .iter()
            .filter_map(|e| match e.expr {
                Expr::LoopIndex { dim } => Some(dim),
                _ => None,
            })
            .collect();
        let dynamic = k.exprs.iter().any(|e| {
            matches!(
                e.expr,
                Expr::Load {
                    dynamic: Some(_),
                    ..
                }
            )
        });
        let mergeable = |d: usize| {
            let same_kind = (d + 1 < k.n_parallel) || (d >= k.n_parallel);
            let walks = |a: &Affine| a.strides[d] == a.strides[d + 1] * k.dims[d + 1] as i64;
            same_kind
                && !dynamic
                && !indices.contains(&d)
                && !indices.contains(&(d + 1))
                && k.stores.iter().all(|s| walks(&s.index))
                && k.exprs.iter().all(|e| match &e.expr {
                    Expr::Load { index, .. } => walks(index),
                    _ => true,
                })
        };
        let Some(d) = (0..nd.saturating_sub(1)).find(|&d| mergeable(d)) else {
            return;
        };
        k.dims[d] *= k.dims[d + 1];
        k.dims.remove(d + 1);
        let drop = |a: &mut Affine| {
            a.strides[d] = a.strides[d + 1];
            a.strides.remove(d + 1);
        };
        for s in &mut k.stores {
            drop(&mut s.index);
        }
        for e in &mut k.exprs {
            match &mut e.expr {
                Expr::Load { index, .. } => drop(index),
                Expr::LoopIndex { dim } if *dim > d + 1 => *dim -= 1,
                _ => {}
            }
        }
        if d < k.n_parallel {
            k.n_parallel -= 1;
        }
    }
}

fn unreachable_stage() -> Stage {
    // Loads and loop indices get their stage where they are made.
    Stage::Outer(0)
}

/// Splits a flat index into the coordinates of a contiguous tensor of `shape`, if
/// every loop variable moves exactly one dim and no carry between dims can happen
/// over the iteration space `dims`.
fn unravel(f: &Aff, shape: &[usize], dims: &[usize]) -> Option<Vec<Aff>> {
    let strides = contiguous_strides(shape);
    let numel: usize = shape.iter().product();
    let empty = dims.contains(&0);
    if shape.is_empty() {
        return (empty || f.range(dims) == Some((0, 0))).then(Vec::new);
    }
    if numel == 0 {
        return empty.then(|| vec![Aff::constant(0); shape.len()]);
    }
    let mut out: Vec<Aff> = Vec::with_capacity(shape.len());
    let mut rest = f.off;
    if rest < 0 {
        return None;
    }
    for (d, &s) in strides.iter().enumerate() {
        let s = s as i64;
        let v = rest / s;
        rest %= s;
        out.push(Aff::constant(v));
        let _ = d;
    }
    for (k, &a) in f.c.iter().enumerate() {
        if a == 0 || dims.get(k) == Some(&1) {
            continue;
        }
        // the outermost non-1 dim whose stride divides the coefficient
        let d = (0..shape.len()).find(|&d| shape[d] != 1 && a % strides[d] as i64 == 0)?;
        let mut c = Aff::var(k);
        c.c[k] = a / strides[d] as i64;
        out[d] = out[d].scaled_add(1, &c);
    }
    if !empty {
        for (d, c) in out.iter().enumerate() {
            let (lo, hi) = c.range(dims)?;
            if lo < 0 || hi >= shape[d] as i128 {
                return None;
            }
        }
    }
    Some(out)
}

/// `c` converted to `to` exactly as the interpreter's cast (`runtime`'s
/// `interp::cast`) converts it, for the cases where that is plain: floats to
/// float32/float64/float16/bfloat16 (rounded once to nearest; float16 and bfloat16
/// through float32, as the interpreter does), bools to numbers, integers to
/// integers they fit and to floats that hold them exactly. `None`: leave the cast
/// to the kernel.
fn fold_cast(c: Const, to: DType) -> Option<Const> {
    let float = |f: f64| -> Option<Const> {
        Some(Const::Float(match to {
            DType::F64 => f,
            DType::F32 => f as f32 as f64,
            DType::F16 => half::f16::from_f32(f as f32).to_f64(),
            DType::BF16 => half::bf16::from_f32(f as f32).to_f64(),
            _ => return None,
        }))
    };
    match c {
        Const::Float(f) => float(f),
        Const::Bool(b) if to == DType::Bool => Some(Const::Bool(b)),
        Const::Bool(b) if to.integer_range().is_some() => Some(Const::Int(b as i128)),
        Const::Bool(b) => float(b as u8 as f64),
        Const::Int(i) => match to.integer_range() {
            Some((lo, hi)) if (lo..=hi).contains(&i) => Some(Const::Int(i)),
            Some(_) => None,
            // within +-2048 every float dtype holds the integer exactly
            None if i.unsigned_abs() <= 2048 => float(i as f64),
            None => None,
        },
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn constant_casts_fold_to_the_interpreter_value() {
        use super::fold_cast;
        use crate::kernel::Const;
        use crate::DType;
        // 0.1 rounds once to float32; float16 goes through float32 as the
        // interpreter does; out-of-range integers and float -> int are left alone.
        assert_eq!(
            fold_cast(Const::Float(0.1), DType::F32),
            Some(Const::Float(f64::from(0.1f32)))
        );
        assert_eq!(
            fold_cast(Const::Float(0.1), DType::F16),
            Some(Const::Float(half::f16::from_f32(0.1).to_f64()))
        );
        assert_eq!(fold_cast(Const::Int(300), DType::U8), None);
        assert_eq!(fold_cast(Const::Int(-3), DType::I8), Some(Const::Int(-3)));
        assert_eq!(fold_cast(Const::Float(1.5), DType::I32), None);
        assert_eq!(
            fold_cast(Const::Bool(true), DType::F32),
            Some(Const::Float(1.0))
        );
        assert_eq!(fold_cast(Const::Int(1 << 40), DType::F32), None);
    }

    use super::*;

    /// How each option set schedules a float and an integer matmul: extern (the
    /// host's by default, the device BLAS's with `library_float_matmul`) or a kernel.
    #[test]
    fn matmul_is_extern_or_a_kernel_as_the_options_say() {
        use crate::op::InputId;
        for (dtype, kernels, library, want) in [
            (DType::F32, false, false, "extern"),
            (DType::I32, false, false, "extern"),
            (DType::F32, true, false, "kernel"),
            (DType::I64, true, false, "kernel"),
            (DType::F32, true, true, "device's BLAS"),
            (DType::BF16, true, true, "device's BLAS"),
            (DType::I32, true, true, "kernel"),
        ] {
            let mut g = Graph::new();
            let a = g.add(Op::Input(InputId(0)), dtype, vec![1, 2, 3], &[]);
            let b = g.add(Op::Input(InputId(1)), dtype, vec![1, 3, 4], &[]);
            let m = g.add(Op::Matmul, dtype, vec![1, 2, 4], &[a, b]);
            let opts = ScheduleOptions {
                matmul_kernels: kernels,
                library_float_matmul: library,
                ..Default::default()
            };
            let text = schedule(&g, &[m], &opts).unwrap().text();
            let is_extern = text.contains("extern matmul");
            match want {
                "kernel" => assert!(!is_extern, "{dtype}:\n{text}"),
                reason => assert!(is_extern && text.contains(reason), "{dtype}:\n{text}"),
            }
        }
    }

    fn aff(off: i64, c: &[i64]) -> Aff {
        Aff { off, c: c.to_vec() }
    }

    #[test]
    fn unravel_splits_only_carry_free_indices() {
        // a transpose of a [2, 3] tensor read as [3, 2]: i0 moves dim 1, i1 dim 0
        let f = aff(0, &[1, 3]);
        assert_eq!(
            unravel(&f, &[2, 3], &[3, 2]),
            Some(vec![aff(0, &[0, 1]), aff(0, &[1])])
        );
        // a flat walk over [2, 3] as one dim of 6 crosses rows: no split
        assert_eq!(unravel(&aff(0, &[1]), &[2, 3], &[6]), None);
        // an offset inside the row, and a size-1 dim that takes no variable
        assert_eq!(
            unravel(&aff(4, &[1]), &[2, 1, 3], &[2]),
            Some(vec![aff(1, &[]), aff(0, &[]), aff(1, &[1])])
        );
        // the same walk one element further would leave the row
        assert_eq!(unravel(&aff(5, &[1]), &[2, 1, 3], &[2]), None);
        // nothing is read over an empty space
        assert!(unravel(&aff(0, &[1]), &[2, 3], &[0]).is_some());
    }

    #[test]
    fn canonical_drops_size_one_dims() {
        assert_eq!(canonical(&[1, 4, 1, 0]), vec![4, 0]);
        assert_eq!(
            Builder::identity_coords(&[1, 4, 3], 0),
            vec![aff(0, &[]), Aff::var(0), Aff::var(1)]
        );
    }
}
