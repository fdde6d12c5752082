//! One loop kernel under construction: its parameters, expressions, stages and
//! stores; the row-kernel and folded-write forms a root can take; and the
//! finished [`LoopKernel`].

use super::intern::{ExprKey, InternKey};
use super::{
    canonical, flat, fold_cast, may_fail, merge_dims, tile_transposes, unravel, Fail, Reason,
    ROW_KERNEL_MIN_ROWS, ROW_KERNEL_POINTS,
};
use crate::dtype::DType;
use crate::graph::{Graph, NodeId};
use crate::kernel::{
    Affine, BufDecl, BufId, Const, DynIndex, Expr, ExprId, ExprNode, LoopKernel, MathMode, Param,
    ParamId, Stage, StoreOp,
};
use crate::op::{BinaryOp, Op, ReduceOp};
use crate::shape::contiguous_strides;
use hashbrown::HashMap;

/// Read-only facts every kernel builder needs.
pub(crate) struct Ctx<'a> {
    pub(crate) graph: &'a Graph,
    pub(crate) materialized: &'a HashMap<NodeId, Reason>,
    pub(crate) buf_of: &'a HashMap<NodeId, BufId>,
    pub(crate) buffers: &'a [BufDecl],
    /// Fast lets composite lowerings (softmax) compute narrow floats in float32
    pub(crate) math: MathMode,
}

/// A write_view folded into a kernel's root (see [`Builder::split`]).
pub(super) struct Split {
    /// the write_view
    pub(super) write: NodeId,
    /// the point at which the root reads it (the root's own)
    pub(super) at: Vec<Affine>,
    /// over the written region: the written values' point (the kernel's loop
    /// variables); `None` over every point, where the base's values stand in
    pub(super) region: Option<Vec<Affine>>,
}

