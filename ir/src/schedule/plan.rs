//! The planner: the whole-graph decisions of a schedule (order, readers, extern
//! nodes, which nodes are materialized and why), and the trial loop that builds
//! every kernel and restarts when a read turns out to need a buffer.

use super::builder::whole_write_shape;
use super::{
    canonical, cheap_binary, cheap_unary, cheap_unary_param, epilogue_chain, extern_reason,
    strided_operand, windows_operand, Builder, Ctx, Epilogue, Fail, Reason, ScheduleOptions, Split,
    MAX_ROOTS, MAX_SHARED_CONE, PLANNED_DEPTH,
};
use crate::graph::{Graph, NodeId};
use crate::kernel::{BufDecl, BufId, BufKind, ExternStep, ExternView, MathMode, Schedule, Step};
use crate::op::{InputId, Op};
use crate::shape::contiguous_strides;
use hashbrown::HashMap;

/// The whole-graph decisions: order, consumers, extern nodes, materialized nodes.
pub(super) struct Planner<'g> {
    graph: &'g Graph,
    targets: Vec<NodeId>,
    fuse: bool,
    /// the math mode kernels are lowered for (see [`ScheduleOptions::math`])
    math: MathMode,
    order: Vec<NodeId>,
    /// nodes computed by extern steps, with the reason
    externs: HashMap<NodeId, String>,
    /// materialized nodes (not inputs), with the reason
    materialized: HashMap<NodeId, Reason>,
    /// identity views that extern steps read as their producer's buffer
    views_of: HashMap<NodeId, NodeId>,
    /// the strided ones among them (see [`strided_operand`])
    extern_views: HashMap<NodeId, ExternView>,
    /// the extern steps whose result is the last node of a product's epilogue:
    /// that node, the product, and the epilogue
    epilogues: HashMap<NodeId, (NodeId, Epilogue)>,
    /// the nodes reading each node, once per input slot
    readers: HashMap<NodeId, Vec<NodeId>>,
    /// inputs whose buffers the caller gave up (see [`schedule_donating`](super::schedule_donating))
    pub(super) donate: Vec<InputId>,
    /// write_views found unable to store into their base's buffer
    pub(super) unshared: hashbrown::HashSet<NodeId>,
}

impl<'g> Planner<'g> {
    pub(super) fn new(
        graph: &'g Graph,
        targets: &[NodeId],
        opts: &ScheduleOptions,
    ) -> Result<Self, String> {
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
        let mut materialized: HashMap<NodeId, Reason> = HashMap::new();
        let mut views_of: HashMap<NodeId, NodeId> = HashMap::new();
        let mut extern_views: HashMap<NodeId, ExternView> = HashMap::new();
        let mut epilogues: HashMap<NodeId, (NodeId, Epilogue)> = HashMap::new();
        // how many nodes each inlined value carries (the cost rule's size) and how deep
        // it inlines producers; stored values have no entry (they count 0)
        let mut cone: HashMap<NodeId, usize> = HashMap::new();
        let mut depth: HashMap<NodeId, usize> = HashMap::new();
        for &n in &order {
            let node = graph.node(n);
            if let Some(why) = extern_reason(graph, n, opts) {
                // Elementwise readers a product applies to its result in cache
                // (a bias, a ReLU): the last one's value is the step's result,
                // the product's own is never stored; their operands are read
                // by the step like its inputs.
                let sole_reader = |v: NodeId| match readers.get(&v).map(Vec::as_slice) {
                    Some(&[r]) if !targets.contains(&v) => Some(r),
                    _ => None,
                };
                let chain = epilogue_chain(graph, n, opts, sole_reader);
                let operands = chain.as_ref().map_or(&[][..], |c| &c.operands);
                for &i in graph.inputs(n).iter().chain(operands) {
                    let mut i = i;
                    // A reshape that is the identity of its producer's buffer (matmul's
                    // operands) is that buffer: the extern reads the producer's. So is
                    // a strided view of it that the float matmul reads in place (a
                    // transposed operand).
                    // A reshape of a strided view read by no one else (a
                    // convolution's windows) is read from the view's base in
                    // tiles, never stored whole (nor the base, where it is a
                    // zero padding read by no one else: the unpadded node is
                    // read instead).
                    let windows = windows_operand(graph, n, i, opts, |v| {
                        !targets.contains(&v) && consumers.get(&v) == Some(&1)
                    });
                    if let Some((q, v, padding)) = windows {
                        if let Some(padding) = padding {
                            // the padding (a write_view, stored as such until
                            // now) is read by these windows alone: never stored
                            if matches!(materialized.get(&padding), Some(Reason::WriteViewStored)) {
                                materialized.remove(&padding);
                            }
                        }
                        views_of.insert(i, q);
                        extern_views.insert(i, v);
                        i = q;
                    } else if let Op::View(l) = &graph.node(i).op {
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
                            .or_insert_with(|| Reason::ReadByExtern {
                                op: node.op.name(),
                                reader: n,
                            });
                    }
                }
                if let Some(chain) = chain {
                    materialized.insert(chain.result, Reason::ComputedByExtern(why.clone()));
                    externs.insert(chain.result, why);
                    epilogues.insert(chain.result, (n, chain));
                    continue;
                }
                materialized.insert(n, Reason::ComputedByExtern(why.clone()));
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
                    materialized.entry(p).or_insert(Reason::BroadcastReduction);
                }
            }
            let uses = consumers.get(&n).copied().unwrap_or(0);
            let why = match &node.op {
                Op::Input(_) => None,
                Op::Softmax { .. } => Some(Reason::SoftmaxKernel),
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
                                .or_insert(Reason::ReadByMatmulKernel(n));
                        }
                    }
                    Some(Reason::MatmulKernel)
                }
                Op::Cumsum { .. } | Op::Scan { .. } => Some(Reason::ScanKernel),
                Op::Cat { .. } => Some(Reason::CatKernels),
                Op::WriteView(_) if opts.fuse && folds_into_reader(graph, n, &readers, targets) => {
                    None
                }
                Op::WriteView(_) => Some(Reason::WriteViewStored),
                Op::View(_) if !opts.fuse => None,
                _ if !opts.fuse => Some(Reason::FusionOff),
                Op::Reduce { .. } | Op::ArgReduce { .. } if uses >= 2 => {
                    Some(Reason::ReductionReadBy(uses))
                }
                Op::Unary(u) if uses >= 2 && !cheap_unary(*u) => {
                    Some(Reason::TranscendentalReadBy(uses))
                }
                Op::UnaryParam(p) if uses >= 2 && !cheap_unary_param(*p) => {
                    Some(Reason::TranscendentalReadBy(uses))
                }
                Op::Binary(b) if uses >= 2 && !cheap_binary(*b) => {
                    Some(Reason::ExpensiveReadBy(uses))
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
                materialized.insert(n, Reason::DeeperThan(PLANNED_DEPTH));
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
                    Reason::InlinedOpsReadBy {
                        size,
                        consumers: distinct,
                    },
                );
            } else {
                cone.insert(n, size);
            }
        }
        for (i, &t) in targets.iter().enumerate() {
            if !matches!(graph.node(t).op, Op::Input(_)) {
                materialized.entry(t).or_insert(Reason::Target(i));
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
            epilogues,
            readers,
            donate: Vec::new(),
            unshared: hashbrown::HashSet::new(),
        })
    }

    /// Attempts until the materialized set is stable (see [`schedule`](super::schedule)).
    pub(super) fn run(&mut self) -> Result<Schedule, String> {
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
                        .insert(reduction, Reason::BroadcastReduction);
                }
                Err(Fail::Split(w)) => {
                    if self.materialized.contains_key(&w) {
                        return Err(format!("scheduler: {w} is already materialized"));
                    }
                    self.materialized.insert(w, Reason::WriteViewStored);
                }
                Err(Fail::Merge) => return Err("scheduler: unexpected merge failure".into()),
                Err(Fail::Error(e)) => return Err(e),
            }
        }
        Err("scheduler: materialization did not converge".into())
    }

    /// The stored nodes that the paths from `start` (a reader of a write_view's
    /// base) reach first, other than the write_view `w` itself: the kernels that
    /// read the base's old values. The write is in place only where each of them
    /// runs no later than `w`'s kernel (checked once the kernels are built).
    fn old_value_readers(&self, start: NodeId, w: NodeId) -> Vec<NodeId> {
        let mut stack = vec![start];
        let mut seen = hashbrown::HashSet::new();
        let mut found = Vec::new();
        while let Some(c) = stack.pop() {
            if c == w || !seen.insert(c) {
                continue;
            }
            if self.materialized.contains_key(&c) {
                found.push(c);
                continue;
            }
            if let Some(r) = self.readers.get(&c) {
                stack.extend(r.iter().copied());
            }
        }
        found
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
        // write_view's buffer (no copy of the storage) when every kernel reading
        // the base's old values runs no later than the write's store kernel; a
        // donated input base is that buffer (see `schedule_donating`). The store
        // kernel's own reads of the buffer are checked where it is built
        // (`lower::special_kernels`, `Builder::add_root`): `Fail::Unshare` or a
        // kernel of its own on a hazard.
        let mut into: HashMap<NodeId, NodeId> = HashMap::new();
        // For each write_view given its base's buffer: the stored nodes whose
        // kernels read the base's old values (none may run after the write's).
        let mut old_readers: HashMap<NodeId, Vec<NodeId>> = HashMap::new();
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
            {
                let readers = self.readers.get(&base).map_or(&[][..], Vec::as_slice);
                let before: Vec<NodeId> = readers
                    .iter()
                    .filter(|&&c| c != n)
                    .flat_map(|&c| self.old_value_readers(c, n))
                    .collect();
                into.insert(base, n);
                old_readers.insert(n, before);
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
        // after which step each stored node is ready (its kernels' count so far)
        let mut step_of: HashMap<NodeId, usize> = HashMap::new();
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
                close(&mut open, &mut steps, &mut step_of);
                // the node the routine runs: the product whose epilogue ends at
                // `n`, else `n`
                let (m, epilogue) = match self.epilogues.get(&n) {
                    Some((m, chain)) => (*m, Some(chain)),
                    None => (n, None),
                };
                let op_node = g.node(m);
                let operands = epilogue.map_or(&[][..], |c| &c.operands);
                let ins: Vec<NodeId> = g.inputs(m).iter().chain(operands).copied().collect();
                steps.push(Step::Extern(ExternStep {
                    node: m,
                    op: op_node.op.clone(),
                    dtype: op_node.dtype,
                    shape: op_node.shape.to_vec(),
                    inputs: ins.iter().map(|i| buf_of[i]).collect(),
                    input_shapes: ins.iter().map(|i| g.node(*i).shape.to_vec()).collect(),
                    // a view stored for another reader has a row-major buffer
                    input_views: ins
                        .iter()
                        .map(|i| match (self.extern_views.get(i), self.views_of.get(i)) {
                            (Some(v), Some(p)) if buf_of.get(i) == buf_of.get(p) => Some(v.clone()),
                            _ => None,
                        })
                        .collect(),
                    output: buf_of[&n],
                    reason: why.clone(),
                    epilogue: epilogue.map_or_else(Vec::new, |c| c.ops.clone()),
                }));
                step_of.insert(n, steps.len());
                continue;
            }
            // A write replacing its whole base is an elementwise root where it can
            // be one (see `whole_write_shape`).
            let whole = whole_write_shape(&ctx, n).filter(|_| self.fuse);
            let shape = whole.unwrap_or(&node.shape);
            match &node.op {
                Op::WriteView(_) if whole.is_some() => {}
                Op::Cat { .. }
                | Op::WriteView(_)
                | Op::Softmax { .. }
                | Op::Matmul
                | Op::Cumsum { .. }
                | Op::Scan { .. } => {
                    close(&mut open, &mut steps, &mut step_of);
                    for k in super::lower::special_kernels(&ctx, n)? {
                        steps.push(Step::Loop(k.finish(steps.len())));
                    }
                    step_of.insert(n, steps.len());
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
                    if b.parallel == canonical(shape) && roots.len() < MAX_ROOTS {
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
            close(&mut open, &mut steps, &mut step_of);
            if whole.is_some() {
                // Alone, it is a kernel of its own, or, in place where a point reads
                // the buffer elsewhere than it writes, its special kernels (their
                // hazard check unshares it).
                match Builder::start(&ctx, n) {
                    Ok(mut started) => open = started.pop().map(|b| (b, vec![n])),
                    Err(Fail::Error(e)) => return Err(Fail::Error(e)),
                    Err(_) => {
                        for k in super::lower::special_kernels(&ctx, n)? {
                            steps.push(Step::Loop(k.finish(steps.len())));
                        }
                        step_of.insert(n, steps.len());
                    }
                }
                continue;
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
                step_of.insert(n, steps.len());
            }
        }
        close(&mut open, &mut steps, &mut step_of);
        // An in-place write runs after every kernel that reads its base's old
        // values, or it stores into a buffer of its own.
        // (a stored node without a step of its own, a view sharing its producer's
        // buffer, counts as late: its readers' kernels are not known here)
        for (&w, before) in &old_readers {
            let late = |m: &NodeId| match (step_of.get(m), step_of.get(&w)) {
                (Some(r), Some(at)) => r > at,
                _ => true,
            };
            if before.iter().any(late) {
                return Err(Fail::Unshare(w));
            }
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

/// Finishes the open kernel, if any, noting the step that stores its roots.
fn close(
    open: &mut Option<(Builder, Vec<NodeId>)>,
    steps: &mut Vec<Step>,
    step_of: &mut HashMap<NodeId, usize>,
) {
    if let Some((b, roots)) = open.take() {
        steps.push(Step::Loop(b.finish(steps.len())));
        for r in roots {
            step_of.insert(r, steps.len());
        }
    }
}

/// Whether write_view `w` folds into its reader (see [`Builder::split`]): not a
/// target, read once, by an elementwise op of its own shape. Its readers then
/// never see the write as a buffer, and it costs no copy of the base.
pub(super) fn folds_into_reader(
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

/// Whether view `l` of reduction `r` spreads each result over the row it reduced,
/// innermost dim included (the shape of `r`'s input, the reduced dims broadcast,
/// the kept ones at their own positions): what a row kernel computes in place.
pub(super) fn spreads_over_rows(graph: &Graph, r: NodeId, l: &crate::layout::Layout) -> bool {
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