/// Whether two coordinate lists name the same point.
pub(super) fn same_point(a: &[Affine], b: &[Affine]) -> bool {
    a.len() == b.len()
        && a.iter().zip(b).all(|(x, y)| {
            x.offset == y.offset
                && (0..x.strides.len().max(y.strides.len())).all(|d| x.coef(d) == y.coef(d))
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
    pub(super) exprs: Vec<ExprNode>,
    stores: Vec<(usize, Affine, ExprId)>,
    /// expression hash-consing (expression, dtype and stage)
    interned: HashMap<InternKey, ExprId>,
    /// (node, coords, inner phase) → value
    pub(super) memo: HashMap<(NodeId, Vec<Affine>, Option<u32>), ExprId>,
    /// structural phase level of nodes (see [`Builder::level`])
    levels: HashMap<NodeId, u32>,
    /// the affine index of each Load expr (patched to full width at the end)
    load_index: HashMap<u32, Affine>,
    nodes: Vec<NodeId>,
    /// the members of `nodes`
    noted: hashbrown::HashSet<NodeId>,
    names: Vec<String>,
    /// current inlining depth of [`Builder::gen`]
    pub(super) depth: usize,
    /// a single root being built by [`Builder::start`]: it may still take another
    /// form (a row kernel, [`Fail::Rows`]; a split around a write, [`Fail::Split`])
    alone: bool,
    /// the write_view folded into this kernel's root (see [`Builder::split`])
    pub(super) split: Option<Split>,
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
    pub(crate) fn identity_coords(shape: &[usize], first_dim: usize) -> Vec<Affine> {
        let mut k = first_dim;
        shape
            .iter()
            .map(|&s| {
                if s == 1 {
                    Affine::constant(0)
                } else {
                    k += 1;
                    Affine::var(k - 1)
                }
            })
            .collect()
    }

    /// A kernel built from `roots`, joined in order (what the scheduler built when
    /// each of them joined): the kernel of the first one, then each further one
    /// added to it.
    pub(super) fn replay(ctx: &Ctx, roots: &[NodeId]) -> Result<Builder, Fail> {
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
    /// reads a write_view folded into it ([`Builder::split`]). A whole write
    /// ([`whole_write_shape`]) is a plain root over its values' shape, never a row
    /// or split form; `Fail::Merge` where a point of it reads its own buffer
    /// elsewhere than it writes (the planner then builds its special kernels).
    pub(super) fn start(ctx: &Ctx, n: NodeId) -> Result<Vec<Builder>, Fail> {
        if let Some(shape) = whole_write_shape(ctx, n) {
            let mut b = Builder::new(canonical(shape), vec![n]);
            return b.add_root(ctx, n).map(|()| vec![b]);
        }
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
        let unfit = |why: &'static str| Fail::Materialize(w, Reason::WriteViewUnfolded(why));
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
            .fold(Affine::constant(layout.offset as i64), |acc, (c, &s)| {
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
    pub(super) fn folded_write(
        &mut self,
        ctx: &Ctx,
        w: NodeId,
        coords: &[Affine],
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
                Reason::WriteViewUnfolded("read at other points than its reader's"),
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
        let coords: Vec<Affine> = node
            .shape
            .iter()
            .map(|&s| match s {
                1 => Affine::constant(0),
                _ => Affine::var(*next.next().expect("a var per non-1 dim")),
            })
            .collect();
        let last = b.level(ctx, n);
        let v = b.gen_by_op(ctx, n, &coords, Some(last))?;
        let v = b.lift(v, last)?;
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
    pub(crate) fn row_dims(&self, coords: &[Affine], red: &[usize]) -> Option<Vec<usize>> {
        let points: usize = self.parallel.iter().product();
        let rows = points / red.iter().product::<usize>().max(1);
        let large = points > ROW_KERNEL_POINTS && rows < ROW_KERNEL_MIN_ROWS;
        if !self.alone || self.red.is_some() || self.roots.len() != 1 || large {
            return None;
        }
        let np = self.n_parallel();
        let used = self.parallel_vars_read(coords)?;
        let dims: Vec<usize> = (0..np).filter(|&d| !used[d]).collect();
        let sizes: Vec<usize> = dims.iter().map(|&d| self.parallel[d]).collect();
        (dims.len() < np && dims.last() == Some(&(np - 1)) && sizes == red).then_some(dims)
    }

    /// Computes root `n` and stores it into its buffer.
    pub(super) fn add_root(&mut self, ctx: &Ctx, n: NodeId) -> Result<(), Fail> {
        let node = ctx.graph.node(n);
        if let Some(shape) = whole_write_shape(ctx, n) {
            return self.add_whole_write(ctx, n, shape);
        }
        let coords = Self::identity_coords(&node.shape, 0);
        let idx = flat(&node.shape, &coords);
        let v = self.gen_by_op(ctx, n, &coords, None)?;
        self.memo.insert((n, coords.clone(), None), v);
        let p = self.param(ctx.buf_of[&n], ctx, true);
        self.stores.push((p, idx, v));
        self.note_node(ctx, n);
        Ok(())
    }

    /// Root `n`, a write_view replacing every element of its base, over its
    /// values' `shape` (see [`whole_write_shape`]). In the base's buffer, its store
    /// is sound where every point of the kernel reads and writes the buffer at its
    /// own element only.
    fn add_whole_write(&mut self, ctx: &Ctx, n: NodeId, shape: &[usize]) -> Result<(), Fail> {
        let coords = Self::identity_coords(shape, 0);
        let idx = flat(shape, &coords);
        let v = self.gen(ctx, ctx.graph.inputs(n)[1], &coords, None)?;
        let buf = ctx.buf_of[&n];
        let nd = self.dims().len();
        let own_point = self.loads_only_at(buf, &idx)
            && self
                .stores
                .iter()
                .all(|(p, at, _)| self.params[*p].buf != buf || at.over(nd) == idx.over(nd));
        // A store is done in its value's stage: after every load and store of the
        // buffer here, or a load would see the new value (a reduction's, in a
        // later phase) or an earlier write would land last.
        let stage = self.exprs[v.0 as usize].stage;
        if !own_point
            || self
                .last_use(buf)
                .is_some_and(|last| order(last) > order(stage))
        {
            return Err(Fail::Merge);
        }
        // its readers find it at its own coordinates (the storage's, flat)
        if let Some(own) = unravel(&idx, &ctx.graph.node(n).shape, &self.dims()) {
            self.memo.insert((n, own, None), v);
        }
        let p = self.param(buf, ctx, true);
        self.stores.push((p, idx, v));
        self.note_node(ctx, n);
        Ok(())
    }

    /// The latest stage in which this kernel loads or stores `buf`.
    fn last_use(&self, buf: BufId) -> Option<Stage> {
        let p = self.params.iter().position(|q| q.buf == buf)?;
        let loads = self.exprs.iter().filter_map(|e| match e.expr {
            Expr::Load { param, .. } if param.index() == p => Some(e.stage),
            _ => None,
        });
        let stores = self
            .stores
            .iter()
            .filter(|(q, _, _)| *q == p)
            .map(|(_, _, v)| self.exprs[v.0 as usize].stage);
        loads.chain(stores).max_by_key(|&s| order(s))
    }

    pub(crate) fn store(&mut self, param: usize, idx: Affine, v: ExprId) {
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
    pub(crate) fn loads_only_at(&self, buf: BufId, idx: &Affine) -> bool {
        let Some(p) = self.params.iter().position(|q| q.buf == buf) else {
            return true;
        };
        let nd = self.dims().len();
        let want = idx.over(nd);
        self.exprs.iter().enumerate().all(|(i, e)| match &e.expr {
            Expr::Load { param, dynamic, .. } if param.index() == p => {
                dynamic.is_none()
                    && self
                        .load_index
                        .get(&(i as u32))
                        .is_some_and(|a| a.over(nd) == want)
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
    pub(super) fn is_inner(&self, a: &Affine) -> bool {
        !a.ignores_from(self.n_parallel())
    }

    /// Whether a reduction dim is empty: then even a read the reduction loops do not
    /// index stays inside them (an outer read would run, and read an operand that is
    /// broadcast along the empty dim, from an empty buffer).
    pub(super) fn empty_reduction(&self) -> bool {
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
        let key = InternKey::Expr {
            expr: ExprKey::of(&expr),
            dtype,
            stage,
        };
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
        idx: Affine,
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
        idx: Affine,
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
    fn push_load(
        &mut self,
        p: usize,
        idx: Affine,
        dynamic: Option<DynIndex>,
        stage: Stage,
    ) -> ExprId {
        crate::work::add(1);
        let dtype = self.params[p].dtype;
        let key = InternKey::LoadAt {
            param: p,
            index: idx.clone(),
            dynamic: dynamic.clone(),
            stage,
        };
        if let Some(&e) = self.interned.get(&key) {
            return e;
        }
        let id = ExprId(self.exprs.len() as u32);
        self.exprs.push(ExprNode {
            expr: Expr::Load {
                param: ParamId(p as u32),
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
        Err(Fail::Materialize(x, Reason::DataDependentIndices))
    }

    /// A constant of `dtype`.
    pub(crate) fn constant(&mut self, c: Const, dtype: DType) -> ExprId {
        self.push(Expr::Const(c), dtype, Stage::Outer(0))
    }

    /// The value of an affine index as an `int64` expression.
    pub(crate) fn affine_value(&mut self, a: &Affine, phase: Option<u32>) -> Result<ExprId, Fail> {
        let mut acc = self.constant(Const::Int(a.offset as i128), DType::I64);
        for d in 0..a.strides.len() {
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
                Op::Reduce { op, .. } => inner + reduce_phases(*op),
                Op::ArgReduce { .. } => inner + 1,
                _ => inner,
            };
            self.levels.insert(m, l);
        }
        self.levels.get(&n).copied().unwrap_or(0)
    }

    /// Which parallel dims `coords` read, when each coordinate is a constant or a
    /// distinct parallel loop variable with coefficient ±1 (`None` otherwise).
    fn parallel_vars_read(&self, coords: &[Affine]) -> Option<Vec<bool>> {
        let np = self.n_parallel();
        let mut used = vec![false; np];
        for c in coords {
            let vars: Vec<usize> = (0..c.strides.len()).filter(|&d| c.coef(d) != 0).collect();
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
    pub(crate) fn once_per_point(&self, coords: &[Affine]) -> bool {
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
                *index = idx.over(nd);
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
                    param: ParamId(param as u32),
                    index: idx.over(nd),
                    value,
                })
                .collect(),
        };
        merge_dims(&mut k);
        tile_transposes(&mut k);
        k
    }
}

/// Where a stage runs in a point: `Outer(0)`, phase 0's loop, `Outer(1)`, ...
fn order(stage: Stage) -> u32 {
    match stage {
        Stage::Outer(k) => 2 * k,
        Stage::Inner(k) => 2 * k + 1,
    }
}

pub(super) fn unreachable_stage() -> Stage {
    // Loads and loop indices get their stage where they are made.
    Stage::Outer(0)
}

/// How many phases a reduction needs (two-pass ones need two).
pub(crate) fn reduce_phases(op: ReduceOp) -> u32 {
    match op {
        ReduceOp::Var { .. } | ReduceOp::Std { .. } | ReduceOp::LogSumExp => 2,
        _ => 1,
    }
}

impl Builder {
    /// `x` as an inner value of phase `k`: `where(i == i, x, x)` over the first
    /// reduction index when `x` itself is outer.
    pub(super) fn lift(&mut self, x: ExprId, k: u32) -> Result<ExprId, Fail> {
        if self.is_inner_expr(x) {
            return Ok(x);
        }
        let i = self.reduction_index(k);
        let t = self.emit(
            Expr::Binary {
                op: BinaryOp::Eq,
                a: i,
                b: i,
            },
            DType::Bool,
            Some(k),
        )?;
        let dt = self.dtype_of(x);
        self.emit(
            Expr::Where {
                cond: t,
                a: x,
                b: x,
            },
            dt,
            Some(k),
        )
    }
}

/// The shape of the values of write_view `n` where they replace every element of
/// its base (an optimizer's `p.copy_(new)`): nothing of the base survives, so it
/// is an elementwise root over that shape, which joins the kernels of its
/// iteration space like any other (no copy of the base first), in the base's
/// buffer where the write is in place. The base is a buffer (or a view of one):
/// a base computed inline would not be computed at all, and its errors (an
/// integer division by zero) would be lost.
pub(super) fn whole_write_shape<'c>(ctx: &Ctx<'c>, n: NodeId) -> Option<&'c [usize]> {
    let node = ctx.graph.node(n);
    let Op::WriteView(layout) = &node.op else {
        return None;
    };
    let mut base = ctx.graph.inputs(n)[0];
    while matches!(ctx.graph.node(base).op, Op::View(_)) && !ctx.materialized.contains_key(&base) {
        base = ctx.graph.inputs(base)[0];
    }
    let stored =
        matches!(ctx.graph.node(base).op, Op::Input(_)) || ctx.materialized.contains_key(&base);
    (stored && layout.is_identity_of(node.numel())).then_some(&layout.shape[..])
}
